/**
 * The route agent's I/O around its pure plan (plan.ts): what the cluster says (the gateway's pod
 * and node, the TunnelEndpoints), the routes this node holds with the agent's `proto`, and the
 * `ip route` calls that bring the one to the other. Runs in the node's network namespace, which a
 * hostNetwork pod is in.
 */
import * as k8s from "@kubernetes/client-node";
import { run, type CommandError } from "../../host/exec.js";
import { SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { COMPONENT_LABEL, GATEWAY_NAME } from "../../core/cluster/agent-components.js";
import { describeFailure, readOptional, serverOf } from "../../core/kube/client.js";
import { listTunnelEndpoints } from "../../core/network-fabric/endpoints.js";
import {
  gatewayNodeOf,
  parseNodeRoutes,
  planNodeRoutes,
  ROUTE_PROTO,
  type NodeRoute,
  type NodeRoutePlan,
} from "./plan.js";
import { internalIpOf } from "../../core/kube/nodes.js";
import {
  EXEMPTION_CHAIN,
  EXEMPTION_JUMP,
  exemptionRules,
  parseExemptionState,
  planExemptions,
  type ExemptionPlan,
} from "./masquerade-plan.js";

const STEP = "route";

/** The label selector of the gateway's pods. */
export const GATEWAY_POD_SELECTOR = `${COMPONENT_LABEL}=${GATEWAY_NAME}`;

/** The routes this node holds with the route agent's `proto`. */
export async function readNodeRoutes(): Promise<NodeRoute[]> {
  return parseNodeRoutes(await run("ip", ["-4", "-o", "route", "show", "table", "main", "proto", String(ROUTE_PROTO)]));
}

/** Applies a plan: `ip route replace <cidr> via <ip> proto <ours>` for each route to add, `ip route del` for each to remove. */
export async function applyNodeRoutePlan(plan: NodeRoutePlan): Promise<void> {
  for (const { destination, via } of plan.add)
    await run("ip", ["route", "replace", destination, "via", via, "proto", String(ROUTE_PROTO)]);
  for (const destination of plan.remove) {
    await run("ip", ["route", "del", destination, "proto", String(ROUTE_PROTO)]).catch((error: CommandError) => {
      // Gone already (its link went, or someone removed it): that is what was wanted.
      if (!/No such process/.test(error.stderr)) throw error;
    });
  }
}

/** Runs `iptables -w -t nat ARGS`, resolving whether it succeeded when `tolerated` matches what it printed. */
async function natTable(args: readonly string[], tolerated?: RegExp): Promise<boolean> {
  return run("iptables", ["-w", "-t", "nat", ...args]).then(
    () => true,
    (error: CommandError) => {
      if (tolerated?.test(error.stderr)) return false;
      throw error;
    },
  );
}

/**
 * Brings the node's masquerade exemptions (masquerade-plan.ts) to the ranges `remoteCidrs`: the
 * chain, the jump to it first in POSTROUTING, and its rules. With no range (no peer; a stopping
 * agent passes none), removes all three.
 */
export async function reconcileMasqueradeExemptions(remoteCidrs: readonly string[]): Promise<ExemptionPlan> {
  const missing = /No chain|does not exist|Bad rule|No such file/i;
  const wanted = exemptionRules(remoteCidrs);
  const { exists, jumped, rules } = parseExemptionState(await run("iptables", ["-w", "-t", "nat", "-S"]));
  if (wanted.length === 0) {
    if (!exists) return { add: [], remove: [] };
    while (await natTable(["-D", "POSTROUTING", ...EXEMPTION_JUMP], missing));
    await natTable(["-F", EXEMPTION_CHAIN], missing);
    await natTable(["-X", EXEMPTION_CHAIN], missing);
    return { add: [], remove: rules };
  }
  if (!exists) await natTable(["-N", EXEMPTION_CHAIN], /already exists/);
  // First in POSTROUTING, before any CNI's masquerade; put there once (a CNI that later inserts
  // its own rule first keeps it there: such a rule is the CNI's to own).
  if (!jumped) await natTable(["-I", "POSTROUTING", "1", ...EXEMPTION_JUMP]);
  const plan = planExemptions(wanted, rules);
  for (const rule of plan.add) await natTable(["-A", EXEMPTION_CHAIN, ...rule.split(" ")]);
  for (const rule of plan.remove) await natTable(["-D", EXEMPTION_CHAIN, ...rule.split(" ")], missing);
  return plan;
}

/** The gateway's node and that node's InternalIP, as the cluster says; undefined when there is no such pod or address. */
async function readGatewayNode(kc: k8s.KubeConfig): Promise<{ nodeName: string; internalIp: string } | undefined> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const endpoint = serverOf(kc);
  const pods = await core
    .listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: GATEWAY_POD_SELECTOR })
    .catch(describeFailure(`${STEP}: listing the gateway's pods (${GATEWAY_POD_SELECTOR})`, endpoint));
  const nodeName = gatewayNodeOf(
    pods.items.map((pod) => ({
      nodeName: pod.spec?.nodeName || undefined,
      deleting: pod.metadata?.deletionTimestamp !== undefined,
      phase: pod.status?.phase,
      createdAt: new Date(pod.metadata?.creationTimestamp ?? 0).toISOString(),
    })),
  );
  if (!nodeName) return undefined;
  const node = await readOptional(() => core.readNode({ name: nodeName })).catch(
    describeFailure(`${STEP}: reading the gateway's node ${nodeName}`, endpoint),
  );
  const internalIp = internalIpOf(node);
  return internalIp ? { nodeName, internalIp } : undefined;
}

/** What one pass of the route agent did: the routes, and the masquerade exemptions. */
export type NodePassPlan = NodeRoutePlan & { readonly exemptions: ExemptionPlan };

/**
 * One pass: reads the facts, plans, applies the routes and the masquerade exemptions. With
 * `stopping` (on SIGTERM) it removes every route and exemption of its own. Resolves the plans applied.
 */
export async function reconcileNodeRoutes(
  kc: k8s.KubeConfig,
  nodeName: string,
  options: { readonly stopping?: true } = {},
): Promise<NodePassPlan> {
  const present = await readNodeRoutes();
  const [gateway, endpoints] = options.stopping
    ? [undefined, []]
    : await Promise.all([readGatewayNode(kc), listTunnelEndpoints(kc, STEP)]);
  const remoteCidrs = endpoints
    .filter((e) => !e.metadata.deletionTimestamp)
    .flatMap((e) => [e.status?.remotePodCidrAsSeen, e.status?.remoteExternalCidrAsSeen, e.status?.remoteTunnelAddress])
    .filter((cidr): cidr is string => !!cidr);
  const plan = planNodeRoutes({ nodeName, gateway, remoteCidrs, present });
  await applyNodeRoutePlan(plan);
  return { ...plan, exemptions: await reconcileMasqueradeExemptions(remoteCidrs) };
}
