/**
 * The consumer's virtual-node heartbeat: each pass relists this cluster's OutgoingPeerings and,
 * for each, renews the virtual node's Lease and Ready condition (as a kubelet would), then follows
 * the provider's current offer with the identity the peering holds, so that the node's capacity
 * tracks offers the provider recomputes. A provider that cannot be reached does not stop the
 * heartbeat of the others.
 */
import * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE, type OutgoingPeering } from "../provider/api/index.js";
import { loadKubeconfig } from "../provider/kube/client.js";
import { describeKubeError } from "../provider/kube/errors.js";
import { getResourceOffer } from "../provider/negotiation/request.js";
import { listOutgoingPeerings } from "../provider/peering/outgoing.js";
import { renewNodeHeartbeat, resizeVirtualNode } from "../provider/virtual-node/node.js";
import type { Reporter } from "./reporter.js";

/** Reads the kubeconfig of the identity a peering holds on its provider. */
export async function getPeeringIdentity(kc: k8s.KubeConfig, peering: OutgoingPeering): Promise<k8s.KubeConfig> {
  const secret = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ name: peering.spec.identitySecret, namespace: SYSTEM_NAMESPACE });
  const text = Buffer.from(secret.data?.["kubeconfig"] ?? "", "base64").toString("utf8");
  return loadKubeconfig(text, `Secret ${SYSTEM_NAMESPACE}/${peering.spec.identitySecret}`);
}

/** One heartbeat pass over every peering; resolves with the virtual nodes it renewed. */
export async function beatOnce(kc: k8s.KubeConfig, reporter: Reporter, now = new Date()): Promise<string[]> {
  const renewed: string[] = [];
  for (const peering of await listOutgoingPeerings(kc)) {
    // An in-band peering gets its node only once its first offer is in.
    if (peering.spec.inBand && !peering.status?.offer) continue;
    const node = peering.spec.virtualNodeName;
    try {
      await renewNodeHeartbeat(kc, node, now);
      renewed.push(node);
    } catch (error) {
      reporter.warn(`heartbeat: Node ${node}: ${(error as Error).message}`);
      continue;
    }
    try {
      await followOffer(kc, peering);
    } catch (error) {
      reporter.warn(`heartbeat: following the offer of provider ${peering.spec.providerClusterName} for Node ${node}: ${describeKubeError(error)}`);
    }
  }
  return renewed;
}

async function followOffer(kc: k8s.KubeConfig, peering: OutgoingPeering): Promise<void> {
  const provider = await getPeeringIdentity(kc, peering);
  const offer = await getResourceOffer(provider, { tenantNamespace: peering.spec.tenantNamespace, name: peering.spec.requestName });
  if (!offer) return;
  const node = await kc.makeApiClient(k8s.CoreV1Api).readNode({ name: peering.spec.virtualNodeName });
  const capacity = node.status?.capacity ?? {};
  const wanted = offer.spec.resources;
  if (capacity["cpu"] === wanted.cpu && capacity["memory"] === wanted.memory && capacity["pods"] === String(wanted.pods)) return;
  await resizeVirtualNode(kc, peering.spec.virtualNodeName, wanted);
}
