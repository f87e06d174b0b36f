/**
 * Offloading as the tests and the benchmark set it up: a consumer namespace offloaded through a
 * virtual node (by the `NamespaceOffloading` resource's steps), podtool pods that may run on the virtual
 * node, and the wait for pods Running on the consumer.
 */
import * as k8s from "@kubernetes/client-node";
import type { PodOffloading } from "../core/api/offloading.js";
import { offloadNamespace as offloadingSteps } from "../core/offloading/namespace-offloading.js";
import { progressTo } from "../core/operation/progress.js";
import { VIRTUAL_NODE_TAINT } from "../core/virtual-node/node.js";
import { deleteOptional, readOptional } from "../core/kube/client.js";
import { poll } from "../core/wait/poll.js";
import { imageReference } from "../local-cluster/node-images.js";

/** A podtool pod `name` (labelled `app: <name>`) bound to the real node `nodeName`: one that stays where it is. */
export function podtoolPodOn(nodeName: string, name: string): k8s.V1Pod {
  return {
    metadata: { name, labels: { app: name } },
    spec: {
      nodeName,
      containers: [{ name: "podtool", image: imageReference("podtool"), imagePullPolicy: "Never" }],
    },
  };
}

/** A podtool pod spec (serves TCP 8080, answering with its name) for the virtual node `virtualNode`. */
export function podtoolSpec(virtualNode: string, extra: Partial<k8s.V1PodSpec> = {}): k8s.V1PodSpec {
  return {
    nodeSelector: { "kubernetes.io/hostname": virtualNode },
    // Every virtual node's taint; the pod asks for no cpu or memory.
    tolerations: [{ key: VIRTUAL_NODE_TAINT.key, operator: "Exists" }],
    containers: [{ name: "podtool", image: imageReference("podtool"), imagePullPolicy: "Never" }],
    ...extra,
  };
}

/**
 * Creates Deployment `name` of `replicas` podtool pods (labelled `app: <name>`) in `namespace` of
 * the consumer, each for the virtual node `virtualNode`; resolves once they are all Running.
 */
export async function runPodtoolDeployment(
  consumer: k8s.KubeConfig,
  namespace: string,
  name: string,
  replicas: number,
  virtualNode: string,
): Promise<k8s.V1Pod[]> {
  await consumer.makeApiClient(k8s.AppsV1Api).createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: podtoolSpec(virtualNode) },
      },
    },
  });
  return runningPods(consumer, namespace, `app=${name}`, replicas);
}

/**
 * Deletes namespace `name` of `kc`'s cluster and waits until it is gone (a terminating namespace is
 * still a trace); a wait that times out says what holds it, as the namespace controller reports it
 * (content left, finalizers, discovery).
 */
export async function deleteNamespaceAndWait(kc: k8s.KubeConfig, name: string, timeoutMs = 120_000): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await deleteOptional(() => core.deleteNamespace({ name }));
  await poll(
    { step: "test", object: `namespace ${name} gone`, endpoint: kc.getCurrentCluster()!.server },
    { timeoutMs, intervalMs: 500 },
    async () => {
      const live = await readOptional(() => core.readNamespace({ name }));
      const holding = (live?.status?.conditions ?? []).filter((c) => c.status === "True").map((c) => c.message);
      return live
        ? { done: false, state: `terminating: ${holding.join("; ") || "no condition"}` }
        : { done: true, value: undefined };
    },
  );
}

/**
 * Makes namespace `namespace` on the consumer and offloads it through `virtualNode` (its pods placed
 * by `podOffloading`), with the steps of the `NamespaceOffloading` resource; resolves once the
 * provider made `remoteNamespace` and the consumer's API server places the namespace's pods.
 */
export async function offloadNamespace(
  consumer: k8s.KubeConfig,
  namespace: string,
  remoteNamespace: string,
  virtualNode: string,
  podOffloading?: PodOffloading,
): Promise<void> {
  await consumer.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  await offloadingSteps(
    consumer,
    { namespace, remoteNamespace, virtualNodes: [virtualNode], ...(podOffloading ? { podOffloading } : {}) },
    60_000,
    progressTo(() => undefined),
  );
}

/** Resolves the pods of `namespace` matching `labelSelector` once `count` of them are Running with an address. */
export function runningPods(
  consumer: k8s.KubeConfig,
  namespace: string,
  labelSelector: string,
  count: number,
): Promise<k8s.V1Pod[]> {
  const core = consumer.makeApiClient(k8s.CoreV1Api);
  return poll(
    {
      step: "test",
      object: `${count} pod(s) ${labelSelector} of ${namespace} Running`,
      endpoint: consumer.getCurrentCluster()!.server,
    },
    { timeoutMs: 120_000, intervalMs: 1_000 },
    async () => {
      const pods = (await core.listNamespacedPod({ namespace, labelSelector })).items;
      const ready = pods.filter(
        (p) => p.status?.phase === "Running" && p.status.podIP && !p.metadata?.deletionTimestamp,
      );
      return ready.length === count
        ? { done: true, value: ready }
        : {
            done: false,
            // A pod held back says why: its conditions that are not true (unschedulable, not offloaded).
            state: pods
              .map((p) => {
                const why = (p.status?.conditions ?? [])
                  .filter((c) => c.status !== "True" && c.reason)
                  .map((c) => `${c.type} ${c.reason}: ${c.message ?? ""}`);
                return `${p.metadata?.name} ${p.status?.phase} ${p.status?.podIP ?? ""}${why.length ? ` (${why.join("; ")})` : ""}`;
              })
              .join(", "),
          };
    },
  );
}
