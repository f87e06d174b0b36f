/**
 * A local cluster's admin client, and the install a `Cluster` resource would do, for tests and
 * benchmarks that drive the peering steps without the Pulumi engine.
 */
import * as k8s from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { adminConfig } from "../local-cluster/inspect.js";
import type { ClusterState } from "../local-cluster/lab.js";
import { waitForAgent } from "../provider/cluster/agent.js";
import {
  ensureAuthServiceTls,
  ensureClusterIdentity,
  ensureCustomResourceDefinitions,
  ensureSystemNamespace,
} from "../provider/cluster/install.js";

export { adminConfig };

/** A cluster installed for peering, as the tests use it. */
export interface InstalledCluster {
  readonly cluster: ClusterState;
  /** The id the install gave it. */
  readonly clusterId: string;
  /** CA of its auth service. */
  readonly caPem: string;
  /** Admin kubeconfig text. */
  readonly kubeconfig: string;
  /** Admin client configuration. */
  readonly kc: k8s.KubeConfig;
}

/**
 * Installs what peering needs and waits until the cluster's agent reports serving the new
 * certificate (read from the API server: under `gateway-only` the auth service is out of reach).
 */
export async function installForPeering(
  cluster: ClusterState,
  options: { readonly externalCidr?: string } = {},
): Promise<InstalledCluster> {
  const kc = adminConfig(cluster);
  await ensureSystemNamespace(kc);
  await ensureCustomResourceDefinitions(kc);
  const ca = Buffer.from(kc.getCurrentCluster()!.caData!, "base64").toString();
  const { clusterId } = await ensureClusterIdentity(kc, {
    clusterName: cluster.name,
    apiServerUrl: cluster.apiServerUrl,
    apiServerCaPem: ca,
    podCidr: cluster.podCidr,
    serviceCidr: cluster.serviceCidr,
    ...options,
  });
  const { caPem, certPem } = await ensureAuthServiceTls(kc, { hosts: [cluster.publicAddress] });
  await waitForAgent(kc, certPem, 30_000);
  return { cluster, clusterId, caPem, kubeconfig: readFileSync(cluster.kubeconfig, "utf8"), kc };
}
