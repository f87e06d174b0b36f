/**
 * The consumer's virtual-node heartbeat: each pass relists this cluster's OutgoingPeerings and,
 * for each, renews the virtual node's Lease and, every 20 s, its Ready condition (as a kubelet
 * would), then follows the provider's current offer with the identity the peering holds, so that
 * the node's capacity tracks offers the provider recomputes. A provider that cannot be reached does not stop the
 * heartbeat of the others.
 */
import * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE, type OutgoingPeering } from "../provider/api/index.js";
import { loadKubeconfig } from "../provider/kube/client.js";
import { describeKubeError } from "../provider/kube/errors.js";
import { getResourceOffer } from "../provider/negotiation/request.js";
import { listOutgoingPeerings } from "../provider/peering/outgoing.js";
import { postReadyCondition, renewNodeLease, resizeVirtualNode } from "../provider/virtual-node/node.js";
import type { Reporter } from "./reporter.js";

/** How long a peering's identity, once read, is used before it is read again. */
const IDENTITY_REUSE_MS = 60_000;

/**
 * Identities read lately, by Secret name: reusing the client keeps its connection to the provider
 * open, instead of a new TLS handshake with a client certificate every pass and peering.
 */
const identities = new Map<string, { readonly kc: k8s.KubeConfig; readonly readAt: number }>();

/** Reads the kubeconfig of the identity a peering holds on its provider. */
export async function getPeeringIdentity(kc: k8s.KubeConfig, peering: OutgoingPeering): Promise<k8s.KubeConfig> {
  const secret = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ name: peering.spec.identitySecret, namespace: SYSTEM_NAMESPACE });
  const text = Buffer.from(secret.data?.["kubeconfig"] ?? "", "base64").toString("utf8");
  return loadKubeconfig(text, `Secret ${SYSTEM_NAMESPACE}/${peering.spec.identitySecret}`);
}

/** {@link getPeeringIdentity}, reusing what was read less than a minute ago. */
async function recentPeeringIdentity(kc: k8s.KubeConfig, peering: OutgoingPeering, now: number): Promise<k8s.KubeConfig> {
  const known = identities.get(peering.spec.identitySecret);
  if (known && now - known.readAt < IDENTITY_REUSE_MS) return known.kc;
  const fresh = await getPeeringIdentity(kc, peering);
  identities.set(peering.spec.identitySecret, { kc: fresh, readAt: now });
  return fresh;
}

/**
 * Post a virtual node's Ready condition again once the last post is this old. Its Lease, renewed
 * every pass, is what tells the node controller that the node is alive; the condition only needs
 * to stay fresh enough to read, as a kubelet posts an unchanged status seldom.
 */
const READY_REPOST_MS = 20_000;

/** When this agent last posted each virtual node's Ready condition, and the node as it came back. */
const posted = new Map<string, { readonly at: number; readonly node: k8s.V1Node }>();

/** One heartbeat pass over every peering; resolves with the virtual nodes it renewed. */
export async function beatOnce(kc: k8s.KubeConfig, reporter: Reporter, now = new Date()): Promise<string[]> {
  const renewed: string[] = [];
  const peerings = await listOutgoingPeerings(kc);
  for (const name of identities.keys()) {
    if (!peerings.some((p) => p.spec.identitySecret === name)) identities.delete(name);
  }
  for (const name of posted.keys()) {
    if (!peerings.some((p) => p.spec.virtualNodeName === name)) posted.delete(name);
  }
  for (const peering of peerings) {
    // An in-band peering gets its node only once its first offer is in.
    if (peering.spec.inBand && !peering.status?.offer) continue;
    const nodeName = peering.spec.virtualNodeName;
    let node: k8s.V1Node;
    try {
      await renewNodeLease(kc, nodeName, now);
      const last = posted.get(nodeName);
      if (last && now.getTime() - last.at < READY_REPOST_MS) {
        node = last.node;
      } else {
        node = await postReadyCondition(kc, nodeName, now);
        posted.set(nodeName, { at: now.getTime(), node });
      }
      renewed.push(nodeName);
    } catch (error) {
      posted.delete(nodeName);
      reporter.warn(`heartbeat: Node ${nodeName}: ${(error as Error).message}`);
      continue;
    }
    try {
      // A resized node is read afresh at the next post.
      if (await followOffer(kc, peering, node, now.getTime())) posted.delete(nodeName);
    } catch (error) {
      // The identity may have been replaced: read it afresh next time.
      identities.delete(peering.spec.identitySecret);
      reporter.warn(`heartbeat: following the offer of provider ${peering.spec.providerClusterName} for Node ${nodeName}: ${describeKubeError(error)}`);
    }
  }
  return renewed;
}

/** Resizes the virtual node when the provider's current offer differs from its capacity; resolves whether it did. */
async function followOffer(kc: k8s.KubeConfig, peering: OutgoingPeering, node: k8s.V1Node, now: number): Promise<boolean> {
  const provider = await recentPeeringIdentity(kc, peering, now);
  const offer = await getResourceOffer(provider, { tenantNamespace: peering.spec.tenantNamespace, name: peering.spec.requestName });
  if (!offer) return false;
  const capacity = node.status?.capacity ?? {};
  const wanted = offer.spec.resources;
  if (capacity["cpu"] === wanted.cpu && capacity["memory"] === wanted.memory && capacity["pods"] === String(wanted.pods)) return false;
  await resizeVirtualNode(kc, peering.spec.virtualNodeName, wanted);
  return true;
}
