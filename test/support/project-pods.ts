/**
 * What the suites that run the project as pods check of it (what they read of the gateway pod is
 * harness/gateway-pods.ts): traffic between real pods of two clusters, through Services and across
 * a gateway's move.
 */
import * as k8s from "@kubernetes/client-node";
import type { ClusterState } from "../../local-cluster/lab.js";
import { adminConfig } from "../../local-cluster/inspect.js";
import { coreOf, podName, podtoolFrom, POD_NAMESPACE, runPodtool, type FlowReport } from "../../local-cluster/pods.js";
import { readWireguardStatus, type WireguardStatus } from "../../agent/gateway/index.js";
import { runsHostAgent } from "../../local-cluster/state.js";
import { fabricSnapshot, gatewayWireguard } from "../../harness/gateway-pods.js";

/**
 * The WireGuard status of interface `ifname` of `cluster`'s gateway, wherever it runs: inside the
 * gateway pod, or in the cluster's namespace for a lab that runs the agent as a host process.
 */
export async function wireguardOf(cluster: ClusterState, ifname: string): Promise<WireguardStatus> {
  return runsHostAgent(cluster) ? readWireguardStatus(cluster.netns, ifname) : gatewayWireguard(cluster, ifname);
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

/**
 * How long {@link expectFlowsSurvive} lets a flow go unanswered: generous for a loaded machine;
 * `npm run bench -- gateway-move` measures the real figure against the 5 s target.
 */
const FLOW_DEADLINE_MS = 30_000;

/**
 * Each flow (`podtool flow`) was answered before its longest gap, resumed after it, lost no more
 * than {@link FLOW_DEADLINE_MS}, and its idle TCP connection carried a line at the end. On failure
 * the error carries the fabric of `clusters` as it is then (fabricSnapshot).
 */
export async function expectFlowsSurvive(
  flows: readonly PromiseSettledResult<FlowReport>[],
  clusters: readonly ClusterState[],
): Promise<void> {
  try {
    for (const flow of flows) {
      if (flow.status === "rejected") throw flow.reason;
      const report = flow.value;
      const verdict = {
        tcp: report.tcp,
        answeredBefore: report.longestGapMs === 0 || report.gapFromMs > 0,
        resumed: report.longestGapMs === 0 || report.answeredAfterGap > 0,
        withinDeadline: report.longestGapMs <= FLOW_DEADLINE_MS,
      };
      expect({ ...verdict, report }).toEqual({
        tcp: "echoed",
        answeredBefore: true,
        resumed: true,
        withinDeadline: true,
        report,
      });
    }
  } catch (error) {
    const snapshots = await Promise.all(clusters.map(fabricSnapshot));
    (error as Error).message += `\n\n${snapshots.join("\n\n")}`;
    throw error;
  }
}
