/**
 * What a consumer may store in its tenant namespace on a provider: a ResourceQuota of object
 * counts of the project's kinds, enforced by the provider's API server itself (no agent of ours
 * needs to be up for it to hold). Applied when an identity is issued, before its RoleBinding, and
 * kept at each renewal.
 *
 * The counts come from what peerings need, with room to spare: ResourceRequests 4 and
 * TunnelEndpoints 4 (one of each per peering; a replacement is made before the old one goes),
 * RemoteNamespaces 32 (offloaded namespaces), OffloadedPods 1024 (pods asked for at once; the
 * provider's agent refuses those past the offer, but each is stored).
 *
 * The quota controller counts a custom kind only once its discovery has found it (see
 * core/kube/quota.ts). So `Cluster` puts a quota on its system namespace too
 * ({@link forgeSystemQuota}), right after the custom resource definitions, and waits at the end of
 * its install until it is counted: from then on the controller knows the kinds, and every tenant's
 * quota is counted as soon as it is made.
 */
import type * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  SYSTEM_NAMESPACE,
  tenantNamespace,
} from "../api/names.js";
import { ensureObjectQuota, forgeObjectCountQuota } from "../kube/quota.js";

/** Name of the ResourceQuota in a tenant namespace and in each remote namespace. */
export const CONSUMER_QUOTA = "pulumi-liqo-consumer";

/** How many objects of each of the project's kinds a consumer may keep in its tenant namespace. */
export const TENANT_OBJECT_LIMITS: Readonly<Record<string, number>> = {
  resourcerequests: 4,
  tunnelendpoints: 4,
  remotenamespaces: 32,
  offloadedpods: 1024,
  reflectedservices: 256,
  reflectedclaims: 256,
};

/** Name of the quota of the system namespace. */
export const SYSTEM_QUOTA = "pulumi-liqo-objects";

/** The quota of consumer `consumerClusterId`'s tenant namespace. */
export function forgeTenantQuota(consumerClusterId: string): k8s.V1ResourceQuota {
  return forgeObjectCountQuota({
    namespace: tenantNamespace(consumerClusterId),
    name: CONSUMER_QUOTA,
    labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: consumerClusterId },
    group: API_GROUP,
    limits: TENANT_OBJECT_LIMITS,
  });
}

/**
 * The quota of the project's system namespace: generous bounds on its own objects there, and the
 * sign that the quota controller counts the project's kinds (see the module's comment).
 */
export function forgeSystemQuota(): k8s.V1ResourceQuota {
  return forgeObjectCountQuota({
    namespace: SYSTEM_NAMESPACE,
    name: SYSTEM_QUOTA,
    labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
    group: API_GROUP,
    limits: Object.fromEntries(Object.keys(TENANT_OBJECT_LIMITS).map((plural) => [plural, 10_000])),
  });
}

/**
 * Applies the system namespace's quota and waits until the quota controller counts it: from then
 * on it knows the project's kinds (see the module's comment). The last step of a cluster's install.
 */
export function waitForProjectKindsCounted(kc: k8s.KubeConfig, step: string, timeoutMs: number): Promise<void> {
  return ensureObjectQuota(kc, forgeSystemQuota(), step, { timeoutMs, remakeUncounted: true });
}
