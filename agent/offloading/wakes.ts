/**
 * Which watch events wake the offloading passes. A pass relists everything it works on, which at
 * hundreds of pods is the larger part of its cost: it is woken by what it acts on (a pod bound to a
 * virtual node, a request made, changed or withdrawn, a pod gone or finished, a tunnel up or down),
 * not by the status writes that follow every pod's start (its own answers and the consumer pods'
 * statuses, which it writes itself, and the kubelets' reports), which a pass would only read again.
 */
import type { OffloadedPod, TunnelEndpoint } from "../../core/api/index.js";
import type * as k8s from "@kubernetes/client-node";
import { hasFinished } from "../../core/offloading/budget.js";
import { stateChanges } from "../watch.js";

/** When an object was marked for deletion: a delete under way changes what a pass does. */
const deleting = (metadata: k8s.V1ObjectMeta | undefined): string => String(metadata?.deletionTimestamp ?? "");

/**
 * Consumer pods on a virtual node: bound there, deleted or being deleted, or a change of the spec,
 * labels or annotations that their requests carry.
 */
export function consumerPodChanges(): (type: string, object: unknown) => boolean {
  return stateChanges<k8s.V1Pod>((pod) =>
    JSON.stringify([
      pod.spec?.nodeName,
      pod.metadata?.generation,
      deleting(pod.metadata),
      pod.metadata?.labels,
      pod.metadata?.annotations,
    ]),
  );
}

/** OffloadedPods, on the provider: made, changed by their consumer, or withdrawn (not the provider's own answers). */
export function offloadedPodChanges(): (type: string, object: unknown) => boolean {
  return stateChanges<OffloadedPod>((request) =>
    JSON.stringify([request.metadata.generation, deleting(request.metadata)]),
  );
}

/** The pods the provider made for consumers: gone, being deleted, or finished (they stop counting against an offer). */
export function providerPodChanges(): (type: string, object: unknown) => boolean {
  return stateChanges<k8s.V1Pod>((pod) => JSON.stringify([deleting(pod.metadata), hasFinished(pod)]));
}

/**
 * TunnelEndpoints: whether the tunnel is up, or where its peer answers. A gateway rewrites its
 * status (the handshake's time, the round trip) every few seconds, and none of those writes should
 * cost the offloading a pass.
 */
export function tunnelStateChanges(): (type: string, object: unknown) => boolean {
  return stateChanges<TunnelEndpoint>(
    (endpoint) => `${endpoint.status?.phase}/${endpoint.status?.remoteTunnelAddress}`,
  );
}
