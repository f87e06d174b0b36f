/**
 * Reads what a cluster shows about its pod and service networks, for `cidr-detection.ts` to decide
 * on: its ServiceCIDR objects, its nodes' pod CIDRs, the command lines of a controller manager and
 * API server that run as pods (kubeadm's static pods), and what its CNI and installer keep in the
 * API (`declared-networks.ts` says which objects). What the cluster does not serve (no ServiceCIDR
 * API before 1.33, no Calico) or does not let the caller read is an empty part, not an error: the
 * decision then says which input to set.
 */
import * as k8s from "@kubernetes/client-node";
import { describeFailure, serverOf } from "../kube/client.js";
import { statusOf } from "../kube/errors.js";
import type { NetworkFacts, NodeRanges } from "./cidr-detection.js";
import type { DeclaredNetworks } from "./declared-networks.js";

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

/** The data of ConfigMap `namespace/name`, or undefined when it is not there (or not readable). */
async function configMapData(
  core: k8s.CoreV1Api,
  namespace: string,
  name: string,
): Promise<Record<string, string> | undefined> {
  const [found] = await shown(async () => [(await core.readNamespacedConfigMap({ name, namespace })).data ?? {}]);
  return found;
}

/** What the cluster's CNI and installer keep in the API about its networks. */
async function getDeclaredNetworks(kc: k8s.KubeConfig): Promise<DeclaredNetworks> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const [flannelNew, flannelOld, cilium, kubeadm, pools] = await Promise.all([
    configMapData(core, "kube-flannel", "kube-flannel-cfg"),
    configMapData(core, "kube-system", "kube-flannel-cfg"),
    configMapData(core, "kube-system", "cilium-config"),
    configMapData(core, "kube-system", "kubeadm-config"),
    shown(async () => {
      const list = (await custom.listClusterCustomObject({
        group: "crd.projectcalico.org",
        version: "v1",
        plural: "ippools",
      })) as { items?: { metadata?: { name?: string }; spec?: { cidr?: string; disabled?: boolean } }[] };
      return list.items ?? [];
    }),
  ]);
  const flannel = flannelNew?.["net-conf.json"]
    ? { namespace: "kube-flannel", netConf: flannelNew["net-conf.json"] }
    : flannelOld?.["net-conf.json"]
      ? { namespace: "kube-system", netConf: flannelOld["net-conf.json"] }
      : undefined;
  return {
    calicoPools: pools.map((pool) => ({
      name: pool.metadata?.name ?? "",
      cidr: pool.spec?.cidr ?? "",
      disabled: pool.spec?.disabled === true,
    })),
    ...(flannel ? { flannel } : {}),
    ...(cilium ? { cilium } : {}),
    ...(kubeadm?.["ClusterConfiguration"] ? { kubeadmClusterConfiguration: kubeadm["ClusterConfiguration"] } : {}),
  };
}

/** Every node of `core`'s cluster with its pod ranges. */
async function nodeRanges(core: k8s.CoreV1Api): Promise<NodeRanges[]> {
  return (await core.listNode()).items.map((n) => ({
    name: n.metadata?.name ?? "",
    podCidrs: n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []),
  }));
}

/** Every node of the cluster of `kc` with its pod ranges, for a refresh to compare with the pod CIDR recorded. */
export async function getNodeRanges(kc: k8s.KubeConfig): Promise<NodeRanges[]> {
  return nodeRanges(kc.makeApiClient(k8s.CoreV1Api)).catch(
    describeFailure("reading the nodes' pod ranges", serverOf(kc)),
  );
}

/** What the cluster of `kc` shows about its networks. */
export async function getNetworkFacts(kc: k8s.KubeConfig): Promise<NetworkFacts> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const networking = kc.makeApiClient(k8s.NetworkingV1Api);
  const read = async (): Promise<NetworkFacts> => {
    const [controllerManagers, apiServers, serviceCidrs, nodes, declared] = await Promise.all([
      commandLines(core, "kube-controller-manager"),
      commandLines(core, "kube-apiserver"),
      shown(async () => (await networking.listServiceCIDR()).items),
      nodeRanges(core),
      getDeclaredNetworks(kc),
    ]);
    return {
      controllerManagers,
      apiServers,
      serviceCidrs: serviceCidrs.map((o) => ({ name: o.metadata?.name ?? "", cidrs: o.spec?.cidrs ?? [] })),
      nodes,
      declared,
    };
  };
  return read().catch(describeFailure("detecting the pod and service CIDRs", serverOf(kc)));
}
