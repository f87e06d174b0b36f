/**
 * What a consumer may store in a remote namespace (a namespace a provider's agent made for one of
 * its offloaded namespaces): a ResourceQuota of object counts, enforced by the provider's API server
 * itself. The consumer's identity may keep there the ConfigMaps and Secrets its pods read
 * (reflected): at most {@link REMOTE_NAMESPACE_OBJECT_LIMITS} of each. A count bounds how many
 * objects; the API server bounds each one's size (about 1.5 MiB).
 *
 * The forger is pure; {@link ensureObjectQuota} applies a quota and waits until the quota
 * controller has counted what is there, since until then the API server refuses every create of a
 * counted kind ("status unknown for quota"). Core kinds are counted at once; the project's own
 * kinds are not quota'd this way (the controller finds a new custom kind only at its next
 * discovery, and in clusters whose CRDs come and go it was seen not to within 180 s).
 */
import * as k8s from "@kubernetes/client-node";
import { MANAGED_BY, MANAGED_BY_LABEL, REMOTE_CLUSTER_LABEL } from "../api/names.js";
import { describeFailure, ensureObject, serverOf } from "../kube/client.js";
import { poll } from "../wait/poll.js";

/** Name of the ResourceQuota in each remote namespace. */
export const CONSUMER_QUOTA = "pulumi-liqo-consumer";

/** How many ConfigMaps and Secrets a consumer may keep in each of its remote namespaces. */
export const REMOTE_NAMESPACE_OBJECT_LIMITS: Readonly<Record<string, number>> = {
  configmaps: 128,
  secrets: 128,
};

/** The quota of remote namespace `namespace`, made for consumer `consumerClusterId`. */
export function forgeRemoteNamespaceQuota(namespace: string, consumerClusterId: string): k8s.V1ResourceQuota {
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
        Object.entries(REMOTE_NAMESPACE_OBJECT_LIMITS).map(([plural, count]) => [`count/${plural}`, String(count)]),
      ),
    },
  };
}

/** Whether the quota controller has counted every resource `quota` limits (until then, creates are refused). */
export function quotaCounted(quota: k8s.V1ResourceQuota): boolean {
  const used = quota.status?.used ?? {};
  return Object.keys(quota.spec?.hard ?? {}).every((key) => used[key] !== undefined);
}

/** Applies `quota` (server-side apply: a second run converges) and waits until it is counted. */
export async function ensureObjectQuota(
  kc: k8s.KubeConfig,
  quota: k8s.V1ResourceQuota,
  step: string,
  timeoutMs = 30_000,
): Promise<void> {
  const endpoint = serverOf(kc);
  const where = `ResourceQuota ${quota.metadata!.namespace}/${quota.metadata!.name}`;
  const applied = await ensureObject(kc, quota).catch(describeFailure(`${step}: applying ${where}`, endpoint));
  if (quotaCounted(applied)) return;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await poll(
    { step, object: `${where} counted by the quota controller`, endpoint },
    { timeoutMs, intervalMs: 250 },
    async () => {
      const live = await core.readNamespacedResourceQuota({
        name: quota.metadata!.name!,
        namespace: quota.metadata!.namespace!,
      });
      return quotaCounted(live) ? { done: true, value: undefined } : { done: false, state: "no usage counted yet" };
    },
  );
}
