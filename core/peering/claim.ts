/**
 * One pair, one peering: the consumer cluster records which `Peering` resource (by URN) peers it
 * with each provider, in a ConfigMap of its system namespace, before anything else is done. A
 * second `Peering` of the same pair would share the first's identity and virtual node, and deleting
 * it would tear the first down; it is refused instead, naming the first. `create` makes the claim
 * atomic, so two Peerings created at once in one program cannot both win.
 */
import * as k8s from "@kubernetes/client-node";
import { MANAGED_BY, MANAGED_BY_LABEL, REMOTE_CLUSTER_LABEL, SYSTEM_NAMESPACE, describeOwner } from "../api/names.js";
import { deleteOptional, describeFailure, readOptional, serverOf } from "../kube/client.js";
import { statusOf } from "../kube/errors.js";

/** Name of the claim on the peering with provider `providerClusterId`. */
export const peeringClaimName = (providerClusterId: string): string => `peering-claim-${providerClusterId}`;

/** An operation refused before it changed anything: the engine must not record a resource for it. */
export class RefusedBeforeChangeError extends Error {
  /** Brand for checks across copies of this module (no `instanceof`). */
  readonly nothingChanged = true;
}

/** Whether `error` is a {@link RefusedBeforeChangeError}. */
export function isRefusedBeforeChange(error: unknown): boolean {
  return (error as { nothingChanged?: unknown } | undefined)?.nothingChanged === true;
}

/** What the claim on the peering with provider `providerClusterId` says (the URN of its holder), if any. */
export function readPeeringClaim(consumer: k8s.KubeConfig, providerClusterId: string): Promise<string | undefined> {
  return readClaim(consumer, peeringClaimName(providerClusterId));
}

/** What the claim says, read with a client of the consumer. */
async function readClaim(consumer: k8s.KubeConfig, name: string): Promise<string | undefined> {
  const claim = await readOptional(() =>
    consumer.makeApiClient(k8s.CoreV1Api).readNamespacedConfigMap({ name, namespace: SYSTEM_NAMESPACE }),
  ).catch(describeFailure(`peering: reading ConfigMap ${SYSTEM_NAMESPACE}/${name}`, serverOf(consumer)));
  return claim?.data?.["owner"];
}

/**
 * Claims the peering of this consumer with `provider` for the resource `owner` (its URN), or throws
 * a {@link RefusedBeforeChangeError} naming the resource that holds it. A claim held by `takenFrom`,
 * which `owner` was imported from, passes to `owner`. Without an owner (a caller outside the
 * engine) nothing is claimed or checked.
 */
export async function claimPeering(
  consumer: k8s.KubeConfig,
  provider: { readonly clusterId: string; readonly clusterName?: string },
  owner: string | undefined,
  takenFrom?: string,
): Promise<void> {
  if (!owner) return;
  const name = peeringClaimName(provider.clusterId);
  const body: k8s.V1ConfigMap = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace: SYSTEM_NAMESPACE,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: provider.clusterId },
    },
    data: { owner },
  };
  try {
    await consumer.makeApiClient(k8s.CoreV1Api).createNamespacedConfigMap({ namespace: SYSTEM_NAMESPACE, body });
    return;
  } catch (error) {
    if (statusOf(error) !== 409)
      describeFailure(`peering: creating ConfigMap ${SYSTEM_NAMESPACE}/${name}`, serverOf(consumer))(error);
  }
  const holder = await readClaim(consumer, name);
  if (holder !== undefined && holder === takenFrom) {
    await consumer
      .makeApiClient(k8s.CoreV1Api)
      .patchNamespacedConfigMap(
        { name, namespace: SYSTEM_NAMESPACE, body: { data: { owner } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      )
      .catch(describeFailure(`peering: taking over ConfigMap ${SYSTEM_NAMESPACE}/${name}`, serverOf(consumer)));
    return;
  }
  if (holder === undefined || holder === owner) return;
  throw new RefusedBeforeChangeError(
    `peering: the consumer at ${serverOf(consumer)} already peers with provider ` +
      `${provider.clusterName ?? provider.clusterId} (${provider.clusterId}) through Peering ${describeOwner(holder)}; ` +
      `a pair of clusters peers once: use that Peering's outputs, or delete it first (nothing was changed)`,
  );
}

/** Releases the claim on the peering with provider `providerClusterId`, if `owner` holds it (or, without an owner, whoever does). */
export async function releasePeeringClaim(
  consumer: k8s.KubeConfig,
  providerClusterId: string,
  owner?: string,
): Promise<void> {
  const name = peeringClaimName(providerClusterId);
  if (owner && (await readClaim(consumer, name)) !== owner) return;
  await deleteOptional(() =>
    consumer.makeApiClient(k8s.CoreV1Api).deleteNamespacedConfigMap({ name, namespace: SYSTEM_NAMESPACE }),
  ).catch(describeFailure(`cleanup: deleting ConfigMap ${SYSTEM_NAMESPACE}/${name}`, serverOf(consumer)));
}
