/**
 * `npm run clusters -- <command>`: starts, shows and removes local clusters.
 *
 *   up NAME... [--lab L] [--nodes N] [--host-agent] [--profile open|gateway-only|nat] [--behind-nat NAME]...
 *              [--pod-cidr NAME=CIDR]... [--service-cidr NAME=CIDR]... [--forward tcp:PORT]...
 *              [--load-balancer metallb|none]
 *   status [--lab L]
 *   profile open|gateway-only [--lab L]
 *   pod-address CLUSTER ADDRESS [--lab L]
 *   ping CLUSTER SOURCE TARGET [--lab L]
 *   address CLUSTER [--lab L]
 *   agent-image
 *   nodes [CLUSTER...] [--lab L]
 *   schedule-probe CLUSTER POD [--lab L]
 *   podtool CLUSTER [--node N] [--lab L]
 *   pod-call CLUSTER ADDRESS [--node N] [--lab L]
 *   restart CLUSTER [COMPONENT] [--lab L]
 *   down [--lab L | --all]
 */
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { runIn } from "../host/exec.js";
import { DEFAULT_AGENT_IMAGE } from "../core/cluster/agent-image.js";
import { PROFILES, type ConnectivityProfile, type PortForward } from "./connectivity.js";
import { describeNodes, scheduleProbePod } from "./inspect.js";
import { podtoolFrom, runPodtool } from "./pods.js";
import {
  addPodAddress,
  clusterOf,
  downLab,
  labHealth,
  listLabs,
  readLab,
  setProfile,
  upLab,
  type LabState,
} from "./lab.js";
import { parseComponent, restartComponents } from "./restart.js";
import {
  KUBE_PROXY_MODES,
  LOAD_BALANCERS,
  POD_SECURITY_LEVELS,
  CNIS,
  type CniKind,
  type KubeProxyMode,
  type LoadBalancerKind,
  type PodSecurityLevel,
} from "./plan.js";
import { COMPONENTS } from "./supervisor.js";
import { labReleases, patchReleaseOf } from "./releases.js";
import { LAB_INTERFACE } from "./load-balancer.js";
import { addNode } from "./add-node.js";

const USAGE = `usage: npm run clusters -- <command> [options]
  up NAME... [--lab L] [--nodes N] [--host-agent] [--profile ${PROFILES.join("|")}] [--behind-nat NAME]...
             [--pod-cidr NAME=CIDR]... [--service-cidr NAME=CIDR]... [--forward tcp:PORT]...
             [--load-balancer ${LOAD_BALANCERS.join("|")}] [--pod-security ${POD_SECURITY_LEVELS.join("|")}]
             [--kube-proxy ${KUBE_PROXY_MODES.join("|")}] [--kubernetes [NAME=]MINOR]... [--cni [NAME=]${CNIS.join("|")}]...
  status [--lab L]
  profile open|gateway-only [--lab L]
  pod-address CLUSTER ADDRESS [--lab L]
  ping CLUSTER SOURCE TARGET [--lab L]  pings TARGET from pod address SOURCE of CLUSTER
  address CLUSTER [--lab L]             the address other clusters reach CLUSTER (and its gateway) at
  agent-image                           the agent image \`up\` loads into the nodes, which a Cluster deploys
  nodes [CLUSTER...] [--lab L]          nodes of the clusters, virtual ones included
  add-node CLUSTER [--lab L]            one more worker node in the running cluster (as a node pool scales out)
  schedule-probe CLUSTER POD [--lab L]  a pod only a virtual node takes; prints where it is bound
  podtool CLUSTER [--node N] [--lab L]  runs an echo pod on node N (default 1); prints its address
  pod-call CLUSTER ADDRESS [--node N] [--lab L]
                                        from that pod, a TCP call to ADDRESS:8080; prints who answered
  restart CLUSTER [COMPONENT] [--lab L] restarts ${COMPONENTS.join(", ")}
                                        (default: all) and waits until the cluster is ready again
  down [--lab L | --all]
\`up\` runs no agent: a Cluster deploys it as pods, from the image it loads into every node, as in
any cluster. --host-agent runs it as a host process in each cluster's namespace instead (for tests
that drive the agent process itself). Each cluster gets a load balancer (MetalLB in L2 mode): a
Service of type LoadBalancer gets an address of the cluster's own range of the lab subnet, which
\`status\` shows; --load-balancer none leaves such Services pending. --pod-security makes every
cluster's API server enforce that Pod Security Standard in each namespace that sets none
(kube-system exempt), as hardened clusters do. --kube-proxy nftables runs every node's kube-proxy
in nftables mode instead of iptables. --kubernetes 1.37 runs every cluster's control plane and
nodes on that supported release (a=1.37: only cluster a's) instead of the default; a release other
than the default is built once by scripts/toolchain.sh kubernetes 1.37. --cni flannel runs Flannel
(VXLAN, as its own manifest deploys it) as every cluster's CNI (a=flannel: only cluster a's) instead
of the bridge plugin with static routes.
The lab defaults to "demo"; state lives in $LIQO_LAB_ROOT (default /tmp/pulumi-liqo-labs).`;

function pairs(values: readonly string[] | undefined, flag: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const value of values ?? []) {
    const [key, cidr] = value.split("=");
    if (!key || !cidr) throw new Error(`${flag} ${value}: expected NAME=CIDR`);
    map.set(key, cidr);
  }
  return map;
}

/**
 * The value each named cluster asks for of a per-cluster `flag`: `--flag VALUE` for all of them,
 * `NAME=VALUE` for one (which wins); each value checked by `check`, which throws naming what it expects.
 */
function perCluster(
  flag: string,
  values: readonly string[] | undefined,
  clusters: readonly string[],
  check: (value: string) => void,
): Map<string, string> {
  const chosen = new Map<string, string>();
  for (const value of values ?? []) {
    const [name, setting] = value.includes("=") ? value.split("=") : [undefined, value];
    if (name !== undefined && !clusters.includes(name))
      throw new Error(`${flag} ${value}: no cluster ${name} in this \`up\` (${clusters.join(", ")})`);
    check(setting ?? "");
    for (const cluster of name === undefined ? clusters : [name])
      if (name !== undefined || !chosen.has(cluster)) chosen.set(cluster, setting!);
  }
  return chosen;
}

function forwards(values: readonly string[] | undefined): PortForward[] | undefined {
  return values?.map((value) => {
    const [protocol, port] = value.split(":");
    if ((protocol !== "tcp" && protocol !== "udp") || !/^\d+$/.test(port ?? ""))
      throw new Error(`--forward ${value}: expected tcp:PORT or udp:PORT`);
    return { protocol, port: Number(port) };
  });
}

function requireLab(name: string): LabState {
  const state = readLab(name);
  if (!state)
    throw new Error(
      `no lab "${name}" is up (labs: ${listLabs().join(", ") || "none"}); start one with: npm run clusters -- up a b`,
    );
  return state;
}

function show(state: LabState): void {
  console.log(`lab ${state.name}: profile ${state.profile}, bridge ${state.bridge}, host address ${state.hostAddress}`);
  for (const health of labHealth(state)) {
    const cluster = state.clusters.find((c) => c.name === health.name)!;
    const down = health.processes.filter((p) => !p.running).map((p) => p.name);
    console.log(
      `  ${cluster.name}: ${health.apiServerUrl}  auth ${cluster.authUrl}  pods ${cluster.podCidr}  services ` +
        `${cluster.serviceCidr}${cluster.routerNetns ? "  (behind NAT)" : ""}`,
    );
    console.log(
      `     netns ${cluster.netns}  ${
        down.length
          ? `NOT RUNNING: ${down.join(", " + "")}`
          : `processes: ${health.processes.map((p) => `${p.name}[${p.pid}]`).join(" ")}`
      }`,
    );
    for (const node of cluster.nodes ?? [])
      console.log(`     node ${node.name}: ${node.address}, pods ${node.podCidr}, netns ${node.netns}`);
    if (cluster.loadBalancerAddresses)
      console.log(
        `     load balancer: MetalLB (L2), addresses ${cluster.loadBalancerAddresses} on ${LAB_INTERFACE} of ${cluster.nodes[0]?.name}`,
      );
    console.log(`     export KUBECONFIG=${cluster.kubeconfig}`);
  }
}

/** The node number of `--node` (default 1). */
function nodeIndex(value: string | undefined): number {
  if (value === undefined) return 1;
  if (!/^[1-9]\d*$/.test(value)) throw new Error(`--node ${value}: expected a node number, 1 or more`);
  return Number(value);
}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      lab: { type: "string", default: "demo" },
      profile: { type: "string" },
      "behind-nat": { type: "string", multiple: true },
      "pod-cidr": { type: "string", multiple: true },
      "service-cidr": { type: "string", multiple: true },
      forward: { type: "string", multiple: true },
      nodes: { type: "string" },
      "host-agent": { type: "boolean" },
      "load-balancer": { type: "string" },
      "pod-security": { type: "string" },
      "kube-proxy": { type: "string" },
      kubernetes: { type: "string", multiple: true },
      cni: { type: "string", multiple: true },
      node: { type: "string" },
      all: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [command, ...args] = positionals;
  if (values.help || !command) return void console.log(USAGE);
  const lab = values.lab!;
  const profile = values.profile as ConnectivityProfile | undefined;
  if (profile && !PROFILES.includes(profile))
    throw new Error(`--profile ${profile}: expected one of ${PROFILES.join(", ")}`);

  switch (command) {
    case "up": {
      if (args.length === 0) throw new Error("up: name at least one cluster, e.g. `up a b`");
      const podCidrs = pairs(values["pod-cidr"], "--pod-cidr");
      const serviceCidrs = pairs(values["service-cidr"], "--service-cidr");
      const podSecurity = values["pod-security"];
      if (podSecurity !== undefined && !POD_SECURITY_LEVELS.includes(podSecurity as PodSecurityLevel))
        throw new Error(`--pod-security ${podSecurity}: expected one of ${POD_SECURITY_LEVELS.join(", ")}`);
      const kubeProxyMode = values["kube-proxy"];
      if (kubeProxyMode !== undefined && !KUBE_PROXY_MODES.includes(kubeProxyMode as KubeProxyMode))
        throw new Error(`--kube-proxy ${kubeProxyMode}: expected one of ${KUBE_PROXY_MODES.join(", ")}`);
      const supported = labReleases();
      const releases = perCluster("--kubernetes", values.kubernetes, args, (minor) => patchReleaseOf(minor, supported));
      const cnis = perCluster("--cni", values.cni, args, (cni) => {
        if (!CNIS.includes(cni as CniKind)) throw new Error(`--cni ${cni}: expected one of ${CNIS.join(", ")}`);
      });
      const requests = args.map((name) => ({
        name,
        podCidr: podCidrs.get(name),
        serviceCidr: serviceCidrs.get(name),
        ...(podSecurity ? { podSecurity: podSecurity as PodSecurityLevel } : {}),
        ...(kubeProxyMode ? { kubeProxyMode: kubeProxyMode as KubeProxyMode } : {}),
        ...(releases.has(name) ? { kubernetes: releases.get(name)! } : {}),
        ...(cnis.has(name) ? { cni: cnis.get(name) as CniKind } : {}),
      }));
      const natForwards = forwards(values.forward);
      const loadBalancer = values["load-balancer"] as LoadBalancerKind | undefined;
      if (loadBalancer !== undefined && !LOAD_BALANCERS.includes(loadBalancer))
        throw new Error(`--load-balancer ${loadBalancer}: expected one of ${LOAD_BALANCERS.join(", ")}`);
      if (values.nodes !== undefined && !/^\d+$/.test(values.nodes))
        throw new Error(`--nodes ${values.nodes}: expected a whole number of worker nodes per cluster`);
      const state = await upLab(requests, {
        name: lab,
        ...(values.nodes !== undefined ? { nodes: Number(values.nodes) } : {}),
        // As in any cluster: no agent until a Cluster deploys it from the image the nodes hold.
        hostAgent: values["host-agent"] === true,
        ...(profile ? { profile } : {}),
        ...(values["behind-nat"] ? { behindNat: values["behind-nat"] } : {}),
        ...(natForwards ? { natForwards } : {}),
        ...(loadBalancer ? { loadBalancer } : {}),
      });
      show(state);
      return;
    }
    case "status": {
      const names = values.lab && argv.includes("--lab") ? [lab] : listLabs();
      if (names.length === 0) return void console.log("no lab is up");
      for (const name of names) show(requireLab(name));
      return;
    }
    case "profile": {
      const wanted = args[0] as ConnectivityProfile;
      if (!PROFILES.includes(wanted)) throw new Error(`profile: expected one of ${PROFILES.join(", ")}`);
      const state = requireLab(lab);
      await setProfile(state, wanted);
      return void console.log(`lab ${lab}: profile ${wanted}`);
    }
    case "pod-address": {
      const [cluster, address] = args;
      if (!cluster || !address) throw new Error("pod-address: expected CLUSTER ADDRESS");
      await addPodAddress(requireLab(lab), cluster, address);
      return void console.log(`cluster ${cluster}: pod address ${address} added`);
    }
    case "ping": {
      const [cluster, source, target] = args;
      if (!cluster || !source || !target) throw new Error("ping: expected CLUSTER SOURCE TARGET");
      return void console.log(
        await runIn(clusterOf(requireLab(lab), cluster).netns, "ping", [
          "-I",
          source,
          "-c",
          "3",
          "-i",
          "0.2",
          "-W",
          "2",
          target,
        ]),
      );
    }
    case "agent-image":
      return void console.log(DEFAULT_AGENT_IMAGE);
    case "address": {
      const [cluster] = args;
      if (!cluster) throw new Error("address: expected CLUSTER");
      return void console.log(clusterOf(requireLab(lab), cluster).publicAddress);
    }
    case "add-node": {
      const [cluster] = args;
      if (!cluster || args.length !== 1) throw new Error("add-node: expected CLUSTER");
      const state = requireLab(lab);
      const node = await addNode(state.name, dirname(state.dir), cluster, (line) => console.error(line));
      return void console.log(`cluster ${cluster}: node ${node.name} Ready at ${node.address}, pods ${node.podCidr}`);
    }
    case "nodes": {
      const state = requireLab(lab);
      const clusters = args.length ? args.map((name) => clusterOf(state, name)) : state.clusters;
      for (const cluster of clusters) for (const line of await describeNodes(cluster)) console.log(line);
      return;
    }
    case "schedule-probe": {
      const [cluster, pod] = args;
      if (!cluster || !pod) throw new Error("schedule-probe: expected CLUSTER POD");
      const node = await scheduleProbePod(clusterOf(requireLab(lab), cluster), pod);
      return void console.log(`cluster ${cluster}: pod default/${pod} scheduled onto ${node}`);
    }
    case "podtool": {
      const [cluster] = args;
      if (!cluster) throw new Error("podtool: expected CLUSTER");
      const pod = await runPodtool(clusterOf(requireLab(lab), cluster), nodeIndex(values.node));
      return void console.log(
        `cluster ${cluster}: pod ${pod.metadata?.namespace}/${pod.metadata?.name} on ${pod.spec?.nodeName} at ${pod.status?.podIP}`,
      );
    }
    case "pod-call": {
      const [cluster, address] = args;
      if (!cluster || !address) throw new Error("pod-call: expected CLUSTER ADDRESS");
      const state = clusterOf(requireLab(lab), cluster);
      return void console.log((await podtoolFrom(state, nodeIndex(values.node), "tcp", `${address}:8080`)).trim());
    }
    case "restart": {
      const [cluster, component] = args;
      if (!cluster || args.length > 2)
        throw new Error(`restart: expected CLUSTER [COMPONENT] (components: ${COMPONENTS.join(", ")})`);
      const state = requireLab(lab);
      const lines = await restartComponents(
        state,
        cluster,
        component ? [parseComponent(component, clusterOf(state, cluster))] : undefined,
        (line) => console.error(line),
      );
      for (const line of lines) console.log(line);
      return;
    }
    case "down": {
      const names = values.all ? listLabs() : [lab];
      for (const name of names) {
        const removed = await downLab(name);
        console.log(removed.length ? `lab ${name}: removed ${removed.join(", ")}` : `lab ${name}: nothing to remove`);
      }
      return;
    }
    default:
      throw new Error(`unknown command "${command}"\n${USAGE}`);
  }
}

main(process.argv.slice(2)).catch((error: Error) => {
  console.error(`error: ${error.message}`);
  process.exit(1);
});
