/**
 * What the suites that run the project as pods read of it: the gateway pod (where it runs, its
 * WireGuard status, read inside the pod), the routes the route agents hold on each node, and
 * traffic between real pods of two clusters, through Services and across a gateway's move.
 */
import { SYSTEM_NAMESPACE } from "../../provider/api/index.js";
import { GATEWAY_NAME } from "../../provider/cluster/agent-components.js";
import { poll } from "../../provider/wait/poll.js";
import { runIn } from "../../host/exec.js";
import type { ClusterState } from "../../local-cluster/lab.js";
import * as k8s from "@kubernetes/client-node";
import { adminConfig } from "../../local-cluster/inspect.js";
import { coreOf, kubectl, podName, podtoolFrom, POD_NAMESPACE, runPodtool } from "../../local-cluster/pods.js";
import { parseWireguardDump, readWireguardStatus, type WireguardStatus } from "../../agent/gateway/index.js";
import { runsHostAgent } from "../../local-cluster/state.js";
import { ROUTE_PROTO } from "../../agent/route/plan.js";
import { GATEWAY_POD_SELECTOR } from "../../agent/route/reconcile.js";

/** The WireGuard status of interface `ifname`, read inside `cluster`'s gateway pod (its sockets are the pod's own). */
export async function gatewayWireguard(cluster: ClusterState, ifname: string): Promise<WireguardStatus> {
  const dump = await kubectl(cluster, [
    "exec",
    "-n",
    SYSTEM_NAMESPACE,
    `deploy/${GATEWAY_NAME}`,
    "--",
    "wg",
    "show",
    ifname,
    "dump",
  ]);
  return parseWireguardDump(ifname, dump);
}

/**
 * The WireGuard status of interface `ifname` of `cluster`'s gateway, wherever it runs: inside the
 * gateway pod, or in the cluster's namespace for a lab that runs the agent as a host process.
 */
export async function wireguardOf(cluster: ClusterState, ifname: string): Promise<WireguardStatus> {
  return runsHostAgent(cluster) ? readWireguardStatus(cluster.netns, ifname) : gatewayWireguard(cluster, ifname);
}

/** The routes the route agents hold on each node of `cluster`, node by node. */
export async function projectRoutes(cluster: ClusterState): Promise<string[]> {
  const routes: string[] = [];
  for (const node of cluster.nodes)
    for (const line of (await runIn(node.netns, "ip", ["-4", "-o", "route", "show", "proto", String(ROUTE_PROTO)]))
      .trim()
      .split("\n"))
      if (line) routes.push(`${node.name}: ${line}`);
  return routes;
}

/** The gateway pod of `cluster` that is Running and ready (other than pod `not`), with its name and node. */
export async function runningGateway(cluster: ClusterState, not?: string): Promise<{ name: string; node: string }> {
  return poll(
    { step: "test", object: `a Running gateway pod${not ? ` other than ${not}` : ""}`, endpoint: cluster.apiServerUrl },
    { timeoutMs: 90_000, intervalMs: 500 },
    async () => {
      const pods = await coreOf(cluster).listNamespacedPod({
        namespace: SYSTEM_NAMESPACE,
        labelSelector: GATEWAY_POD_SELECTOR,
      });
      const running = pods.items.find(
        (p) =>
          p.metadata?.name !== not &&
          !p.metadata?.deletionTimestamp &&
          p.status?.phase === "Running" &&
          p.status.containerStatuses?.every((c) => c.ready),
      );
      return running
        ? { done: true, value: { name: running.metadata!.name!, node: running.spec!.nodeName! } }
        : { done: false, state: pods.items.map((p) => `${p.metadata?.name} ${p.status?.phase}`).join(", ") || "none" };
    },
  );
}

/**
 * `from`'s podtool pod on node 1 reaches `to`'s, over ICMP and TCP (the answering pod names itself),
 * at its own address: for clusters of distinct pod CIDRs, whose pods only the tunnel connects.
 */
export async function expectPodsTalk(from: ClusterState, to: ClusterState): Promise<void> {
  const target = (await runPodtool(to, 1)).status!.podIP!;
  await runPodtool(from, 1);
  expect(await podtoolFrom(from, 1, "ping", target, 60_000)).toMatch(/^reply from /);
  expect(await podtoolFrom(from, 1, "tcp", `${target}:8080`)).toContain(podName(to, 1));
}

/**
 * A ClusterIP Service `name` of port 8080 in `cluster`'s podtool namespace with no selector and one
 * EndpointSlice holding `address`: a Service of the cluster whose endpoint is a remote pod, as
 * the cluster sees it. Resolves its ClusterIP.
 */
export async function serviceToAddress(cluster: ClusterState, name: string, address: string): Promise<string> {
  const service = await coreOf(cluster).createNamespacedService({
    namespace: POD_NAMESPACE,
    body: { metadata: { name }, spec: { ports: [{ port: 8080, targetPort: 8080, protocol: "TCP" }] } },
  });
  await adminConfig(cluster)
    .makeApiClient(k8s.DiscoveryV1Api)
    .createNamespacedEndpointSlice({
      namespace: POD_NAMESPACE,
      body: {
        metadata: { name, labels: { "kubernetes.io/service-name": name } },
        addressType: "IPv4",
        endpoints: [{ addresses: [address], conditions: { ready: true } }],
        ports: [{ port: 8080, protocol: "TCP", name: "" }],
      },
    });
  return service.spec!.clusterIP!;
}
