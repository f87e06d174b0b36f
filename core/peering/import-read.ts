/**
 * What `pulumi import` reads of an out-of-band peering, from the consumer with its kubeconfig and
 * from the provider with the identity the consumer holds there: everything its `Peering` resource's
 * inputs and outputs come from. Nothing is written. The decision what to make of it is pure and
 * lives with the resource (../resources/peering-import.ts).
 */
import * as k8s from "@kubernetes/client-node";
import type { OfferedResources, OutgoingPeering, ResourceAsk } from "../api/index.js";
import { getClusterIdentity, type ClusterIdentity } from "../cluster/install.js";
import { describeFailure, loadKubeconfig, readOptional, serverOf } from "../kube/client.js";
import { describeKubeError } from "../kube/errors.js";
import { getResourceOffer, getResourceRequest } from "../negotiation/request.js";
import { askedOfVirtualNode, nodeReadiness } from "../virtual-node/node.js";
import { readPeeringClaim } from "./claim.js";
import { getIdentityKubeconfig, identityExpiryOf } from "../authentication/stored-identity.js";
import { getOutgoingPeering } from "../virtual-node/outgoing-peering.js";

/** What the provider shows the consumer's identity of its request and offer. */
export interface NegotiationFound {
  /** The provider's API server, as the identity reaches it. */
  readonly providerApiServerUrl: string;
  /** What the consumer's ResourceRequest asks (undefined: no request filed). */
  readonly asked?: ResourceAsk;
  /** The offer answering it (undefined: none made). */
  readonly offer?: OfferedResources;
  /** Why the provider could not be read with the identity, when it could not. */
  readonly unreadable?: string;
}

/** A peering as an import finds it on the consumer (each part undefined when absent). */
export interface PeeringFound {
  /** The consumer's API server (the endpoint of every read there). */
  readonly server: string;
  readonly consumer?: ClusterIdentity;
  readonly outgoing?: OutgoingPeering;
  /** URN of the `Peering` resource whose claim on the pair is recorded. */
  readonly claimHolder?: string;
  /** Undefined: the consumer holds no identity for the provider. */
  readonly negotiation?: NegotiationFound;
  /** When the identity expires (RFC 3339). */
  readonly identityExpiresAt?: string;
  /** The virtual node's asked labels and taints, and whether it is Ready (undefined: no node). */
  readonly node?: ReturnType<typeof askedOfVirtualNode> & { readonly readiness: string; readonly ready: boolean };
}

/** Reads, with the identity `identityText`, the consumer's request and the provider's offer named by `outgoing`. */
async function readNegotiation(identityText: string, outgoing: OutgoingPeering): Promise<NegotiationFound> {
  const provider = loadKubeconfig(identityText, "stored identity");
  const location = { tenantNamespace: outgoing.spec.tenantNamespace, name: outgoing.spec.requestName };
  const providerApiServerUrl = serverOf(provider);
  try {
    const [request, offer] = await Promise.all([
      getResourceRequest(provider, location),
      getResourceOffer(provider, location),
    ]);
    return {
      providerApiServerUrl,
      ...(request ? { asked: request.spec.resources } : {}),
      ...(offer ? { offer: offer.spec.resources } : {}),
    };
  } catch (error) {
    const read = `reading ResourceRequest and ResourceOffer ${location.tenantNamespace}/${location.name}`;
    return { providerApiServerUrl, unreadable: `${read} at ${providerApiServerUrl}: ${describeKubeError(error)}` };
  }
}

/** Everything an import reads of the consumer's peering with provider `providerClusterId`. */
export async function readPeeringForImport(
  consumerKubeconfig: string,
  kubeconfigInput: string,
  providerClusterId: string,
): Promise<PeeringFound> {
  const consumer = loadKubeconfig(consumerKubeconfig, kubeconfigInput);
  const server = serverOf(consumer);
  const identity = await getClusterIdentity(consumer);
  if (!identity) return { server };
  const [outgoing, claimHolder, identityText] = await Promise.all([
    getOutgoingPeering(consumer, providerClusterId),
    readPeeringClaim(consumer, providerClusterId),
    getIdentityKubeconfig(consumer, providerClusterId),
  ]);
  if (!outgoing) return { server, consumer: identity, ...(claimHolder ? { claimHolder } : {}) };
  const nodeName = outgoing.spec.virtualNodeName;
  const [node, negotiation] = await Promise.all([
    readOptional(() => consumer.makeApiClient(k8s.CoreV1Api).readNode({ name: nodeName })).catch(
      describeFailure(`virtual node: reading Node ${nodeName}`, server),
    ),
    identityText ? readNegotiation(identityText, outgoing) : undefined,
  ]);
  const identityExpiresAt = identityText ? identityExpiryOf(identityText, providerClusterId) : undefined;
  const readiness = nodeReadiness(node);
  return {
    server,
    consumer: identity,
    outgoing,
    ...(claimHolder ? { claimHolder } : {}),
    ...(negotiation ? { negotiation } : {}),
    ...(identityExpiresAt ? { identityExpiresAt } : {}),
    ...(node ? { node: { ...askedOfVirtualNode(node), ready: readiness.ready, readiness: readiness.state } } : {}),
  };
}
