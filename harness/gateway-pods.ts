/**
 * What the suites and the benchmark read of a cluster's gateway as it runs in a pod: where its pod
 * runs, its WireGuard status (read inside the pod: its sockets are the pod's own), and the routes
 * the route agents hold on each node.
 */
import { SYSTEM_NAMESPACE } from "../core/api/index.js";
import { COMPONENT_LABEL, GATEWAY_NAME, ROUTE_NAME } from "../core/cluster/agent-components.js";
import { poll } from "../core/wait/poll.js";
import { runIn } from "../host/exec.js";
import type { ClusterState } from "../local-cluster/lab.js";
import { coreOf, kubectl } from "../local-cluster/pods.js";
import { parseWireguardDump, type WireguardStatus } from "../agent/gateway/index.js";
import { EXEMPTION_CHAIN, parseExemptionState } from "../agent/route/masquerade-plan.js";
import { ROUTE_PROTO } from "../agent/route/plan.js";
import { GATEWAY_POD_SELECTOR } from "../agent/route/reconcile.js";

/** The WireGuard status of interface `ifname`, read inside `cluster`'s gateway pod (its sockets are the pod's own). */
export async function gatewayWireguard(cluster: ClusterState, ifname: string): Promise<WireguardStatus> {
  return parseWireguardDump(ifname, await inGatewayWg(cluster, [ifname, "dump"]));
}

/** `wg show ARGS` inside `cluster`'s gateway pod: its sockets are the pod's own. */
function inGatewayWg(cluster: ClusterState, args: readonly string[]): Promise<string> {
  return kubectl(cluster, ["exec", "-n", SYSTEM_NAMESPACE, `deploy/${GATEWAY_NAME}`, "--", "wg", "show", ...args]);
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

/** The route agents' masquerade exemptions on every node of `cluster` (`<node>: <rule>`), as iptables lists them. */
export async function projectExemptions(cluster: ClusterState): Promise<string[]> {
  const rules: string[] = [];
  for (const node of cluster.nodes) {
    const { rules: own } = parseExemptionState(await runIn(node.netns, "iptables", ["-w", "-t", "nat", "-S"]));
    for (const rule of own) rules.push(`${node.name}: -A ${EXEMPTION_CHAIN} ${rule}`);
  }
  return rules;
}

/**
 * What a failed flow check prints of `cluster`'s fabric: each node's routes, and the latest lines
 * (timestamped) of its gateway's and route agents' logs, so that a flow lost under load names the
 * node whose route was missing and when each agent acted. Best effort: a part it cannot read says why.
 */
export async function fabricSnapshot(cluster: ClusterState): Promise<string> {
  const parts: string[] = [];
  for (const node of cluster.nodes) {
    const routes = await runIn(node.netns, "ip", ["-4", "-o", "route", "show"]).catch((e: Error) => e.message);
    parts.push(`routes of ${node.name}:\n${routes.trim()}`);
    // The tunnel's own flows (WireGuard's port) and pings: where a stale entry holds packets.
    const tracked = await runIn(node.netns, "cat", ["/proc/net/nf_conntrack"]).catch((e: Error) => e.message);
    const lines = tracked.split("\n").filter((line) => /port=5182\d|icmp/.test(line));
    parts.push(
      `conntrack of ${node.name} (WireGuard ports, icmp; ${lines.length} lines):\n${lines.slice(0, 30).join("\n")}`,
    );
    // Its NAT: where a CNI's masquerade and the route agent's exemptions meet.
    const nat = await runIn(node.netns, "iptables", ["-w", "-t", "nat", "-S", "POSTROUTING"]).catch(
      (e: Error) => e.message,
    );
    const exempt = (await projectExemptions({ ...cluster, nodes: [node] }).catch((e: Error) => [e.message])).join("\n");
    parts.push(`nat POSTROUTING and exemptions of ${node.name}:\n${nat.trim()}\n${exempt}`);
  }
  const dump = await inGatewayWg(cluster, ["all"]).catch((e: Error) => e.message);
  parts.push(`wg show all in the gateway:\n${dump.trim()}`);
  for (const component of [GATEWAY_NAME, ROUTE_NAME]) {
    const selector = `${COMPONENT_LABEL}=${component}`;
    const logs = await kubectl(cluster, [
      ...["logs", "-n", SYSTEM_NAMESPACE, "-l", selector],
      ...["--timestamps", "--prefix", "--tail", "25", "--max-log-requests", "8"],
    ]).catch((e: Error) => e.message);
    parts.push(`logs of ${selector}:\n${logs.trim()}`);
  }
  return `${cluster.name}'s fabric\n${parts.join("\n")}`;
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
