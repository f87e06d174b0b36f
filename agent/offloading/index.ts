/**
 * Offloading, as the control role runs it: {@link offloadOnce} is the consumer's pass (namespaces
 * and pods sent to providers through the virtual nodes), {@link answerOffloadingRequests} the
 * provider's (provider-side.ts). A cluster may be both; each pass does nothing where its side has
 * nothing to do.
 */
import type * as k8s from "@kubernetes/client-node";
import { abandonedVirtualNodes, type NamespaceOffloading, type OutgoingPeering } from "../../core/api/index.js";
import { listTunnelEndpoints } from "../../core/network-fabric/endpoints.js";
import { listOffloading } from "../../core/offloading/objects.js";
import { ownPodRange, peerAddressView } from "../../core/offloading/reflection.js";
import { listOutgoingPeerings } from "../../core/virtual-node/outgoing-peering.js";
import { recentPeeringIdentity } from "../heartbeat.js";
import type { Reporter } from "../reporter.js";
import { advanceNamespaceOffloading, type ConsumerPeerings } from "./consumer-namespaces.js";
import { offloadedNamespaces, reflectPeeringPods } from "./consumer-pods.js";
import type { PeeringRoute } from "./consumer-shortcuts.js";
import { reflectPeeringServices } from "./consumer-services.js";
import { reflectPeeringClaims } from "./consumer-claims.js";
import { ProviderBackoffs } from "./provider-backoff.js";
import { advanceOffloadingSelectors } from "./selected-namespaces.js";

export { ConsumerShortcuts } from "./consumer-shortcuts.js";
export { answerOffloadingRequests } from "./provider-side.js";
export { answerServiceRequests } from "./provider-services.js";
export { answerClaimRequests } from "./provider-claims.js";
export { removeWithdrawnPod } from "./provider-withdrawal.js";

const STEP = "offloading (consumer)";

/** What the consumer pass found: whether to come back soon, and what the watches that wake it should look at. */
export interface ConsumerOffloadingPass {
  /** Something waits on a provider: pass again soon. */
  readonly pending: boolean;
  /** The virtual nodes it serves: a pod bound to one wakes it. */
  readonly virtualNodes: ReadonlySet<string>;
  /** The namespaces with pods on its virtual nodes: a ConfigMap or Secret changed in one wakes it (its copies follow). */
  readonly namespaces: ReadonlySet<string>;
  /** The peerings passed over, for the changes the watches name to be taken at once (consumer-shortcuts.ts). */
  readonly routes: readonly PeeringRoute[];
}

/** The agent's providers that failed lately: one set for the life of the agent, as its passes come and go. */
const backoffs = new ProviderBackoffs();

/**
 * Whether the pods of `offloading` are gone from every virtual node it names: those of a peering
 * that is gone, or that a forced delete gave up (its provider unreachable), count as gone here.
 * `withPods` holds the namespaces with pods on each virtual node passed over this time.
 */
export function isDrained(
  offloading: NamespaceOffloading,
  peeringNodes: ReadonlySet<string>,
  withPods: ReadonlyMap<string, ReadonlySet<string>>,
): boolean {
  const abandoned = abandonedVirtualNodes(offloading.metadata);
  const namespace = offloading.metadata.namespace!;
  return offloading.spec.virtualNodes.every(
    (node) =>
      !peeringNodes.has(node) || abandoned.has(node) || (withPods.has(node) && !withPods.get(node)!.has(namespace)),
  );
}

/**
 * One pass of the consumer's side: the OffloadingSelectors first (they write and delete
 * NamespaceOffloadings, which the rest of this pass then sees), pods on each virtual node next (so
 * that a namespace being withdrawn is drained), then each NamespaceOffloading. A peering whose provider cannot be reached
 * fails alone, without holding up the others, and is left be until its backoff is due; the
 * offloadings through it say so in their status.
 */
export async function offloadOnce(
  kc: k8s.KubeConfig,
  reporter: Reporter,
  now: () => number = Date.now,
): Promise<ConsumerOffloadingPass> {
  const selecting = await advanceOffloadingSelectors(kc, reporter).catch((error: unknown) => {
    reporter.warn(`${STEP}: ${(error as Error).message}`);
    return true;
  });
  const offloadings = await listOffloading<NamespaceOffloading>(kc, "namespaceoffloadings");
  if (!offloadings) return { pending: selecting, virtualNodes: new Set(), namespaces: new Set(), routes: [] };
  const peerings = (await listOutgoingPeerings(kc)).filter(
    (p: OutgoingPeering) => !p.metadata.deletionTimestamp && (!p.spec.inBand || p.status?.offer),
  );
  const virtualNodes = new Set(peerings.map((p) => p.spec.virtualNodeName));
  if (offloadings.length === 0 && peerings.length === 0)
    return { pending: selecting, virtualNodes, namespaces: new Set(), routes: [] };
  const endpoints = await listTunnelEndpoints(kc, STEP);
  const passStarted = now();
  backoffs.keepOnly(peerings);
  const context: ConsumerPeerings = {
    byVirtualNode: new Map(peerings.map((p) => [p.spec.virtualNodeName, p])),
    identityOf: (peering) => recentPeeringIdentity(kc, peering, passStarted),
    failing: (peering, remoteNamespace) => backoffs.reportOf(peering, remoteNamespace),
  };
  let pending = selecting;
  const withPods = new Map<string, Set<string>>();
  const routes: PeeringRoute[] = [];
  for (const peering of peerings) {
    if (!backoffs.due(peering, now())) {
      pending = true; // Its pause is not over: the pass after it tries again.
      continue;
    }
    try {
      const reach = {
        peering,
        provider: await context.identityOf(peering),
        view: peerAddressView(endpoints, peering.spec.providerClusterId),
      };
      const pass = await reflectPeeringPods(kc, reach, offloadings, reporter);
      await reflectPeeringServices(kc, reach, offloadings, ownPodRange(endpoints, peering.spec.providerClusterId));
      pending = (await reflectPeeringClaims(kc, reach, offloadings, reporter)) || pending;
      pending ||= pass.pending;
      withPods.set(peering.spec.virtualNodeName, new Set(pass.namespacesWithPods));
      routes.push({
        virtualNode: peering.spec.virtualNodeName,
        provider: reach.provider,
        tenant: peering.spec.tenantNamespace,
        remoteNamespaces: offloadedNamespaces(offloadings, peering.spec.virtualNodeName),
        copies: pass.copies,
      });
      backoffs.succeeded(peering, reporter);
    } catch (error) {
      backoffs.failed(peering, error, now(), reporter);
      pending = true;
    }
  }
  const peeringNodes = new Set(context.byVirtualNode.keys());
  for (const offloading of offloadings) {
    const namespace = offloading.metadata.namespace!;
    const drained = isDrained(offloading, peeringNodes, withPods);
    try {
      pending = (await advanceNamespaceOffloading(kc, offloading, context, drained, reporter)) || pending;
    } catch (error) {
      reporter.warn(
        `${STEP}: NamespaceOffloading ${namespace}/${offloading.metadata.name}: ${(error as Error).message}`,
      );
      pending = true;
    }
  }
  const namespaces = new Set([...withPods.values()].flatMap((inNode) => [...inNode]));
  return { pending, virtualNodes, namespaces, routes };
}
