/**
 * Reads what a cluster shows about its pod and service networks, for `cidr-detection.ts` to decide
 * on: its ServiceCIDR objects, its nodes' pod CIDRs, and the command lines of a controller manager
 * and API server that run as pods (kubeadm's static pods). What the cluster does not serve (no
 * ServiceCIDR API before 1.33) or does not let the caller read is an empty part, not an error: the
 * decision then says which input to set.
 */
import * as k8s from "@kubernetes/client-node";
import { describeFailure, serverOf } from "../kube/client.js";
import { statusOf } from "../kube/errors.js";
import type { NetworkFacts } from "./cidr-detection.js";

/** The list `read` returns, or an empty one when the API is absent (404) or refused (403). */
async function shown<T>(read: () => Promise<T[]>): Promise<T[]> {
  try {
    return await read();
  } catch (error) {
    const status = statusOf(error);
    if (status === 404 || status === 403) return [];
    throw error;
  }
}

/** The command lines of `kube-system`'s pods labelled `component=<component>`. */
async function commandLines(core: k8s.CoreV1Api, component: string): Promise<string[][]> {
  const pods = await shown(
    async () =>
      (await core.listNamespacedPod({ namespace: "kube-system", labelSelector: `component=${component}` })).items,
  );
  return pods.flatMap((pod) => (pod.spec?.containers ?? []).map((c) => [...(c.command ?? []), ...(c.args ?? [])]));
}

/** What the cluster of `kc` shows about its networks. */
export async function getNetworkFacts(kc: k8s.KubeConfig): Promise<NetworkFacts> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const networking = kc.makeApiClient(k8s.NetworkingV1Api);
  const read = async (): Promise<NetworkFacts> => {
    const [controllerManagers, apiServers, serviceCidrs, nodes] = await Promise.all([
      commandLines(core, "kube-controller-manager"),
      commandLines(core, "kube-apiserver"),
      shown(async () => (await networking.listServiceCIDR()).items),
      core.listNode().then((list) => list.items),
    ]);
    return {
      controllerManagers,
      apiServers,
      serviceCidrs: serviceCidrs.map((o) => ({ name: o.metadata?.name ?? "", cidrs: o.spec?.cidrs ?? [] })),
      nodes: nodes.map((n) => ({
        name: n.metadata?.name ?? "",
        podCidrs: n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []),
      })),
    };
  };
  return read().catch(describeFailure("detecting the pod and service CIDRs", serverOf(kc)));
}
