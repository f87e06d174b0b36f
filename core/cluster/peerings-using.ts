/**
 * The peerings that still use a cluster, while which a `Cluster`'s delete does not uninstall it
 * (lifecycle.ts): read from the cluster's own records, so that no peer needs to answer.
 */
import type * as k8s from "@kubernetes/client-node";
import { tenantNamespace } from "../api/index.js";
import { listTenants } from "../authentication/tenant.js";
import { listOutgoingPeerings } from "../virtual-node/outgoing-peering.js";

/**
 * What still uses a cluster in peerings: its outgoing peerings (as consumer) and the tenant
 * namespaces of its consumers (as provider). Empty when the cluster can be uninstalled.
 */
export async function getPeeringsUsing(kc: k8s.KubeConfig): Promise<string[]> {
  const outgoing = (await listOutgoingPeerings(kc)).map(
    (p) => `outgoing peering to ${p.spec.providerClusterName} (${p.spec.providerClusterId})`,
  );
  // Only a tenant counts: a namespace someone else labelled holds no peering up.
  const incoming = (await listTenants(kc)).map(
    (consumer) => `incoming peering from consumer ${consumer} (namespace ${tenantNamespace(consumer)})`,
  );
  return [...outgoing, ...incoming];
}
