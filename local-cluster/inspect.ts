/**
 * Looking around a local cluster without kubectl: its nodes (virtual ones included) and a probe
 * pod that tolerates the virtual-node taint, to show the scheduler placing work on a peering.
 */
import * as k8s from "@kubernetes/client-node";
import { describeKubeError } from "../core/kube/errors.js";
import { VIRTUAL_NODE_LABEL, VIRTUAL_NODE_TAINT, nodeReadiness } from "../core/virtual-node/node.js";
import { poll } from "../core/wait/poll.js";
import type { ClusterState } from "./lab.js";
import { loadKubeconfigFile } from "../core/kube/client.js";

/** A client configuration with the cluster's admin identity (its kubeconfig works from the host). */
export function adminConfig(cluster: ClusterState): k8s.KubeConfig {
  return loadKubeconfigFile(cluster.kubeconfig);
}

/** One line per node: name, Ready, capacity, taints. */
export async function describeNodes(cluster: ClusterState): Promise<string[]> {
  const nodes = await adminConfig(cluster)
    .makeApiClient(k8s.CoreV1Api)
    .listNode()
    .catch((e: unknown) => {
      throw new Error(`listing nodes of cluster ${cluster.name}: ${describeKubeError(e)}`);
    });
  if (nodes.items.length === 0) return [`cluster ${cluster.name}: no nodes`];
  return nodes.items.map((node) => {
    const { state } = nodeReadiness(node);
    const capacity = Object.entries(node.status?.capacity ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(" ");
    const taints = (node.spec?.taints ?? []).map((t) => `${t.key}=${t.value ?? ""}:${t.effect}`).join(",");
    const kind = node.metadata?.labels?.[VIRTUAL_NODE_LABEL] === "true" ? "virtual" : "node";
    return `cluster ${cluster.name}: ${kind} ${node.metadata?.name}  ${state}  ${capacity}${taints ? `  taints ${taints}` : ""}`;
  });
}

/**
 * Creates pod `name` in `default` that only a virtual node takes, waits until the scheduler binds
 * it, and resolves the node's name. The pod never runs (no kubelet serves a virtual node here).
 */
export async function scheduleProbePod(cluster: ClusterState, name: string, timeoutMs = 60_000): Promise<string> {
  const core = adminConfig(cluster).makeApiClient(k8s.CoreV1Api);
  await core
    .createNamespacedPod({
      namespace: "default",
      body: {
        metadata: { name, labels: { app: name } },
        spec: {
          containers: [
            {
              name: "app",
              image: "registry.invalid/offloaded:1",
              resources: { requests: { cpu: "100m", memory: "64Mi" } },
            },
          ],
          tolerations: [{ key: VIRTUAL_NODE_TAINT.key, operator: "Exists" }],
          nodeSelector: { [VIRTUAL_NODE_LABEL]: "true" },
        },
      },
    })
    .catch((e: unknown) => {
      throw new Error(`creating pod default/${name} in cluster ${cluster.name}: ${describeKubeError(e)}`);
    });
  return poll(
    { step: `cluster ${cluster.name}`, object: `pod default/${name} scheduled`, endpoint: cluster.apiServerUrl },
    { timeoutMs, intervalMs: 250 },
    async () => {
      const pod = await core.readNamespacedPod({ name, namespace: "default" });
      const reason = pod.status?.conditions?.find((c) => c.type === "PodScheduled")?.message;
      return pod.spec?.nodeName
        ? { done: true, value: pod.spec.nodeName }
        : { done: false, state: reason ?? "pending" };
    },
  );
}
