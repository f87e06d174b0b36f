/**
 * The consumer's own records of a peering, in its system namespace: the identity issued by the
 * provider (a Secret, so the key never leaves the consumer cluster and never enters Pulumi state)
 * and the OutgoingPeering its agent keeps alive.
 */
import * as k8s from "@kubernetes/client-node";
import { API_GROUP, API_GROUP_VERSION, API_VERSION, MANAGED_BY, MANAGED_BY_LABEL, REMOTE_CLUSTER_LABEL, SYSTEM_NAMESPACE, type OutgoingPeering } from "../api/index.js";
import { deleteOptional, describeFailure, ensureObject, isNotFound, readOptional, serverOf } from "../kube/client.js";
import { releasePeeringClaim } from "./claim.js";

/** Name of the Secret holding the identity for provider `providerClusterId`. */
export const identitySecretName = (providerClusterId: string): string => `identity-${providerClusterId}`;
/** Name of the OutgoingPeering towards provider `providerClusterId`. */
export const outgoingPeeringName = (providerClusterId: string): string => `to-${providerClusterId}`;

/** Stores the identity's kubeconfig in the consumer cluster. */
export async function ensureIdentitySecret(consumer: k8s.KubeConfig, providerClusterId: string, kubeconfig: string): Promise<string> {
  const name = identitySecretName(providerClusterId);
  await ensureObject(consumer, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: SYSTEM_NAMESPACE, labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: providerClusterId } },
    type: "Opaque",
    data: { kubeconfig: Buffer.from(kubeconfig, "utf8").toString("base64") },
  } as k8s.V1Secret).catch(describeFailure(`authentication: storing the identity Secret ${SYSTEM_NAMESPACE}/${name}`, serverOf(consumer)));
  return name;
}

/** Reads the identity kubeconfig stored for provider `providerClusterId`, if any. */
export async function getIdentityKubeconfig(consumer: k8s.KubeConfig, providerClusterId: string): Promise<string | undefined> {
  const secret = await readOptional(() => consumer.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ name: identitySecretName(providerClusterId), namespace: SYSTEM_NAMESPACE }));
  const data = secret?.data?.["kubeconfig"];
  return data ? Buffer.from(data, "base64").toString("utf8") : undefined;
}

/** Records the peering for the consumer's agent (heartbeat, offer following). */
export async function ensureOutgoingPeering(consumer: k8s.KubeConfig, spec: OutgoingPeering["spec"]): Promise<void> {
  const peering: OutgoingPeering = {
    apiVersion: API_GROUP_VERSION,
    kind: "OutgoingPeering",
    metadata: { name: outgoingPeeringName(spec.providerClusterId), namespace: SYSTEM_NAMESPACE, labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: spec.providerClusterId } },
    spec,
  };
  await ensureObject(consumer, peering).catch(describeFailure(`virtual node: recording OutgoingPeering ${peering.metadata.name}`, serverOf(consumer)));
}

/** Removes the consumer's records of the peering (OutgoingPeering, the identity Secret, then the claim on the pair). */
export async function deleteConsumerRecords(consumer: k8s.KubeConfig, providerClusterId: string): Promise<void> {
  const custom = consumer.makeApiClient(k8s.CustomObjectsApi);
  const core = consumer.makeApiClient(k8s.CoreV1Api);
  const fail = describeFailure(`cleanup: removing the records of the peering with ${providerClusterId}`, serverOf(consumer));
  await deleteOptional(() =>
    custom.deleteNamespacedCustomObject({ group: API_GROUP, version: API_VERSION, namespace: SYSTEM_NAMESPACE, plural: "outgoingpeerings", name: outgoingPeeringName(providerClusterId) }),
  ).catch(fail);
  await deleteOptional(() => core.deleteNamespacedSecret({ name: identitySecretName(providerClusterId), namespace: SYSTEM_NAMESPACE })).catch(fail);
  await releasePeeringClaim(consumer, providerClusterId);
}

/** The OutgoingPeerings of this cluster, or none while the CRD is not installed. */
export async function listOutgoingPeerings(kc: k8s.KubeConfig): Promise<OutgoingPeering[]> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  try {
    const list = (await api.listNamespacedCustomObject({ group: API_GROUP, version: API_VERSION, namespace: SYSTEM_NAMESPACE, plural: "outgoingpeerings" })) as { items: OutgoingPeering[] };
    return list.items;
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
}

/**
 * What still uses a cluster in peerings: its outgoing peerings (as consumer) and the tenant
 * namespaces of its consumers (as provider). Empty when the cluster can be uninstalled.
 */
export async function getPeeringsUsing(kc: k8s.KubeConfig): Promise<string[]> {
  const outgoing = (await listOutgoingPeerings(kc)).map((p) => `outgoing peering to ${p.spec.providerClusterName} (${p.spec.providerClusterId})`);
  const namespaces = await kc.makeApiClient(k8s.CoreV1Api).listNamespace({ labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY},${REMOTE_CLUSTER_LABEL}` });
  const incoming = namespaces.items.map((ns) => `incoming peering from consumer ${ns.metadata?.labels?.[REMOTE_CLUSTER_LABEL]} (namespace ${ns.metadata?.name})`);
  return [...outgoing, ...incoming];
}

/** Writes an OutgoingPeering's status (merge patch on the status subresource). */
export async function writeOutgoingPeeringStatus(kc: k8s.KubeConfig, peering: OutgoingPeering, status: NonNullable<OutgoingPeering["status"]>): Promise<void> {
  const name = peering.metadata.name!;
  await kc
    .makeApiClient(k8s.CustomObjectsApi)
    .patchNamespacedCustomObjectStatus(
      { group: API_GROUP, version: API_VERSION, namespace: SYSTEM_NAMESPACE, plural: "outgoingpeerings", name, body: { status: { message: null, ...status } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )
    .catch(describeFailure(`writing the status of OutgoingPeering ${SYSTEM_NAMESPACE}/${name}`, serverOf(kc)));
}

/** Reads the OutgoingPeering towards provider `providerClusterId`, if any. */
export async function getOutgoingPeering(kc: k8s.KubeConfig, providerClusterId: string): Promise<OutgoingPeering | undefined> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const name = outgoingPeeringName(providerClusterId);
  return (await readOptional(() => api.getNamespacedCustomObject({ group: API_GROUP, version: API_VERSION, namespace: SYSTEM_NAMESPACE, plural: "outgoingpeerings", name })).catch(
    describeFailure(`reading OutgoingPeering ${SYSTEM_NAMESPACE}/${name}`, serverOf(kc)),
  )) as OutgoingPeering | undefined;
}
