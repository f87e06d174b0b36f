/**
 * How the local clusters' add-ons (cluster DNS, metrics-server, local-path storage, Flannel, MetalLB) are applied:
 * server-side apply with the admin kubeconfig, so that a lab brought up again converges; a failure
 * names the add-on, the object and the API server.
 */
import type * as k8s from "@kubernetes/client-node";
import { ensureObject, loadKubeconfigFile } from "../core/kube/client.js";

/** Applies one object of add-on `addOn` at a time to the cluster of admin kubeconfig `kubeconfig`. */
export function addOnApplier(
  kubeconfig: string,
  addOn: string,
): { readonly server: string; readonly apply: (object: k8s.KubernetesObject) => Promise<unknown> } {
  const kc = loadKubeconfigFile(kubeconfig);
  const server = kc.getCurrentCluster()?.server ?? kubeconfig;
  const apply = (object: k8s.KubernetesObject): Promise<unknown> =>
    ensureObject(kc, object).catch((error: unknown) => {
      throw new Error(
        `${addOn}: applying ${object.kind} ${object.metadata?.name} on ${server}: ${(error as Error).message}`,
      );
    });
  return { server, apply };
}

/** Applies `objects` of add-on `addOn` in order (see {@link addOnApplier}). */
export async function applyAddOn(
  kubeconfig: string,
  addOn: string,
  objects: readonly k8s.KubernetesObject[],
): Promise<void> {
  const { apply } = addOnApplier(kubeconfig, addOn);
  for (const object of objects) await apply(object);
}

/**
 * An add-on's Deployment in `kube-system`, as kubeadm's are: one replica, system-critical priority,
 * tolerating `CriticalAddonsOnly`, its pod as service account `name`.
 */
export function forgeSystemDeployment(
  name: string,
  labels: Readonly<Record<string, string>>,
  pod: Omit<k8s.V1PodSpec, "serviceAccountName" | "priorityClassName" | "tolerations">,
): k8s.V1Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "kube-system", labels: { ...labels } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { ...labels } },
      template: {
        metadata: { labels: { ...labels } },
        spec: {
          serviceAccountName: name,
          priorityClassName: "system-cluster-critical",
          tolerations: [{ key: "CriticalAddonsOnly", operator: "Exists" }],
          ...pod,
        },
      },
    },
  };
}
