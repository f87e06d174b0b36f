/**
 * The provider's shortcut for a withdrawn pod: an OffloadedPod its consumer deleted (held by this
 * side's finalizer) has its pod deleted as soon as the watch tells, not after a pass over every
 * request and pod of every consumer (provider-side.ts), which at hundreds of pods takes seconds.
 * The pass stays the authority: it lets the request go once the pod is gone, and removes whatever
 * this missed.
 *
 * The request is the consumer's to write, so only what this side wrote decides: the tenant
 * namespace's owner, and the labels this side put on the pods it made. A request naming any other
 * pod (the provider's own, another consumer's) deletes nothing.
 */
import * as k8s from "@kubernetes/client-node";
import { MANAGED_BY, MANAGED_BY_LABEL, REMOTE_CLUSTER_LABEL, type OffloadedPod } from "../../core/api/index.js";
import { describeFailure, readOptional, serverOf } from "../../core/kube/client.js";
import { CONSUMER_POD_UID_LABEL } from "../../core/offloading/reflection.js";
import type { Reporter } from "../reporter.js";
import { tenantsOf } from "./provider-side.js";

const STEP = "offloading (provider)";

/** Whether `pod` is the one this side made for `request` of consumer `consumer`, by the labels it gave it. */
export function madeForRequest(pod: k8s.V1Pod | undefined, request: OffloadedPod, consumer: string): boolean {
  const labels = pod?.metadata?.labels ?? {};
  return (
    labels[MANAGED_BY_LABEL] === MANAGED_BY &&
    labels[REMOTE_CLUSTER_LABEL] === consumer &&
    labels[CONSUMER_POD_UID_LABEL] === request.spec.consumerUid
  );
}

/** An OffloadedPod changed: when its consumer withdrew it, the pod made for it is deleted now. */
export async function removeWithdrawnPod(kc: k8s.KubeConfig, request: OffloadedPod, reporter: Reporter): Promise<void> {
  const tenant = request.metadata?.namespace;
  const { name, namespace } = request.spec ?? {};
  if (!request.metadata?.deletionTimestamp || !tenant || !name || !namespace) return;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const endpoint = serverOf(kc);
  const tenantNamespace = await readOptional(() => core.readNamespace({ name: tenant })).catch(
    describeFailure(`${STEP}: reading tenant namespace ${tenant}`, endpoint),
  );
  const { live, ending } = tenantsOf(tenantNamespace ? [tenantNamespace] : []);
  const consumer = live.get(tenant) ?? ending.get(tenant);
  if (!consumer) return;
  const pod = await readOptional(() => core.readNamespacedPod({ name, namespace })).catch(
    describeFailure(`${STEP}: reading Pod ${namespace}/${name}`, endpoint),
  );
  if (!madeForRequest(pod, request, consumer) || pod!.metadata!.deletionTimestamp) return;
  await core
    .deleteNamespacedPod({ name, namespace, body: { preconditions: { uid: pod!.metadata!.uid! } } })
    .catch((error: unknown) => {
      const code = (error as { code?: number }).code;
      if (code === 404 || code === 409) return; // Gone, or another pod of that name by now.
      return describeFailure(`${STEP}: deleting Pod ${namespace}/${name}`, endpoint)(error);
    });
  reporter.info(`${STEP}: removed pod ${namespace}/${name}: consumer ${consumer} withdrew its request`);
}
