/**
 * Offloading as the tests and the benchmark set it up: a consumer namespace offloaded through a virtual node (the
 * object the `NamespaceOffloading` resource writes), podtool pods that may run on the virtual
 * node, and the wait for pods Running on the consumer.
 */
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  NAMESPACE_OFFLOADING_NAME,
  type NamespaceOffloading,
} from "../provider/api/index.js";
import { VIRTUAL_NODE_TAINT } from "../provider/virtual-node/node.js";
import { poll } from "../provider/wait/poll.js";
import { imageReference } from "../local-cluster/node-images.js";

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

/** Makes namespace `namespace` on the consumer and offloads it through `virtualNode`; resolves once the provider made `remoteNamespace`. */
export async function offloadNamespace(
  consumer: k8s.KubeConfig,
  namespace: string,
  remoteNamespace: string,
  virtualNode: string,
): Promise<void> {
  await consumer.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  const api = consumer.makeApiClient(k8s.CustomObjectsApi);
  const where = { group: API_GROUP, version: API_VERSION, namespace, plural: "namespaceoffloadings" };
  const body: NamespaceOffloading = {
    apiVersion: API_GROUP_VERSION,
    kind: "NamespaceOffloading",
    metadata: { name: NAMESPACE_OFFLOADING_NAME, namespace },
    spec: { remoteNamespace, virtualNodes: [virtualNode] },
  };
  await api.createNamespacedCustomObject({ ...where, body });
  await poll(
    { step: "test", object: `NamespaceOffloading ${namespace} Ready`, endpoint: consumer.getCurrentCluster()!.server },
    { timeoutMs: 60_000, intervalMs: 500 },
    async () => {
      const live = (await api.getNamespacedCustomObject({
        ...where,
        name: NAMESPACE_OFFLOADING_NAME,
      })) as NamespaceOffloading;
      const report = live.status?.remotes?.[0];
      return report?.phase === "Ready"
        ? { done: true, value: undefined }
        : { done: false, state: JSON.stringify(report) };
    },
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
            state: pods.map((p) => `${p.metadata?.name} ${p.status?.phase} ${p.status?.podIP ?? ""}`).join(", "),
          };
    },
  );
}
