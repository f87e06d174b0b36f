/**
 * Where each local cluster declares its networks, as a kubeadm-built cluster does (and kind, which
 * runs kubeadm): ConfigMap `kube-system/kubeadm-config`, key `ClusterConfiguration`, with
 * `networking.podSubnet` (the range every node's /24 is cut from) and `networking.serviceSubnet`.
 * A `Cluster` that is not given its CIDRs reads them there (core/cluster/declared-networks.ts), and
 * so announces the whole pod range, which holds a node added later. A cluster whose nodes carry no
 * pod range (EKS-like, `nodePodCidrs: false`) declares none either: it models a cluster whose pod
 * addresses nothing in the API states. Forger pure; {@link declareClusterConfig} applies it.
 */
import * as k8s from "@kubernetes/client-node";
import { dump } from "js-yaml";
import { ensureObject, loadKubeconfigFile } from "../core/kube/client.js";
import { CLUSTER_DOMAIN } from "../core/offloading/dns-names.js";

/** What the ConfigMap states of a cluster. */
export interface DeclaredClusterConfig {
  readonly podCidr: string;
  readonly serviceCidr: string;
  /** The control plane's release, e.g. `v1.36.3`. */
  readonly kubernetesVersion: string;
}

/** ConfigMap `kube-system/kubeadm-config` as `kubeadm init` writes it, with the fields a reader uses. */
export function forgeClusterConfig(config: DeclaredClusterConfig): k8s.V1ConfigMap {
  const clusterConfiguration = {
    apiVersion: "kubeadm.k8s.io/v1beta4",
    kind: "ClusterConfiguration",
    kubernetesVersion: config.kubernetesVersion,
    networking: { dnsDomain: CLUSTER_DOMAIN, podSubnet: config.podCidr, serviceSubnet: config.serviceCidr },
  };
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "kubeadm-config", namespace: "kube-system" },
    data: { ClusterConfiguration: dump(clusterConfiguration) },
  };
}

/** Writes the cluster's kubeadm-config (idempotent), with the release its API server reports. */
export async function declareClusterConfig(
  kubeconfig: string,
  networks: Omit<DeclaredClusterConfig, "kubernetesVersion">,
): Promise<void> {
  const kc = loadKubeconfigFile(kubeconfig);
  const write = async () => {
    const { gitVersion } = await kc.makeApiClient(k8s.VersionApi).getCode();
    await ensureObject(kc, forgeClusterConfig({ ...networks, kubernetesVersion: gitVersion }));
  };
  await write().catch((error: unknown) => {
    throw new Error(
      `cluster config: applying ConfigMap kube-system/kubeadm-config on ${kc.getCurrentCluster()?.server}: ${(error as Error).message}`,
    );
  });
}
