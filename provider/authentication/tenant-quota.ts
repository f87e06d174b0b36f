/**
 * What a consumer may store on a provider: a ResourceQuota of object counts in each namespace its
 * identity may create objects in, enforced by the provider's API server itself (no agent of ours
 * needs to be up for it to hold). Forgers are pure; {@link ensureObjectQuota} applies one and waits
 * until the quota controller has counted what is there, since until then the API server refuses
 * every create of a counted kind ("status unknown for quota").
 *
 * The counts come from what peerings need, with room to spare:
 *
 *   tenant namespace  ResourceRequests 4, TunnelEndpoints 4 (one of each per peering; a
 *                     replacement is made before the old one goes), RemoteNamespaces 32
 *                     (offloaded namespaces), OffloadedPods 1024 (pods asked for at once; the
 *                     provider's agent refuses those past the offer, but each is stored)
 *   remote namespace  ConfigMaps 128, Secrets 128 (the objects the consumer's pods read, reflected)
 *
 * A count bounds how many objects; the API server bounds each one's size (about 1.5 MiB).
 *
 * The quota controller counts a custom kind only once its discovery (every 30 s) has found it:
 * until then a quota naming it makes the API server refuse every create of that kind. So `Cluster`
 * puts a quota on the system namespace too ({@link forgeSystemQuota}), right after the custom
 * resource definitions, and waits at the end of its install until it is counted: the first
 * identity issued then finds its tenant's quota counted at once.
 */
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  SYSTEM_NAMESPACE,
  tenantNamespace,
} from "../api/names.js";
import { describeFailure, ensureObject, serverOf } from "../kube/client.js";
import { poll } from "../wait/poll.js";

/** Name of the ResourceQuota in a tenant namespace and in each remote namespace. */
export const CONSUMER_QUOTA = "pulumi-liqo-consumer";

/** How many objects of each of the project's kinds a consumer may keep in its tenant namespace. */
export const TENANT_OBJECT_LIMITS: Readonly<Record<string, number>> = {
  resourcerequests: 4,
  tunnelendpoints: 4,
  remotenamespaces: 32,
  offloadedpods: 1024,
};

/** How many ConfigMaps and Secrets a consumer may keep in each of its remote namespaces. */
export const REMOTE_NAMESPACE_OBJECT_LIMITS: Readonly<Record<string, number>> = {
  configmaps: 128,
  secrets: 128,
};

/** Generous bounds on the project's own objects in its system namespace (see {@link forgeSystemQuota}). */
export const SYSTEM_OBJECT_LIMITS: Readonly<Record<string, number>> = Object.fromEntries(
  Object.keys(TENANT_OBJECT_LIMITS).map((plural) => [plural, 10_000]),
);

/** Name of the quota of the system namespace. */
export const SYSTEM_QUOTA = "pulumi-liqo-objects";

/** The quota's key of a resource: `count/<plural>` for core kinds, `count/<plural>.<group>` otherwise. */
function countKey(plural: string, group: string): string {
  return group === "" ? `count/${plural}` : `count/${plural}.${group}`;
}

function forgeQuota(
  namespace: string,
  consumerClusterId: string,
  limits: Readonly<Record<string, number>>,
  group: string,
): k8s.V1ResourceQuota {
  return {
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: {
      name: CONSUMER_QUOTA,
      namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: consumerClusterId },
    },
    spec: {
      hard: Object.fromEntries(
        Object.entries(limits).map(([plural, count]) => [countKey(plural, group), String(count)]),
      ),
    },
  };
}

/** The quota of consumer `consumerClusterId`'s tenant namespace. */
export function forgeTenantQuota(consumerClusterId: string): k8s.V1ResourceQuota {
  return forgeQuota(tenantNamespace(consumerClusterId), consumerClusterId, TENANT_OBJECT_LIMITS, API_GROUP);
}

/** The quota of remote namespace `namespace`, made for consumer `consumerClusterId`. */
export function forgeRemoteNamespaceQuota(namespace: string, consumerClusterId: string): k8s.V1ResourceQuota {
  return forgeQuota(namespace, consumerClusterId, REMOTE_NAMESPACE_OBJECT_LIMITS, "");
}

/**
 * The quota of the project's system namespace: generous bounds on its own objects there, and the
 * sign that the quota controller counts the project's kinds (see the module's comment).
 */
export function forgeSystemQuota(): k8s.V1ResourceQuota {
  const quota = forgeQuota(SYSTEM_NAMESPACE, "", SYSTEM_OBJECT_LIMITS, API_GROUP);
  return {
    ...quota,
    metadata: { name: SYSTEM_QUOTA, namespace: SYSTEM_NAMESPACE, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
  };
}

/** Whether the quota controller has counted every resource `quota` limits (until then, creates are refused). */
export function quotaCounted(quota: k8s.V1ResourceQuota): boolean {
  const used = quota.status?.used ?? {};
  return Object.keys(quota.spec?.hard ?? {}).every((key) => used[key] !== undefined);
}

/** Applies `quota` (server-side apply: a second run converges); resolves it as the API server holds it. */
export function applyQuota(kc: k8s.KubeConfig, quota: k8s.V1ResourceQuota, step: string): Promise<k8s.V1ResourceQuota> {
  const where = `ResourceQuota ${quota.metadata!.namespace}/${quota.metadata!.name}`;
  return ensureObject(kc, quota).catch(describeFailure(`${step}: applying ${where}`, serverOf(kc)));
}

/** Waits until the quota controller has counted `quota` (until then, creates of its kinds are refused). */
export async function waitForQuotaCounted(
  kc: k8s.KubeConfig,
  quota: k8s.V1ResourceQuota,
  step: string,
  timeoutMs: number,
): Promise<void> {
  const where = `ResourceQuota ${quota.metadata!.namespace}/${quota.metadata!.name}`;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await poll(
    { step, object: `${where} counted by the quota controller`, endpoint: serverOf(kc) },
    { timeoutMs, intervalMs: 250 },
    async () => {
      const live = await core.readNamespacedResourceQuota({
        name: quota.metadata!.name!,
        namespace: quota.metadata!.namespace!,
      });
      return quotaCounted(live)
        ? { done: true, value: undefined }
        : { done: false, state: "not every kind counted yet (the controller finds new kinds every 30 s)" };
    },
  );
}

/**
 * Applies `quota` and waits until it is counted. The bound covers the quota controller's discovery
 * of kinds defined just before (every 30 s) on a loaded machine.
 */
export async function ensureObjectQuota(
  kc: k8s.KubeConfig,
  quota: k8s.V1ResourceQuota,
  step: string,
  timeoutMs = 90_000,
): Promise<void> {
  if (!quotaCounted(await applyQuota(kc, quota, step))) await waitForQuotaCounted(kc, quota, step, timeoutMs);
}
