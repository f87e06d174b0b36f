/**
 * A lab: N local clusters on one machine, each a network namespace on a shared bridge with its own
 * address, running a real control plane. The lab's state file records every name and PID it
 * creates *before* creating it, so `downLab` removes exactly what a run made, even one that
 * crashed half-way. Once up, each cluster has a supervisor (supervisor.ts) that starts again any
 * of its processes that exits, as a host's service manager would; `downLab` stops it first.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cidr } from "../core/net/cidr.js";
import {
  applyProfile,
  configureNatRouter,
  profileRules,
  type ConnectivityProfile,
  type PortForward,
  type PortRange,
} from "./connectivity.js";
import {
  API_SERVER_PORT,
  AUTH_SERVICE_PORT,
  controlPlaneFiles,
  startApiServer,
  startAgent,
  startControllers,
  waitForApiServer,
  waitForControllers,
  writeControlPlaneFiles,
  type ControlPlaneSpec,
  type OnStarted,
} from "./control-plane.js";
import { readLabFile, saveLab, stateFile, updateLab, type ClusterState, type LabState } from "./state.js";
import { startSupervisor } from "./supervisor.js";
import { run } from "../host/exec.js";
import { lockFile } from "../host/file-lock.js";
import {
  addPodAddress as addAddressToPods,
  attachToBridge,
  createBridge,
  createNamespace,
  createPodInterface,
  deleteLink,
  deleteNamespace,
  linkExists,
  linkNamespaces,
  namespaceExists,
  namespacePids,
} from "./netns.js";
import {
  isRunning,
  pidsUsing,
  recordOf,
  startInNamespace,
  stopProcess,
  type ProcessRecord,
} from "../host/processes.js";
import { poll } from "../core/wait/poll.js";
import { NODE_PORT_RANGES, planLab, type ClusterRequest, type LoadBalancerKind, type PlannedCluster } from "./plan.js";
import { importImages, nodeBinaries, startNodeProcesses, teardownNode, waitForNodes, writeNodeFiles } from "./node.js";
import { releaseCommands } from "./releases.js";
import { createNodeNetwork } from "./node-network.js";
import { raiseHostLimits } from "./host-limits.js";
import { nodeImages } from "./node-images.js";
import { clusterDnsAddress, deployClusterDns } from "./cluster-dns.js";
import { deployMetricsServer } from "./metrics-server.js";
import { deployLocalPathStorage } from "./local-path-storage.js";
import { declareClusterConfig } from "./cluster-config.js";
import { deployLoadBalancer } from "./load-balancer.js";
import { deployFlannel, flannelRunDir, flannelSubnetFile } from "./flannel.js";
import type { NodeBinaries, NodeConfigInputs } from "./node-config.js";
import type { PlannedNode } from "./node-plan.js";
import { flannelHome } from "../image/build.js";

export type { ClusterRequest } from "./plan.js";
export type { ClusterState, LabState } from "./state.js";

/** The load balancer a lab's clusters get unless told otherwise. */
export const DEFAULT_LOAD_BALANCER: LoadBalancerKind = "metallb";

/** Where lab state lives unless told otherwise. */
export const DEFAULT_LAB_ROOT = process.env["LIQO_LAB_ROOT"] ?? "/tmp/pulumi-liqo-labs";

/** How a lab is brought up. */
export interface LabOptions {
  /** Lab name: 1 to 8 lowercase letters or digits; it prefixes every name the lab creates. @default "demo" */
  readonly name?: string;
  /** Directory holding every lab's state. @default $LIQO_LAB_ROOT or /tmp/pulumi-liqo-labs */
  readonly root?: string;
  /** Connectivity profile between the clusters. @default "open" */
  readonly profile?: ConnectivityProfile;
  /** Under `nat`: the clusters behind NAT. @default the last cluster */
  readonly behindNat?: readonly string[];
  /** Under `nat`: ports the NAT routers forward. @default the API server port (tcp 6443) */
  readonly natForwards?: readonly PortForward[];
  /** UDP ports left open for gateways under `gateway-only`. @default 51820-51839 */
  readonly gatewayPorts?: PortRange;
  /** The node lifecycle controller's grace period. @default 40 */
  readonly nodeMonitorGracePeriodSeconds?: number;
  /** The wireguard-go executable the agents' gateways run (tests: one that fails). @default "wireguard-go" from PATH */
  readonly wireguardGo?: string;
  /**
   * Whether the agents also run the gateway in the cluster's namespace. False for a test that runs
   * the gateway role itself there, as the gateway pod would. @default true
   */
  readonly hostGateway?: boolean;
  /**
   * Whether each cluster also runs the agent as a host process in its namespace, for the few tests
   * that drive the agent process itself (its environment, its log, a gateway role they run
   * themselves). By default it runs none: the agent image is built if out of date and loaded into
   * the nodes, and a `Cluster` deploys the agent as pods, as in any other cluster. @default false
   */
  readonly hostAgent?: boolean;
  /** Extra environment of every cluster's agent (e.g. `LIQO_IDENTITY_LIFETIME_SECONDS` for short-lived identities). */
  readonly agentEnvironment?: Readonly<Record<string, string>>;
  /** Worker nodes per cluster (node 1 in the cluster's namespace, beside the control plane). @default 1 */
  readonly nodes?: number;
  /**
   * The clusters' load balancer: `metallb` (MetalLB in L2 mode, each cluster with its own range of
   * the lab subnet, load-balancer.ts), or `none` (Services of type LoadBalancer stay pending).
   * @default DEFAULT_LOAD_BALANCER
   */
  readonly loadBalancer?: LoadBalancerKind;
  /** How long each cluster may take to become ready. @default 180000 */
  readonly readyTimeoutMs?: number;
  /** Receives progress lines. @default writes to stderr */
  readonly log?: (line: string) => void;
}

const defaultLog = (line: string): void => void process.stderr.write(`${line}\n`);

/** Reads lab `name`'s state, or undefined if there is none. */
export function readLab(name: string, root = DEFAULT_LAB_ROOT): LabState | undefined {
  return readLabFile(join(root, name));
}

/** Names of the labs that have state under `root`. */
export function listLabs(root = DEFAULT_LAB_ROOT): string[] {
  return existsSync(root) ? readdirSync(root).filter((name) => existsSync(stateFile(join(root, name)))) : [];
}

/** Looks a cluster up by name, with an error that lists the lab's clusters. */
export function clusterOf(state: LabState, name: string): ClusterState {
  const cluster = state.clusters.find((c) => c.name === name);
  if (!cluster)
    throw new Error(
      `lab ${state.name} has no cluster "${name}" (it has: ${state.clusters.map((c) => c.name).join(", ")})`,
    );
  return cluster;
}

/**
 * The machine-wide lock on choosing a lab subnet (172.29.<index>.0/24): one file for every lab root,
 * since labs of other roots (another run's, a developer's) hold subnets of the same range.
 */
export const SUBNET_LOCK = join(tmpdir(), "pulumi-liqo-subnets.lock");

async function usedSubnetIndexes(root: string, except: string): Promise<number[]> {
  const fromLabs = listLabs(root)
    .filter((name) => name !== except)
    .map((name) => readLab(name, root)!.subnetIndex);
  // Also any address the host already holds in the range, whoever made it.
  const addresses = await run("ip", ["-4", "-o", "addr", "show"]);
  const fromHost = [...addresses.matchAll(/inet 172\.29\.(\d+)\./g)].map((m) => Number(m[1]));
  return [...fromLabs, ...fromHost];
}

/** The control plane of a cluster of `state`. */
export function controlPlaneSpec(
  state: Pick<LabState, "nodeMonitorGracePeriodSeconds" | "wireguardGo" | "hostGateway">,
  cluster: PlannedCluster,
): ControlPlaneSpec {
  const { nodeMonitorGracePeriodSeconds, wireguardGo, hostGateway } = state;
  return {
    name: cluster.name,
    netns: cluster.netns,
    dir: cluster.dir,
    address: cluster.address,
    publicAddress: cluster.publicAddress,
    podCidr: Cidr.parse(cluster.podCidr),
    serviceCidr: Cidr.parse(cluster.serviceCidr),
    nodeMonitorGracePeriodSeconds,
    ...(wireguardGo ? { wireguardGo } : {}),
    ...(hostGateway === false ? { hostGateway } : {}),
    ...(cluster.podSecurity ? { podSecurity: cluster.podSecurity } : {}),
    ...(cluster.kubernetes ? { kubernetes: cluster.kubernetes } : {}),
    nodePortRange: NODE_PORT_RANGES[cluster.nodePortRange ?? "lab"],
  };
}

/** What node `node` of `cluster` is configured from (node-config.ts), its binaries those of the cluster's release. */
export function nodeConfigInputs(
  cluster: PlannedCluster,
  node: PlannedNode,
  pauseImage: string,
  binaries: NodeBinaries,
): NodeConfigInputs {
  return {
    node,
    clusterPodCidr: cluster.podCidr,
    clusterDns: clusterDnsAddress(cluster.serviceCidr),
    pauseImage,
    caFile: controlPlaneFiles(cluster.dir).caCert,
    binaries,
    ...(cluster.kubeProxyMode ? { kubeProxyMode: cluster.kubeProxyMode } : {}),
    ...(cluster.maxPods !== undefined ? { maxPods: cluster.maxPods } : {}),
    ...(cluster.cni === "flannel"
      ? { flannel: { cniBinDir: join(flannelHome(), "cni"), subnetFile: flannelSubnetFile(cluster.dir, node.name) } }
      : {}),
  };
}

/** etcd, kube-apiserver, kube-controller-manager, kube-scheduler and (with a host agent) the agent. */
const processesPerCluster = (state: Pick<LabState, "hostAgent">): number => (state.hostAgent === false ? 4 : 5);
/** containerd, kubelet and kube-proxy. */
const PROCESSES_PER_NODE = 3;

/** Whether every recorded process of the lab is still running. */
export function isHealthy(state: LabState): boolean {
  return state.clusters.every(
    (c) =>
      c.processes.length === processesPerCluster(state) + PROCESSES_PER_NODE * (c.nodes?.length ?? 0) &&
      c.processes.every(isRunning),
  );
}

/**
 * Starts the requested clusters and returns once every one is ready. A lab of the same name that is
 * healthy and has the same clusters is returned as is; leftovers of a crashed or different run are
 * removed first (and said so).
 */
export async function upLab(requests: readonly ClusterRequest[], options: LabOptions = {}): Promise<LabState> {
  const name = options.name ?? "demo";
  const root = options.root ?? DEFAULT_LAB_ROOT;
  const log = options.log ?? defaultLog;
  refuseHostAgentOptionsWithout(options);
  const loadBalancer = options.loadBalancer ?? DEFAULT_LOAD_BALANCER;
  const existing = readLab(name, root);
  if (
    existing &&
    isHealthy(existing) &&
    sameClusters(existing, requests, options.nodes ?? 1) &&
    (existing.hostAgent ?? true) === (options.hostAgent ?? false) &&
    (existing.loadBalancer ?? "none") === loadBalancer
  ) {
    log(`[lab ${name}] already up: ${existing.clusters.map((c) => c.name).join(", ")}`);
    return ensureSupervisors(existing, log);
  }
  const removed = await downLab(name, root);
  if (removed.length > 0) log(`[lab ${name}] removed leftovers of a previous run: ${removed.join(", ")}`);

  const dir = join(root, name);
  // Before anything exists: a missing binary or image, or a limit too low, is said now, not half-way.
  raiseHostLimits(log);
  const binaries = nodeBinaries();
  /** Each cluster's node binaries: its release's kubelet and kube-proxy (checked here, before anything exists). */
  const releaseBinaries = new Map(
    requests.map((request) => {
      const { kubelet, kubeProxy } = releaseCommands(request.kubernetes);
      return [request.name, { ...binaries, kubelet, kubeProxy }] as const;
    }),
  );
  const images = await nodeImages(
    log,
    options.hostAgent === true ? "if-built" : "needed",
    loadBalancer,
    requests.some((request) => request.cni === "flannel"),
  );
  // From choosing a free subnet until the bridge holds it (where usedSubnetIndexes sees it), no
  // other lab of this machine may choose one: labs start side by side (Jest workers, other runs).
  const subnetLock = await lockFile(SUBNET_LOCK);
  let plan: ReturnType<typeof planLab>, state: LabState;
  try {
    plan = planLab(name, dir, requests, {
      profile: options.profile ?? "open",
      behindNat: options.behindNat,
      natForwards: options.natForwards ?? [{ protocol: "tcp", port: API_SERVER_PORT }],
      gatewayPorts: options.gatewayPorts ?? { from: 51820, to: 51839 },
      usedSubnetIndexes: await usedSubnetIndexes(root, name),
      nodes: options.nodes ?? 1,
      loadBalancer,
    });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    state = {
      ...plan,
      dir,
      clusters: [],
      nodeMonitorGracePeriodSeconds: options.nodeMonitorGracePeriodSeconds ?? 40,
      ...(options.wireguardGo ? { wireguardGo: options.wireguardGo } : {}),
      ...(options.hostGateway === false ? { hostGateway: false } : {}),
      hostAgent: options.hostAgent ?? false,
    };
    saveLab(state);
    await createBridge(plan.bridge, `${plan.hostAddress}/24`);
  } finally {
    await subnetLock.release();
  }

  const record = recorder(state);
  for (const planned of plan.clusters) {
    const cluster: ClusterState = {
      ...planned,
      kubeconfig: controlPlaneFiles(planned.dir).adminKubeconfig,
      apiServerUrl: `https://${planned.publicAddress}:${API_SERVER_PORT}`,
      authUrl: `https://${planned.publicAddress}:${AUTH_SERVICE_PORT}`,
      processes: [],
      launches: {},
    };
    state.clusters.push(cluster);
    saveLab(state);
    log(
      `[lab ${name}] cluster ${cluster.name}: network (${cluster.publicAddress}${cluster.routerNetns ? ", behind NAT" : ""}, ` +
        `pods ${cluster.podCidr}, services ${cluster.serviceCidr})`,
    );
    await createNetwork(state, cluster);
    await createNodeNetwork({
      nodes: cluster.nodes,
      podCidr: cluster.podCidr,
      serviceCidr: cluster.serviceCidr,
      uplink: cluster.routerNetns ? "lan" : "eth0",
      // Flannel routes between the nodes itself (VXLAN).
      hostGwRoutes: cluster.cni !== "flannel",
    });
    mkdirSync(cluster.dir, { recursive: true, mode: 0o700 });
    const spec = controlPlaneSpec(state, cluster);
    writeControlPlaneFiles(spec);
    log(`[lab ${name}] cluster ${cluster.name}: starting etcd and kube-apiserver`);
    startApiServer(spec, record(cluster));
    for (const node of cluster.nodes) {
      writeNodeFiles(cluster, node, nodeConfigInputs(cluster, node, images.pause, releaseBinaries.get(cluster.name)!));
      startNodeProcesses(node, releaseBinaries.get(cluster.name)!, ["containerd"], record(cluster));
    }
  }
  // The control planes boot in parallel; each is then awaited in turn.
  const timeoutMs = options.readyTimeoutMs ?? 180_000;
  const withLogs =
    (cluster: ClusterState) =>
    (error: Error): never => {
      throw new Error(`${error.message}\n  logs: ${join(cluster.dir, "logs")}`);
    };
  for (const cluster of state.clusters) {
    for (const node of cluster.nodes) {
      await importImages(node, binaries.ctr, images.archives, deadProcess(state, cluster), timeoutMs).catch(
        withLogs(cluster),
      );
    }
    const spec = controlPlaneSpec(state, cluster);
    await waitForApiServer(spec, deadProcess(state, cluster), timeoutMs).catch(withLogs(cluster));
    log(
      `[lab ${name}] cluster ${cluster.name}: API server ready; starting kube-controller-manager, kube-scheduler ` +
        `and the kubelet and kube-proxy of ${cluster.nodes.length} node(s)`,
    );
    startControllers(spec, record(cluster));
    for (const node of cluster.nodes)
      startNodeProcesses(node, releaseBinaries.get(cluster.name)!, ["kubelet", "kube-proxy"], record(cluster));
  }
  for (const cluster of state.clusters) {
    const spec = controlPlaneSpec(state, cluster);
    await waitForControllers(spec, deadProcess(state, cluster), timeoutMs).catch(withLogs(cluster));
    await waitForNodes(cluster, deadProcess(state, cluster), timeoutMs).catch(withLogs(cluster));
    if (cluster.cni === "flannel") {
      await deployFlannel(cluster.kubeconfig, cluster.podCidr, images.flannel, flannelRunDir(cluster.dir));
      log(`[lab ${name}] cluster ${cluster.name}: CNI Flannel (VXLAN) on ${cluster.podCidr}`);
    }
    await deployClusterDns(cluster.kubeconfig, cluster.serviceCidr, images.coredns);
    await deployMetricsServer(cluster.kubeconfig, images.metricsServer);
    await deployLocalPathStorage(cluster.kubeconfig, images.localPathProvisioner, cluster.nodes);
    if (cluster.nodePodCidrs !== false)
      await declareClusterConfig(cluster.kubeconfig, { podCidr: cluster.podCidr, serviceCidr: cluster.serviceCidr });
    if (cluster.loadBalancerAddresses) {
      const announcingNode = cluster.nodes[0]!.name;
      await deployLoadBalancer(
        cluster.kubeconfig,
        { name: cluster.name, loadBalancerAddresses: cluster.loadBalancerAddresses, announcingNode },
        images.metallb,
      );
      log(
        `[lab ${name}] cluster ${cluster.name}: load balancer MetalLB (L2), addresses ${cluster.loadBalancerAddresses} ` +
          `announced by ${announcingNode}`,
      );
    } else if (loadBalancer === "metallb")
      log(`[lab ${name}] cluster ${cluster.name}: no load balancer (behind NAT: no interface on the lab subnet)`);
    if (state.hostAgent !== false) startAgent(spec, record(cluster), options.agentEnvironment);
    log(
      `[lab ${name}] cluster ${cluster.name}: ready at ${cluster.apiServerUrl} (kubeconfig ${cluster.kubeconfig}); ` +
        `nodes ${cluster.nodes.map((n) => n.name).join(", ")} Ready; ` +
        (state.hostAgent === false ? "no host agent (a Cluster deploys it as pods)" : "agent started"),
    );
  }
  await setProfile(state, state.profile);
  return ensureSupervisors(state, log);
}

/** Appends a started process, and how it was started, to the cluster's record and saves the state at once. */
function recorder(state: LabState): (cluster: ClusterState) => OnStarted {
  return (cluster) => (process, launch) => {
    cluster.processes.push(process);
    cluster.launches[process.name] = launch;
    saveLab(state);
  };
}

/**
 * Starts the supervisor of every cluster that has none running (the last step of `up`; again on
 * an `up` that finds the lab healthy, should one have died), recorded at once. Resolves the lab's
 * state as written.
 */
export function ensureSupervisors(state: LabState, log: (line: string) => void = defaultLog): LabState {
  for (const cluster of state.clusters) {
    if (cluster.supervisor && isRunning(cluster.supervisor)) continue;
    const supervisor = startSupervisor(state.dir, cluster);
    const updated = updateLab(state.dir, (s) => {
      const mine = s.clusters.find((c) => c.name === cluster.name);
      if (mine) mine.supervisor = supervisor;
    });
    if (updated) Object.assign(state, updated);
    log(
      `[lab ${state.name}] cluster ${cluster.name}: supervisor started (pid ${supervisor.pid}); it restarts any process of the cluster that exits`,
    );
  }
  return state;
}

/**
 * How often a lab's start restarts a node's kubelet or kube-proxy that exited before the lab is
 * ready: on a loaded machine they give up waiting for a slow API server, as on a booting host,
 * where systemd starts them again. (The supervisor takes over once the lab is up.)
 */
const START_RESTARTS = 3;
const RESTARTABLE_AT_START = /^(kubelet|kube-proxy)-n\d+$/;
const restartsAtStart = new WeakMap<ClusterState, Map<string, number>>();

/**
 * The liveness check of a lab's start: why the first recorded process of `cluster` that has
 * exited ends the wait (its name and its own log file), after restarting a node's kubelet or
 * kube-proxy up to {@link START_RESTARTS} times.
 */
function deadProcess(state: LabState, cluster: ClusterState): () => string | undefined {
  const restarts = restartsAtStart.get(cluster) ?? new Map<string, number>();
  restartsAtStart.set(cluster, restarts);
  return () => {
    for (const [index, dead] of cluster.processes.entries()) {
      if (isRunning(dead)) continue;
      const count = restarts.get(dead.name) ?? 0;
      const launch = cluster.launches[dead.name];
      if (!launch || !RESTARTABLE_AT_START.test(dead.name) || count >= START_RESTARTS)
        return `${dead.name} exited${count ? ` (restarted ${count} times during the start)` : ""}; see ${dead.logFile}`;
      restarts.set(dead.name, count + 1);
      cluster.processes[index] = startInNamespace(
        launch.netns ?? cluster.netns,
        dead.name,
        launch.command,
        launch.args,
        dead.logFile,
        launch.environment,
        launch.entry,
      );
      saveLab(state);
    }
    return undefined;
  };
}

/** Whether lab `state` has the clusters `requests` ask for, with `nodes` nodes each. */
export function sameClusters(state: LabState, requests: readonly ClusterRequest[], nodes: number): boolean {
  return (
    state.clusters.length === requests.length &&
    requests.every((r, i) => {
      const c = state.clusters[i]!;
      return (
        c.name === r.name &&
        c.nodes?.length === nodes &&
        (!r.podCidr || r.podCidr === c.podCidr) &&
        (!r.serviceCidr || r.serviceCidr === c.serviceCidr) &&
        (r.nodePodCidrs ?? true) === (c.nodePodCidrs ?? true) &&
        r.podSecurity === c.podSecurity &&
        (r.kubeProxyMode ?? "iptables") === (c.kubeProxyMode ?? "iptables") &&
        r.kubernetes === c.kubernetes &&
        (r.cni ?? "bridge") === (c.cni ?? "bridge") &&
        (r.nodePortRange ?? "lab") === (c.nodePortRange ?? "lab")
      );
    })
  );
}

async function createNetwork(state: LabState, cluster: ClusterState): Promise<void> {
  await createNamespace(cluster.netns);
  if (cluster.routerNetns) {
    // The router holds the public address on the bridge; the cluster sits on a private link.
    await createNamespace(cluster.routerNetns);
    await attachToBridge(cluster.routerNetns, state.bridge, cluster.hostLink, `${cluster.publicAddress}/24`);
    await linkNamespaces(
      { netns: cluster.routerNetns, address: `${cluster.gatewayAddress}/24` },
      { netns: cluster.netns, address: `${cluster.address}/24` },
      "lan",
    );
    await run("ip", ["netns", "exec", cluster.netns, "ip", "route", "add", "default", "via", cluster.gatewayAddress!]);
    await configureNatRouter(cluster.routerNetns, cluster.privateCidr!, cluster.address, state.natForwards);
  } else {
    await attachToBridge(cluster.netns, state.bridge, cluster.hostLink, `${cluster.address}/24`);
  }
  await createPodInterface(cluster.netns);
}

/** Applies a connectivity profile (`open` or `gateway-only`) to a running lab. */
export async function setProfile(state: LabState, profile: ConnectivityProfile): Promise<void> {
  if (profile === "nat" && !state.clusters.some((c) => c.routerNetns)) {
    throw new Error(
      `lab ${state.name}: the nat profile is chosen at "up" (--profile nat --behind-nat NAME); it cannot be applied to a running lab`,
    );
  }
  if (profile !== "nat" && state.profile === "nat") {
    throw new Error(`lab ${state.name} was built behind NAT; bring it down and up again to change to ${profile}`);
  }
  for (const cluster of state.clusters) {
    await applyProfile(cluster.netns, profileRules(profile, state.hostAddress, API_SERVER_PORT, state.gatewayPorts));
  }
  state.profile = profile;
  // Only the profile: the supervisors may have recorded restarted processes meanwhile.
  updateLab(state.dir, (s) => void (s.profile = profile));
}

/** Adds a "pod" address, which must lie in the cluster's pod CIDR, to the cluster's pod interface. */
export async function addPodAddress(state: LabState, clusterName: string, address: string): Promise<void> {
  const cluster = clusterOf(state, clusterName);
  if (!Cidr.parse(cluster.podCidr).contains(address)) {
    throw new Error(`pod address ${address} is outside cluster ${clusterName}'s pod CIDR ${cluster.podCidr}`);
  }
  await addAddressToPods(cluster.netns, address);
}

/**
 * Loads the image archive at `archive` into every node of lab `state` (as `up` loads the
 * project's images): for an image the lab was not started with, such as an earlier release's agent.
 */
export async function loadImage(state: LabState, archive: string, timeoutMs = 120_000): Promise<void> {
  const { ctr } = nodeBinaries();
  for (const cluster of state.clusters)
    for (const node of cluster.nodes) await importImages(node, ctr, [archive], deadProcess(state, cluster), timeoutMs);
}

/**
 * Removes everything lab `name` made: its processes (by recorded PID, or found inside its own
 * namespaces), namespaces, links and files. Works from the state file and from the lab's name
 * prefixes, so a run that crashed before saving its state is cleaned up too. Returns what it removed.
 */
export async function downLab(name: string, root = DEFAULT_LAB_ROOT): Promise<string[]> {
  const removed: string[] = [];
  const state = readLab(name, root);
  // The supervisors first: they would start again what is stopped next.
  removed.push(...(await stopTogether(state?.clusters.flatMap((c) => (c.supervisor ? [c.supervisor] : [])) ?? [])));
  const records = state?.clusters.flatMap((c) => c.processes) ?? [];
  const netnses = new Set(state?.clusters.flatMap((c) => [c.netns, ...(c.routerNetns ? [c.routerNetns] : [])]) ?? []);
  const prefix = namespacePrefix(name);
  for (const ns of (await run("ip", ["netns", "list"])).split("\n").map((l) => l.split(" ")[0]!)) {
    if (ns.startsWith(prefix)) netnses.add(ns);
  }
  removed.push(...(await stopTogether(records)));
  // What the nodes' runtime leaves running or mounted: pods, shims, mounts, cgroups.
  for (const node of state?.clusters.flatMap((c) => c.nodes ?? []) ?? []) removed.push(...(await teardownNode(node)));
  // Then what lives on in the lab's own namespaces: started by the lab's processes (wireguard-go,
  // by the gateways), so only now, when nothing is left to start it again (a gateway restarts a
  // wireguard-go that dies within a second).
  for (const ns of netnses) removed.push(...(await stopFound(await namespacePids(ns), `process in ${ns}`)));
  for (const ns of netnses) {
    if (namespaceExists(ns)) {
      await deleteNamespace(ns);
      removed.push(`namespace ${ns}`);
    }
  }
  const links = new Set([...(state?.clusters.map((c) => c.hostLink) ?? []), ...(state ? [state.bridge] : [])]);
  for (const line of (await run("ip", ["-o", "link", "show"])).split("\n")) {
    const link = line.split(":")[1]?.trim().split("@")[0];
    if (link && (link === bridgeName(name) || link.startsWith(`${bridgeName(name)}-`))) links.add(link);
  }
  for (const link of links) {
    if (await linkExists(link)) {
      await deleteLink(link);
      removed.push(`link ${link}`);
    }
  }
  const dir = join(root, name);
  const hadDir = existsSync(dir);
  // Last, whatever still works from the lab's directory and was started by none of the above (a
  // command a shim or a pod had just started): it would write there again once it is removed. Seen
  // under load: the directory back after its removal, holding the runtime's state (a shim still
  // finishing). So it is removed until it stays gone, each time after stopping what uses it.
  await poll(
    { step: `lab ${name}`, object: `directory ${dir} removed and staying gone`, endpoint: dir },
    { timeoutMs: 30_000, intervalMs: 500 },
    async () => {
      removed.push(...(await stopFound(pidsUsing(dir), `process using ${dir}`)));
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
      const users = pidsUsing(dir);
      return !existsSync(dir) && users.length === 0
        ? { done: true, value: undefined }
        : { done: false, state: `still there, used by ${users.length} process(es)` };
    },
  );
  if (hadDir && state) removed.push(`directory ${dir}`);
  return removed;
}

/**
 * How long a lab's process may take to stop on SIGTERM before it is killed. The lab is thrown away
 * with everything it held, so a graceful stop buys nothing; and kube-apiserver, once it stops
 * listening, keeps its open connections for 10 s and more (it was killed at the 10 s default every
 * time, two API servers of a lab one after the other: 20 s of every lab's removal).
 */
const TEARDOWN_GRACE_MS = 2_000;

/** Stops the records that still run, all at once, and says which it stopped. */
async function stopTogether(records: readonly ProcessRecord[]): Promise<string[]> {
  const running = records.filter(isRunning);
  await Promise.all(running.map((record) => stopProcess(record, TEARDOWN_GRACE_MS)));
  return running.map((record) => `${record.name} (pid ${record.pid})`);
}

/** Stops the processes found by PID (named `what`) that still run, and says which it stopped. */
function stopFound(pids: readonly number[], what: string): Promise<string[]> {
  return stopTogether(pids.flatMap((pid) => recordOf(pid, what, "") ?? []));
}

/** Prefix of every namespace of lab `name`. */
export const namespacePrefix = (name: string): string => `liqo-${name}-`;
/** Name of lab `name`'s bridge; its veth ends are named `<bridge>-<index>`. */
export const bridgeName = (name: string): string => `lq-${name}`;

/** A cluster's health, for `status`. */
export interface ClusterHealth {
  /** Cluster name. */
  readonly name: string;
  /** API server URL as the host reaches it. */
  readonly apiServerUrl: string;
  /** Each recorded process and whether it runs, the supervisor last. */
  readonly processes: { readonly name: string; readonly pid: number; readonly running: boolean }[];
}

/** Reports which of a lab's processes still run. */
export function labHealth(state: LabState): ClusterHealth[] {
  return state.clusters.map((c) => ({
    name: c.name,
    apiServerUrl: c.apiServerUrl,
    processes: [...c.processes, ...(c.supervisor ? [c.supervisor] : [])].map((p) => ({
      name: p.name,
      pid: p.pid,
      running: isRunning(p),
    })),
  }));
}

export { type PlannedCluster } from "./plan.js";

/** The options that only a host agent takes, refused when the lab runs none (they would silently do nothing). */
function refuseHostAgentOptionsWithout(options: LabOptions): void {
  if (options.hostAgent === true) return;
  const given = [
    options.hostGateway === false ? "hostGateway" : undefined,
    options.wireguardGo ? "wireguardGo" : undefined,
    options.agentEnvironment ? "agentEnvironment" : undefined,
  ].filter((o) => o !== undefined);
  if (given.length > 0)
    throw new Error(
      `lab ${options.name ?? "demo"}: ${given.join(", ")} take effect only with hostAgent: true (no host agent runs)`,
    );
}
