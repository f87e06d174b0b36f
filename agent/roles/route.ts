/**
 * The route role: on every node (a hostNetwork DaemonSet), the routes that send the remote
 * clusters' ranges to the gateway's node (agent/route/). Woken by the gateway's pods moving, nodes
 * changing address and TunnelEndpoints coming, changing or going; and the NAT exemptions that keep
 * a CNI's masquerade off traffic to and from the remote ranges (agent/route/masquerade-plan.ts). On
 * SIGTERM it removes both.
 */
import type { KubeConfig, V1Node } from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { COMPONENT_LABEL, GATEWAY_NAME } from "../../core/cluster/agent-components.js";
import { runLoop, Wakeup } from "../loop.js";
import type { Reporter } from "../reporter.js";
import { reconcileNodeRoutes, type NodePassPlan } from "../route/reconcile.js";
import { RetryNow, wakeOnChanges } from "../watch.js";
import { collection } from "./common.js";
import { internalIpOf } from "../../core/kube/nodes.js";

/** The resync when nothing wakes the loop. */
const RESYNC_MS = 30_000;

/** Where the route role works. */
export interface RouteRoleOptions {
  /** The cluster's API. */
  readonly kc: KubeConfig;
  /** This node's name, from the downward API. */
  readonly nodeName: string;
  /** Ends the loop; its routes are then removed. */
  readonly signal: AbortSignal;
  readonly reporter: Reporter;
}

const describePlan = (plan: NodePassPlan): string =>
  [
    ...plan.add.map((r) => `+${r.destination} via ${r.via}`),
    ...plan.remove.map((destination) => `-${destination}`),
    ...plan.exemptions.add.map((rule) => `+nat exemption ${rule}`),
    ...plan.exemptions.remove.map((rule) => `-nat exemption ${rule}`),
  ].join(", ");

/** Whether a watched pod is the gateway's. */
const isGatewayPod = (_type: string, object: unknown): boolean =>
  (object as { metadata?: { labels?: Record<string, string> } } | undefined)?.metadata?.labels?.[COMPONENT_LABEL] ===
  GATEWAY_NAME;

/**
 * Whether a watched node event changes a node's InternalIP (or removes the node): a node's status
 * is written every 10 s by its kubelet, and none of those writes should cost a pass.
 */
function internalIpChanges(): (type: string, object: unknown) => boolean {
  const seen = new Map<string, string | undefined>();
  return (type, object) => {
    const node = object as V1Node | undefined;
    const name = node?.metadata?.name ?? "";
    const ip = type === "DELETED" ? undefined : internalIpOf(node);
    const changed = !seen.has(name) || seen.get(name) !== ip;
    seen.set(name, ip);
    return changed;
  };
}

/** Runs the route role until `signal` aborts, then removes the routes it holds. */
export async function runRouteRole(options: RouteRoleOptions): Promise<void> {
  const { kc, nodeName, signal, reporter } = options;
  const wakeup = new Wakeup();
  const watching = { signal, retryNow: new RetryNow(), reporter };
  const wake = (): void => wakeup.wake();
  const report = (plan: NodePassPlan): void => {
    const changes = describePlan(plan);
    if (changes) reporter.info(`route ${nodeName}: ${changes}`);
  };
  reporter.info(`route ${nodeName}: started`);
  await Promise.all([
    wakeOnChanges(kc, `/api/v1/namespaces/${SYSTEM_NAMESPACE}/pods`, wake, { ...watching, relevant: isGatewayPod }),
    wakeOnChanges(kc, "/api/v1/nodes", wake, { ...watching, relevant: internalIpChanges() }),
    wakeOnChanges(kc, collection("tunnelendpoints"), wake, watching),
    runLoop({ name: "route", intervalMs: RESYNC_MS, signal, reporter, wakeup }, async () =>
      report(await reconcileNodeRoutes(kc, nodeName)),
    ),
  ]);
  const plan = await reconcileNodeRoutes(kc, nodeName, { stopping: true });
  reporter.info(
    `route ${nodeName}: stopped; removed ${[...plan.remove, ...plan.exemptions.remove.map((r) => `nat exemption ${r}`)].join(", ") || "nothing"}`,
  );
}
