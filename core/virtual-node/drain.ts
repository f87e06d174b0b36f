/**
 * Draining a virtual node before its peering goes, as `kubectl drain` does a real one: cordoned
 * first (no new pod lands), then each pod on it deleted; the consumer's agent removes each from
 * the provider and only then lets it go here (agent/offloading), so once none of those pods is
 * left, nothing of them is left on the provider either. Only the pods the node held when the drain
 * began are waited for: a DaemonSet tolerating every taint makes its pod again at once on a
 * cordoned node (the unschedulable taint is among those it tolerates), and that pod, never
 * offloaded, goes with the Node.
 */
import * as k8s from "@kubernetes/client-node";
import { describeFailure, isNotFound, serverOf } from "../kube/client.js";
import { poll } from "../wait/poll.js";

const STEP = "virtual node";

/** How a drain may end. */
export interface DrainOptions {
  readonly timeoutMs: number;
  /**
   * The provider cannot be reached: nothing there can be confirmed removed, so the pods are
   * removed here at once (grace 0), and stay on the provider for its admin.
   */
  readonly providerGone?: boolean;
}

/** Drains Node `nodeName`; resolves how many pods it held. A node that does not exist holds none. */
export async function drainVirtualNode(kc: k8s.KubeConfig, nodeName: string, options: DrainOptions): Promise<number> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const endpoint = serverOf(kc);
  const cordoned = await core
    .patchNode(
      { name: nodeName, body: { spec: { unschedulable: true } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )
    .then(
      () => true,
      (error: unknown) => {
        if (isNotFound(error)) return false;
        return describeFailure(`${STEP}: cordoning Node ${nodeName}`, endpoint)(error);
      },
    );
  if (!cordoned) return 0;
  const podsOn = async (): Promise<k8s.V1Pod[]> =>
    (
      await core
        .listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` })
        .catch(describeFailure(`${STEP}: listing the pods on Node ${nodeName}`, endpoint))
    ).items;
  const held = await podsOn();
  const heldUids = new Set(held.map((pod) => pod.metadata!.uid));
  for (const pod of held) {
    const { name, namespace } = pod.metadata!;
    await core
      .deleteNamespacedPod({
        name: name!,
        namespace: namespace!,
        ...(options.providerGone ? { body: { gracePeriodSeconds: 0 } } : {}),
      })
      .catch((error: unknown) => {
        if (!isNotFound(error)) describeFailure(`${STEP}: deleting Pod ${namespace}/${name}`, endpoint)(error);
      });
  }
  if (held.length === 0) return 0;
  await poll(
    { step: STEP, object: `Node ${nodeName} drained (its pods removed from the provider, then here)`, endpoint },
    { timeoutMs: options.timeoutMs, intervalMs: 500 },
    async () => {
      const left = (await podsOn()).filter((pod) => heldUids.has(pod.metadata!.uid));
      return left.length === 0
        ? { done: true, value: undefined }
        : {
            done: false,
            state: `${left.length} pod(s) left: ${left
              .slice(0, 5)
              .map((p) => `${p.metadata!.namespace}/${p.metadata!.name}`)
              .join(", ")}`,
          };
    },
  );
  return held.length;
}
