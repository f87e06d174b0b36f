/**
 * Deleting a namespace that holds pods, without the namespace controller's long look-again.
 *
 * The controller first looks 5 s after the delete. If pods are still there, it looks again after
 * half the longest grace period among them plus one second: 16 s for the default 30 s, however fast
 * they stop. Deleting the pods as soon as the namespace is marked (nothing new can be made in it
 * then) lets pods that stop on SIGTERM be gone by that first look, so the namespace goes at 5 s.
 * They get the same graceful delete the controller would have given them.
 */
import * as k8s from "@kubernetes/client-node";
import { deleteOptional } from "./client.js";

/** Deletes Namespace `name`, then each pod in it; resolves whether the namespace was there. Errors are the client's. */
export async function deleteNamespaceAndPods(kc: k8s.KubeConfig, name: string): Promise<boolean> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const removed = await deleteOptional(() => core.deleteNamespace({ name }));
  if (!removed) return false;
  const pods = await core.listNamespacedPod({ namespace: name });
  for (const pod of pods.items) {
    await deleteOptional(() => core.deleteNamespacedPod({ name: pod.metadata!.name!, namespace: name }));
  }
  return true;
}
