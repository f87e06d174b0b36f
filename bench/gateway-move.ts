/**
 * Flows in flight across a gateway pod's move: on a lab of two clusters with two nodes each and the
 * same pod CIDR, the product deployed as pods and a `Tunnel` between the gateways (a serves, b
 * dials), a pod of b pings a pod of a every 200 ms and holds an idle TCP connection to it
 * (`podtool flow`). Each run deletes one side's gateway pod, b's (the client) and then a's (the
 * server), and watches, every 100 ms from the delete, what the flow waits for: the new gateway pod
 * made, Running and ready, every node's routes leading to its node, and the new WireGuard handshake.
 * Targets: at most {@link LOSS_TARGET_S} of answers lost, and the idle connection carries data
 * after the move.
 */
import { SYSTEM_NAMESPACE } from "../core/api/index.js";
import { Cidr } from "../core/net/cidr.js";
import { ensureTunnel } from "../core/network-fabric/tunnel.js";
import { deleteTunnel } from "../core/network-fabric/tunnel-delete.js";
import { translateAddress } from "../core/network-fabric/remap.js";
import { TUNNEL_DEFAULTS } from "../core/network-fabric/tunnel-plan.js";
import { createPeering, deletePeering, type PeeringRecord } from "../core/peering/peering.js";
import { progressTo } from "../core/operation/progress.js";
import { GATEWAY_POD_SELECTOR } from "../agent/route/reconcile.js";
import { delay } from "../host/processes.js";
import type { ClusterState } from "../local-cluster/lab.js";
import { coreOf, podtoolFlow, runPodtool, type FlowReport } from "../local-cluster/pods.js";
import { gatewayWireguard, projectRoutes, runningGateway } from "../harness/gateway-pods.js";
import { preparePeering, tunnelSidesOf } from "../harness/peering-pair.js";
import { series, target, type Log, type SectionResult } from "./figures.js";
import { privateLabs, type LabRunner } from "./labs.js";

/** The bound on the answers a 200 ms ping may lose when a gateway pod is deleted. */
export const LOSS_TARGET_S = 5;
const POD_CIDR = "10.150.0.0/16";
/** Each flow's length, and how long it runs before the delete. */
const FLOW_SECONDS = 20;
const LEAD_MS = 4_000;
/** How long the watch of one move may take. */
const WATCH_MS = 60_000;
const quiet = progressTo(() => undefined);

/** When each fact of a move was first seen, in seconds from the delete. */
interface Move {
  newPod?: number;
  ready?: number;
  routes?: number;
  handshake?: number;
}

/** One run: which side's gateway was deleted, what the watch saw, what the flow reported. */
interface MoveRun extends Move {
  readonly side: "client" | "server";
  readonly from: string;
  readonly to: string;
  readonly deleteAtMs: number;
  readonly report: FlowReport;
}

/** Whether every node's route-agent routes lead to `gatewayNode`'s address (and none sit on the gateway's node). */
async function routesFollow(cluster: ClusterState, gatewayNode: string): Promise<boolean> {
  const gatewayIp = cluster.nodes.find((n) => n.name === gatewayNode)?.address;
  const routes = await projectRoutes(cluster);
  return cluster.nodes.every((node) => {
    const lines = routes.filter((line) => line.startsWith(`${node.name}: `));
    return node.name === gatewayNode
      ? lines.length === 0
      : lines.length > 0 && lines.every((l) => l.includes(`via ${gatewayIp} `));
  });
}

/** Watches the move that began at `deletedAt` (epoch ms) until every fact is seen or {@link WATCH_MS} passed. */
async function watchMove(cluster: ClusterState, oldPod: string, ifname: string, deletedAt: number): Promise<Move> {
  const move: Move = {};
  const since = (): number => Math.round((Date.now() - deletedAt) / 100) / 10;
  let node: string | undefined;
  while (Date.now() - deletedAt < WATCH_MS && (move.handshake === undefined || move.routes === undefined)) {
    const pods = await coreOf(cluster).listNamespacedPod({
      namespace: SYSTEM_NAMESPACE,
      labelSelector: GATEWAY_POD_SELECTOR,
    });
    const pod = pods.items.find((p) => p.metadata?.name !== oldPod && !p.metadata?.deletionTimestamp);
    if (pod && move.newPod === undefined) move.newPod = since();
    node = pod?.spec?.nodeName ?? node;
    const ready = pod?.status?.phase === "Running" && pod.status.containerStatuses?.every((c) => c.ready);
    if (ready && move.ready === undefined) move.ready = since();
    if (node && move.routes === undefined && (await routesFollow(cluster, node))) move.routes = since();
    if (move.ready !== undefined && move.handshake === undefined) {
      const peer = (await gatewayWireguard(cluster, ifname).catch(() => undefined))?.peers[0];
      // wg reports the handshake to the second: the figure is that coarse.
      if (peer?.latestHandshake && peer.latestHandshake.getTime() >= deletedAt - 1000)
        move.handshake = Math.max(0, Math.round((peer.latestHandshake.getTime() - deletedAt) / 100) / 10);
    }
    await delay(100);
  }
  return move;
}

/** `runs` rounds, each deleting b's gateway pod and then a's during a flow from a pod of b to a pod of a. */
export async function benchGatewayMove(runs: number, log: Log, labs: LabRunner = privateLabs): Promise<SectionResult> {
  log("gateway-move: two local clusters of two nodes each, one pod CIDR, Flannel, installed with the agent as pods");
  const clusters = [
    { name: "a", podCidr: POD_CIDR, cni: "flannel" as const },
    { name: "b", podCidr: POD_CIDR, cni: "flannel" as const },
  ];
  return labs(clusters, { nodes: 2 }, async (lab) => {
    const [a, b] = [lab.clusters[0]!, lab.clusters[1]!];
    const pair = await preparePeering(a, b, { pods: 10 });
    let record: PeeringRecord | undefined;
    let sides: Awaited<ReturnType<typeof tunnelSidesOf>> | undefined;
    try {
      record = await createPeering(pair.request, quiet);
      sides = await tunnelSidesOf({ ...pair.consumer, name: "b" }, { ...pair.provider, name: "a" }, record);
      const server = (await runPodtool(a, 1)).status!.podIP!;
      for (const index of [1, 2]) await runPodtool(b, index);
      const tunnel = await ensureTunnel(
        sides,
        { server: "provider", serverAddress: a.publicAddress, ...TUNNEL_DEFAULTS, behindNat: [] },
        120_000,
        quiet,
      );
      const seen = translateAddress(server, Cidr.parse(POD_CIDR), Cidr.parse(tunnel.consumer.remotePodCidrAsSeen));
      const moves: MoveRun[] = [];
      for (let run = 1; run <= runs; run++) {
        for (const side of ["client", "server"] as const) {
          const [cluster, ifname] =
            side === "client" ? [b, tunnel.consumer.interfaceName] : [a, tunnel.provider.interfaceName];
          const old = await runningGateway(cluster);
          // From the node b's gateway is not on: its traffic crosses a route agent's route too.
          const bGateway = (await runningGateway(b)).node;
          const fromNode = bGateway === `${b.name}-n1` ? 2 : 1;
          const flow = podtoolFlow(b, fromNode, seen, FLOW_SECONDS);
          await flow.started;
          const flowStart = Date.now();
          await delay(LEAD_MS);
          await coreOf(cluster).deleteNamespacedPod({ name: old.name, namespace: SYSTEM_NAMESPACE });
          const deletedAt = Date.now();
          const move = await watchMove(cluster, old.name, ifname, deletedAt);
          const report = await flow.report;
          const to = (await runningGateway(cluster)).node;
          moves.push({ side, from: old.node, to, ...move, report, deleteAtMs: deletedAt - flowStart });
          log(`gateway-move: run ${run}, ${side}'s gateway pod deleted: ${JSON.stringify(moves.at(-1))}`);
        }
      }
      const of = (side: MoveRun["side"]) => moves.filter((m) => m.side === side);
      const seconds = (side: MoveRun["side"], label: string, pick: (m: MoveRun) => number | undefined) => {
        const samples = of(side)
          .map(pick)
          .filter((v): v is number => v !== undefined);
        return samples.length > 0 ? [series(label, "s", samples)] : [];
      };
      const lost = (side: MoveRun["side"]) => of(side).map((m) => m.report.longestGapMs / 1000);
      const perSide = (side: MoveRun["side"], name: string) => [
        series(`${name}'s gateway pod deleted: 200 ms pings unanswered`, "s", lost(side)),
        ...seconds(side, "  first answer after the delete", (m) =>
          m.report.resumedAtMs > 0 ? (m.report.resumedAtMs - m.deleteAtMs) / 1000 : undefined,
        ),
        ...seconds(side, "  new gateway pod seen", (m) => m.newPod),
        ...seconds(side, "  new gateway pod Running and ready", (m) => m.ready),
        ...seconds(side, "  every node's routes at its node", (m) => m.routes),
        ...seconds(side, "  its new WireGuard handshake (to 1 s)", (m) => m.handshake),
      ];
      return {
        series: [...perSide("client", "b (client)"), ...perSide("server", "a (server)")],
        targets: [
          target(
            `answers lost when the client's gateway pod is deleted ≤ ${LOSS_TARGET_S} s (worst run)`,
            Math.max(...lost("client")),
            "max",
            LOSS_TARGET_S,
          ),
          target(
            `answers lost when the server's gateway pod is deleted ≤ ${LOSS_TARGET_S} s (worst run)`,
            Math.max(...lost("server")),
            "max",
            LOSS_TARGET_S,
          ),
          target(
            "idle TCP connections that carried data after the move (of all runs)",
            moves.filter((m) => m.report.tcp === "echoed").length,
            "min",
            moves.length,
          ),
        ],
        details: { flowSeconds: FLOW_SECONDS, leadMs: LEAD_MS, moves },
      };
    } finally {
      if (sides) await deleteTunnel(sides, { force: true, timeoutMs: 60_000 }, quiet);
      if (record)
        await deletePeering(pair.consumerKubeconfig, record, pair.auth, { force: true, timeoutMs: 120_000 }, quiet);
      await pair.cleanup();
    }
  });
}
