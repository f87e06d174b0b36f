/**
 * A flow in flight across a gateway's move: on a lab of two clusters with two nodes each and the
 * same pod CIDR, the product deployed as pods, b (the consumer) pings a pod of a every 200 ms and
 * holds an idle TCP connection to it (`podtool flow`, from b's node that the gateway is not on);
 * each run deletes b's gateway pod and watches, every 100 ms from the delete, what the flow waits
 * for: the new gateway pod made, Running and ready, every node's routes pointing at its node, the
 * WireGuard handshake of its interface. The target: at most {@link LOSS_TARGET_S} of answers lost,
 * and the idle connection carries data after the move.
 */
import { SYSTEM_NAMESPACE } from "../provider/api/index.js";
import { Cidr } from "../provider/net/cidr.js";
import { ensureTunnel } from "../provider/network-fabric/tunnel.js";
import { translateAddress } from "../provider/network-fabric/remap.js";
import { TUNNEL_DEFAULTS } from "../provider/network-fabric/tunnel-plan.js";
import { ROUTE_PROTO } from "../agent/route/plan.js";
import { GATEWAY_POD_SELECTOR } from "../agent/route/reconcile.js";
import { runIn } from "../host/exec.js";
import { delay } from "../host/processes.js";
import type { ClusterState } from "../local-cluster/lab.js";
import { coreOf, podtoolFlow, runPodtool, type FlowReport } from "../local-cluster/pods.js";
import { withLab } from "../harness/labs.js";
import { uninstallClusters } from "../harness/install.js";
import { gatewayWireguard, runningGateway } from "../test/support/project-pods.js";
import { peerPair, quietProgress, unpeerPair } from "../test/support/tunnel-pair.js";
import { series, target, type Log, type SectionResult } from "./figures.js";

/** The bound on the answers a 200 ms ping loses when the gateway pod is deleted. */
export const LOSS_TARGET_S = 5;
const POD_CIDR = "10.150.0.0/16";
/** Each flow's length, and how long it runs before the delete. */
const FLOW_SECONDS = 30;
const LEAD_MS = 5_000;
/** How long the watch of one move may take. */
const WATCH_MS = 60_000;

/** When each fact of the move was first seen, in seconds from the delete. */
interface Move {
  newPod?: number;
  ready?: number;
  routes?: number;
  handshake?: number;
}

/** Whether every node's routes of the route agents lead to `gatewayNode`'s address (none on the gateway's node). */
async function routesFollow(cluster: ClusterState, gatewayNode: string): Promise<boolean> {
  const gatewayIp = cluster.nodes.find((n) => n.name === gatewayNode)?.address;
  for (const node of cluster.nodes) {
    const lines = (await runIn(node.netns, "ip", ["-4", "-o", "route", "show", "proto", String(ROUTE_PROTO)]))
      .trim()
      .split("\n")
      .filter(Boolean);
    const ok =
      node.name === gatewayNode
        ? lines.length === 0
        : lines.length > 0 && lines.every((l) => l.includes(`via ${gatewayIp} `));
    if (!ok) return false;
  }
  return true;
}

/** Watches the move that began at `deletedAt` (epoch ms) until every fact is seen or {@link WATCH_MS} passed. */
async function watchMove(cluster: ClusterState, oldPod: string, ifname: string, deletedAt: number): Promise<Move> {
  const move: Move = {};
  const since = (): number => Math.round((Date.now() - deletedAt) / 100) / 10;
  let node: string | undefined;
  while (Date.now() - deletedAt < WATCH_MS && move.handshake === undefined) {
    const pods = await coreOf(cluster).listNamespacedPod({
      namespace: SYSTEM_NAMESPACE,
      labelSelector: GATEWAY_POD_SELECTOR,
    });
    const pod = pods.items.find((p) => p.metadata?.name !== oldPod && !p.metadata?.deletionTimestamp);
    if (pod && move.newPod === undefined) move.newPod = since();
    node = pod?.spec?.nodeName ?? node;
    if (
      pod?.status?.phase === "Running" &&
      pod.status.containerStatuses?.every((c) => c.ready) &&
      move.ready === undefined
    )
      move.ready = since();
    if (node && move.routes === undefined && (await routesFollow(cluster, node))) move.routes = since();
    if (move.ready !== undefined) {
      const peer = (await gatewayWireguard(cluster, ifname).catch(() => undefined))?.peers[0];
      // wg reports the handshake to the second: the figure is that coarse.
      if (peer?.latestHandshake && peer.latestHandshake.getTime() >= deletedAt - 1000)
        move.handshake = Math.max(0, Math.round((peer.latestHandshake.getTime() - deletedAt) / 100) / 10);
    }
    await delay(100);
  }
  return move;
}

/** `runs` deletes of b's gateway pod, each during a flow from b to a pod of a. */
export async function benchGatewayMove(runs: number, log: Log): Promise<SectionResult> {
  return withLab(
    [
      { name: "a", podCidr: POD_CIDR },
      { name: "b", podCidr: POD_CIDR },
    ],
    { nodes: 2 },
    async (lab) => {
      const [a, b] = [lab.clusters[0]!, lab.clusters[1]!];
      const pair = await peerPair(lab);
      try {
        const server = (await runPodtool(a, 1)).status!.podIP!;
        for (const index of [1, 2]) await runPodtool(b, index);
        const tunnel = await ensureTunnel(
          pair.sides,
          { server: "provider", serverAddress: a.publicAddress, ...TUNNEL_DEFAULTS, behindNat: [] },
          120_000,
          quietProgress,
        );
        const target_ = translateAddress(server, Cidr.parse(POD_CIDR), Cidr.parse(tunnel.consumer.remotePodCidrAsSeen));
        const moves: (Move & { report: FlowReport; deleteAtMs: number })[] = [];
        for (let run = 1; run <= runs; run++) {
          const old = await runningGateway(b);
          const from = old.node === `${b.name}-n1` ? 2 : 1;
          const flowStart = Date.now();
          const flow = podtoolFlow(b, from, target_, FLOW_SECONDS);
          await delay(LEAD_MS);
          await coreOf(b).deleteNamespacedPod({ name: old.name, namespace: SYSTEM_NAMESPACE });
          const deletedAt = Date.now();
          const move = await watchMove(b, old.name, tunnel.consumer.interfaceName, deletedAt);
          const report = await flow;
          moves.push({ ...move, report, deleteAtMs: deletedAt - flowStart });
          log(`gateway-move run ${run}: ${JSON.stringify(moves.at(-1))}`);
        }
        const seconds = (pick: (m: (typeof moves)[number]) => number | undefined, label: string) =>
          series(
            label,
            "s",
            moves.map(pick).filter((v): v is number => v !== undefined),
          );
        const lost = moves.map((m) => m.report.longestGapMs / 1000);
        const resumed = moves.map((m) => (m.report.resumedAtMs - m.deleteAtMs) / 1000);
        return {
          series: [
            series("gateway pod deleted: 200 ms pings unanswered", "s", lost),
            series("  first answer after the delete", "s", resumed),
            seconds((m) => m.newPod, "  new gateway pod seen"),
            seconds((m) => m.ready, "  new gateway pod Running and ready"),
            seconds((m) => m.routes, "  every node's routes at its node"),
            seconds((m) => m.handshake, "  its WireGuard handshake (to 1 s)"),
          ],
          targets: [
            target(
              `answers lost on a gateway pod delete ≤ ${LOSS_TARGET_S} s (worst run)`,
              Math.max(...lost),
              "max",
              LOSS_TARGET_S,
            ),
            target(
              "idle TCP connections that carried data after the move (of all runs)",
              moves.filter((m) => m.report.tcp === "echoed").length,
              "min",
              runs,
            ),
          ],
          details: { moves },
        };
      } finally {
        await unpeerPair(pair);
        await uninstallClusters([a, b]);
      }
    },
  );
}
