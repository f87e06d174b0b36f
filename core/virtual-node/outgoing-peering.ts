/**
 * The consumer's record of each peering: the OutgoingPeering in its system namespace, recorded
 * with the virtual node. The agent keeps it alive (the heartbeat keeps the virtual node Ready and
 * follows the offer; renewal and in-band peering write its status), and the tunnel, the offloading
 * and a cluster's uninstall read it to find the peerings a consumer holds.
 */
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  SYSTEM_NAMESPACE,
  type IdentityStatus,
  type OutgoingPeering,
} from "../api/index.js";
import { describeFailure, ensureObject, isNotFound, readOptional, serverOf } from "../kube/client.js";

/** Name of the OutgoingPeering towards provider `providerClusterId`. */
export const outgoingPeeringName = (providerClusterId: string): string => `to-${providerClusterId}`;

/** Records the peering for the consumer's agent (heartbeat, offer following). */
export async function ensureOutgoingPeering(consumer: k8s.KubeConfig, spec: OutgoingPeering["spec"]): Promise<void> {
  const peering: OutgoingPeering = {
    apiVersion: API_GROUP_VERSION,
    kind: "OutgoingPeering",
    metadata: {
      name: outgoingPeeringName(spec.providerClusterId),
      namespace: SYSTEM_NAMESPACE,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: spec.providerClusterId },
    },
    spec,
  };
  await ensureObject(consumer, peering).catch(
    describeFailure(`virtual node: recording OutgoingPeering ${peering.metadata.name}`, serverOf(consumer)),
  );
}

/** The OutgoingPeerings of this cluster, or none while the CRD is not installed. */
export async function listOutgoingPeerings(kc: k8s.KubeConfig): Promise<OutgoingPeering[]> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  try {
    const list = (await api.listNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: SYSTEM_NAMESPACE,
      plural: "outgoingpeerings",
    })) as { items: OutgoingPeering[] };
    return list.items;
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
}

/** Writes an OutgoingPeering's status (merge patch on the status subresource). */
export async function writeOutgoingPeeringStatus(
  kc: k8s.KubeConfig,
  peering: OutgoingPeering,
  status: NonNullable<OutgoingPeering["status"]>,
): Promise<void> {
  await patchStatus(kc, peering.metadata.name!, { message: null, ...status }, "the status");
}

/** Reads the OutgoingPeering towards provider `providerClusterId`, if any. */
export async function getOutgoingPeering(
  kc: k8s.KubeConfig,
  providerClusterId: string,
): Promise<OutgoingPeering | undefined> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const name = outgoingPeeringName(providerClusterId);
  return (await readOptional(() =>
    api.getNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: SYSTEM_NAMESPACE,
      plural: "outgoingpeerings",
      name,
    }),
  ).catch(describeFailure(`reading OutgoingPeering ${SYSTEM_NAMESPACE}/${name}`, serverOf(kc)))) as
    OutgoingPeering | undefined;
}

/** Merges `identity` into an OutgoingPeering's `status.identity` (a null field is removed), leaving the rest of its status alone. */
export async function writeIdentityStatus(
  kc: k8s.KubeConfig,
  name: string,
  identity: { readonly [K in keyof IdentityStatus]: IdentityStatus[K] | null },
): Promise<void> {
  await patchStatus(kc, name, { identity }, "the identity status");
}

/** Merge-patches `status` into OutgoingPeering `name`'s status subresource; `what` names the write in its failure. */
async function patchStatus(kc: k8s.KubeConfig, name: string, status: object, what: string): Promise<void> {
  await kc
    .makeApiClient(k8s.CustomObjectsApi)
    .patchNamespacedCustomObjectStatus(
      {
        group: API_GROUP,
        version: API_VERSION,
        namespace: SYSTEM_NAMESPACE,
        plural: "outgoingpeerings",
        name,
        body: { status },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )
    .catch(describeFailure(`writing ${what} of OutgoingPeering ${SYSTEM_NAMESPACE}/${name}`, serverOf(kc)));
}
