/**
 * ResourceQuotas of object counts, enforced by the API server itself, and the one wait they need.
 *
 * Until the quota controller has counted every resource a quota names, the API server refuses
 * every create of those resources ("status unknown for quota"). Core kinds are counted at once. A
 * custom kind is counted only once the controller's discovery (every 30 s) has found it; a quota
 * the controller processed before that keeps the kind uncounted until the spec changes or the
 * controller's full resync (5 minutes by default). {@link ensureObjectQuota} can therefore make such
 * a quota anew, at most every {@link RECOUNT_EVERY_MS}, which the controller answers by counting it
 * with what it knows by then. From the delete until the controller has written the new quota's
 * status, the API server bounds nothing: only the install's quota of the system namespace, where no
 * consumer may write, is ever made anew. A quota where a consumer may write is never deleted; left
 * uncounted, it keeps the API server refusing every create of the kinds it names, and the wait ends
 * with a timeout that says so.
 */
import * as k8s from "@kubernetes/client-node";
import { deleteOptional, describeFailure, ensureObject, serverOf } from "./client.js";
import { poll } from "../wait/poll.js";

/** How often a quota the controller processed but left uncounted is made anew (its discovery runs every 30 s). */
export const RECOUNT_EVERY_MS = 3_000;

/** What an object-count quota is: where, what it is called and labelled, and its counts per resource. */
export interface ObjectCountQuota {
  /** Namespace the quota bounds. */
  namespace: string;
  /** The ResourceQuota's name. */
  name: string;
  /** Labels of the ResourceQuota. */
  labels: Record<string, string>;
  /** API group of every resource counted (`""` for core kinds). */
  group: string;
  /** How many objects of each resource (plural) the namespace may hold. */
  limits: Readonly<Record<string, number>>;
}

/** The quota's key of a resource: `count/<plural>` for core kinds, `count/<plural>.<group>` otherwise. */
function countKey(plural: string, group: string): string {
  return group === "" ? `count/${plural}` : `count/${plural}.${group}`;
}

/** The ResourceQuota of `spec`. */
export function forgeObjectCountQuota(spec: ObjectCountQuota): k8s.V1ResourceQuota {
  return {
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: { name: spec.name, namespace: spec.namespace, labels: spec.labels },
    spec: {
      hard: Object.fromEntries(
        Object.entries(spec.limits).map(([plural, count]) => [countKey(plural, spec.group), String(count)]),
      ),
    },
  };
}

/** Whether the quota controller has counted every resource `quota` limits (until then, creates are refused). */
export function quotaCounted(quota: k8s.V1ResourceQuota): boolean {
  const used = quota.status?.used ?? {};
  return Object.keys(quota.spec?.hard ?? {}).every((key) => used[key] !== undefined);
}

/**
 * Whether the controller has processed `quota` (its status has the spec's limits) and still left a
 * resource uncounted: it will not look again until the spec changes (see the module's comment).
 */
export function quotaLeftUncounted(quota: k8s.V1ResourceQuota): boolean {
  const hard = quota.spec?.hard ?? {};
  const seen = quota.status?.hard ?? {};
  const processed =
    Object.keys(hard).length === Object.keys(seen).length && Object.entries(hard).every(([k, v]) => seen[k] === v);
  return processed && !quotaCounted(quota);
}

/** How {@link ensureObjectQuota} waits. */
export interface QuotaWaitOptions {
  /** How long to wait until the quota is counted. */
  timeoutMs?: number;
  /**
   * Make the quota anew while the controller has processed it without counting every resource.
   * Only for a namespace no consumer may write to: until the new one is counted, nothing is bound.
   */
  remakeUncounted?: boolean;
}

/**
 * Applies `quota` (server-side apply: a second run converges) and waits until it is counted,
 * making it anew (with `remakeUncounted`) while the controller has processed it without counting
 * every resource.
 */
export async function ensureObjectQuota(
  kc: k8s.KubeConfig,
  quota: k8s.V1ResourceQuota,
  step: string,
  { timeoutMs = 90_000, remakeUncounted = false }: QuotaWaitOptions = {},
): Promise<void> {
  const endpoint = serverOf(kc);
  const name = quota.metadata!.name!;
  const namespace = quota.metadata!.namespace!;
  const where = `ResourceQuota ${namespace}/${name}`;
  const apply = (): Promise<k8s.V1ResourceQuota> =>
    ensureObject(kc, quota).catch(describeFailure(`${step}: applying ${where}`, endpoint));
  if (quotaCounted(await apply())) return;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  let madeAt = performance.now();
  await poll(
    { step, object: `${where} counted by the quota controller`, endpoint },
    { timeoutMs, intervalMs: 250 },
    async () => {
      const live = await core.readNamespacedResourceQuota({ name, namespace });
      if (quotaCounted(live)) return { done: true, value: undefined };
      if (remakeUncounted && quotaLeftUncounted(live) && performance.now() - madeAt >= RECOUNT_EVERY_MS) {
        await deleteOptional(() => core.deleteNamespacedResourceQuota({ name, namespace }));
        await apply();
        madeAt = performance.now();
      }
      const uncounted = Object.keys(live.spec?.hard ?? {}).filter((key) => live.status?.used?.[key] === undefined);
      return { done: false, state: `not counted yet: ${uncounted.join(", ")}` };
    },
  );
}
