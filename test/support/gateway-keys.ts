/** The gateways' WireGuard keys, as tests compare them across an operation that must keep them. */
import * as k8s from "@kubernetes/client-node";
import { createHash } from "node:crypto";
import { SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { adminConfig } from "../../harness/install.js";
import type { ClusterState } from "../../local-cluster/lab.js";

/** A digest of each cluster's gateway key Secret: compared, never printed (a failed check shows only digests). */
export async function gatewayKeyDigests(clusters: readonly ClusterState[]): Promise<string[]> {
  const digests: string[] = [];
  for (const cluster of clusters) {
    const secrets = await adminConfig(cluster)
      .makeApiClient(k8s.CoreV1Api)
      .listNamespacedSecret({ namespace: SYSTEM_NAMESPACE });
    for (const secret of secrets.items.filter((s) => s.metadata?.name?.startsWith("wireguard-")))
      digests.push(createHash("sha256").update(JSON.stringify(secret.data)).digest("hex").slice(0, 16));
  }
  return digests;
}
