/**
 * The consumer's virtual-node heartbeat: each pass relists this cluster's OutgoingPeerings and,
 * for each, renews the virtual node's Lease, reads the provider's current offer with the identity
 * the peering holds (so that the node's capacity tracks offers the provider recomputes), and posts
 * the node's Ready condition every 20 s (as a kubelet would) or at once when it changes. A
 * provider that refuses the identity (revoked there) makes the node NotReady, saying so, in that
 * same pass. One that cannot be reached makes it NotReady once no call has reached it for
 * `PROVIDER_UNREACHABLE_AFTER_MS` (readiness.ts), and does not stop the heartbeat of the others (each call
 * is cut at {@link PROVIDER_CALL_TIMEOUT_MS}). A failing renewal of the identity (see renewal.ts)
 * shows in the condition while the node stays Ready.
 */
import * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE, type OfferedResources, type OutgoingPeering } from "../core/api/index.js";
import { loadKubeconfig, serverOf } from "../core/kube/client.js";
import { describeKubeError } from "../core/kube/errors.js";
import { getResourceOffer } from "../core/negotiation/request.js";
import { listOutgoingPeerings } from "../core/virtual-node/outgoing-peering.js";
import { describeRevokedIdentity, IDENTITY_REVOKED_REASON } from "../core/authentication/revoked.js";
import {
  PEERING_ACTIVE,
  postNodeReadiness,
  type KubeletEndpoint,
  renewNodeLease,
  resizeVirtualNode,
  type NodeReadinessReport,
} from "../core/virtual-node/node.js";
import { decideReadiness } from "./readiness.js";
import type { Reporter } from "./reporter.js";

/** Pause between two heartbeat passes, as kubelets renew their Lease: a revoked identity shows within one. */
export const HEARTBEAT_INTERVAL_MS = 10_000;

/** Longest wait for one call to a provider: a provider with no path to it (packets dropped) must not hold up the pass. */
export const PROVIDER_CALL_TIMEOUT_MS = 5_000;

/** How long a peering's identity, once read, is used before it is read again. */
const IDENTITY_REUSE_MS = 60_000;

/**
 * Identities read lately, by Secret name: reusing the client keeps its connection to the provider
 * open, instead of a new TLS handshake with a client certificate every pass and peering.
 */
const identities = new Map<string, { readonly kc: k8s.KubeConfig; readonly readAt: number }>();

/** Reads the kubeconfig of the identity a peering holds on its provider. */
export async function getPeeringIdentity(kc: k8s.KubeConfig, peering: OutgoingPeering): Promise<k8s.KubeConfig> {
  const secret = await kc
    .makeApiClient(k8s.CoreV1Api)
    .readNamespacedSecret({ name: peering.spec.identitySecret, namespace: SYSTEM_NAMESPACE });
  const text = Buffer.from(secret.data?.["kubeconfig"] ?? "", "base64").toString("utf8");
  return loadKubeconfig(text, `Secret ${SYSTEM_NAMESPACE}/${peering.spec.identitySecret}`);
}

/** Makes the next pass read the identity in Secret `secretName` afresh (it was renewed). */
export function forgetPeeringIdentity(secretName: string): void {
  identities.delete(secretName);
}

/** {@link getPeeringIdentity}, reusing what was read less than a minute ago. */
export async function recentPeeringIdentity(
  kc: k8s.KubeConfig,
  peering: OutgoingPeering,
  now: number,
): Promise<k8s.KubeConfig> {
  const known = identities.get(peering.spec.identitySecret);
  if (known && now - known.readAt < IDENTITY_REUSE_MS) return known.kc;
  const fresh = await getPeeringIdentity(kc, peering);
  identities.set(peering.spec.identitySecret, { kc: fresh, readAt: now });
  return fresh;
}

/**
 * Post a virtual node's Ready condition again once the last post is this old. Its Lease, renewed
 * every pass, is what tells the node controller that the node is alive; the condition only needs
 * to stay fresh enough to read, as a kubelet posts an unchanged status seldom. A changed condition
 * is posted at once.
 */
const READY_REPOST_MS = 20_000;

/** What this agent last posted as each virtual node's Ready condition, when, and the node as it came back. */
const posted = new Map<
  string,
  { readonly at: number; readonly node: k8s.V1Node; readonly report: NodeReadinessReport }
>();

const sameReport = (a: NodeReadinessReport, b: NodeReadinessReport): boolean =>
  a.ready === b.ready && a.reason === b.reason && a.message === b.message;

/** Makes the next pass post the node's condition (and read the node) again, keeping what it last said. */
function repostNext(nodeName: string): void {
  const last = posted.get(nodeName);
  if (last) posted.set(nodeName, { ...last, at: Number.NEGATIVE_INFINITY });
}

/** What the provider says of a peering this pass: the node's readiness, and its current offer when it could be read. */
interface ProviderAnswer {
  /** The readiness the provider's answer implies; undefined when it gave none. */
  readonly report?: NodeReadinessReport;
  readonly offer?: OfferedResources;
  /** Why the provider could not be reached (the call, its URL, the cause); undefined when it was, or was not asked. */
  readonly unreachable?: string;
}

/** `promise`, or a rejection once `ms` have passed without it settling. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Reads the provider's offer with the peering's identity. A refusal of the identity itself is the
 * provider having revoked it: the node is not Ready, and its condition says why. A provider out of
 * reach is reported as such (the caller decides when that makes the node NotReady); the identity
 * Secret unreadable is warned about and decides nothing.
 */
async function askProvider(
  kc: k8s.KubeConfig,
  peering: OutgoingPeering,
  now: number,
  reporter: Reporter,
): Promise<ProviderAnswer> {
  const { providerClusterName, tenantNamespace, requestName, identitySecret, virtualNodeName } = peering.spec;
  let provider: k8s.KubeConfig;
  try {
    provider = await recentPeeringIdentity(kc, peering, now);
  } catch (error) {
    reporter.warn(
      `heartbeat: reading the identity Secret ${SYSTEM_NAMESPACE}/${identitySecret} for Node ${virtualNodeName}: ${describeKubeError(error)}`,
    );
    return {};
  }
  try {
    const offer = await within(
      getResourceOffer(provider, { tenantNamespace, name: requestName }),
      PROVIDER_CALL_TIMEOUT_MS,
    );
    return { report: PEERING_ACTIVE, ...(offer ? { offer: offer.spec.resources } : {}) };
  } catch (error) {
    // The identity may have been replaced: read it afresh next time.
    identities.delete(identitySecret);
    const call = `reading ResourceOffer ${tenantNamespace}/${requestName}`;
    const revoked = describeRevokedIdentity(error, {
      providerName: providerClusterName,
      endpoint: serverOf(provider),
      call,
    });
    if (revoked) return { report: { ready: false, reason: IDENTITY_REVOKED_REASON, message: revoked } };
    const unreachable = `${call} at ${serverOf(provider)}: ${describeKubeError(error)}`;
    reporter.warn(
      `heartbeat: following the offer of provider ${providerClusterName} for Node ${virtualNodeName}: ${unreachable}`,
    );
    return { unreachable };
  }
}

/** Where this agent serves the virtual nodes' kubelet API, once it does (offloading/kubelet-endpoint.ts). */
let kubelet: KubeletEndpoint | undefined;

/** Makes every virtual node announce `endpoint` as its kubelet's, from the next heartbeat on. */
export function announceKubeletEndpoint(endpoint: KubeletEndpoint): void {
  kubelet = endpoint;
}

/** When a heartbeat call last reached each peering's provider, by virtual node name. */
const contacts = new Map<string, number>();

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
  for (const name of contacts.keys()) {
    if (!peerings.some((p) => p.spec.virtualNodeName === name)) contacts.delete(name);
  }
  for (const peering of peerings) {
    // An in-band peering gets its node only once its first offer is in.
    if (peering.spec.inBand && !peering.status?.offer) continue;
    const nodeName = peering.spec.virtualNodeName;
    let node: k8s.V1Node;
    try {
      await renewNodeLease(kc, nodeName, now);
      const answer = await askProvider(kc, peering, now.getTime(), reporter);
      if (answer.report || !contacts.has(nodeName)) contacts.set(nodeName, now.getTime());
      const last = posted.get(nodeName);
      const report = decideReadiness({
        providerName: peering.spec.providerClusterName,
        ...(answer.report ? { answered: answer.report } : {}),
        ...(answer.unreachable ? { unreachable: answer.unreachable } : {}),
        ...(last ? { last: last.report } : {}),
        lastContactAt: contacts.get(nodeName)!,
        ...(peering.status?.identity ? { identity: peering.status.identity } : {}),
        now: now.getTime(),
      });
      const announced = !kubelet || last?.node.status?.addresses?.[0]?.address === kubelet.address;
      if (last && announced && sameReport(last.report, report) && now.getTime() - last.at < READY_REPOST_MS) {
        node = last.node;
      } else {
        node = await postNodeReadiness(kc, nodeName, report, now, kubelet);
        posted.set(nodeName, { at: now.getTime(), node, report });
        if (!last || last.report.ready !== report.ready)
          reporter[report.ready ? "info" : "warn"](
            `heartbeat: Node ${nodeName} Ready=${report.ready} (${report.reason}): ${report.message}`,
          );
      }
      renewed.push(nodeName);
      // A resized node is read afresh at the next post.
      if (answer.offer && (await followOffer(kc, nodeName, node, answer.offer))) repostNext(nodeName);
    } catch (error) {
      // What the provider last said stands: a pass that fails here must not turn a revoked peering Ready.
      repostNext(nodeName);
      reporter.warn(`heartbeat: Node ${nodeName}: ${(error as Error).message}`);
    }
  }
  return renewed;
}

/** Resizes the virtual node when the provider's current offer differs from its capacity; resolves whether it did. */
async function followOffer(
  kc: k8s.KubeConfig,
  nodeName: string,
  node: k8s.V1Node,
  wanted: OfferedResources,
): Promise<boolean> {
  const capacity = node.status?.capacity ?? {};
  if (
    capacity["cpu"] === wanted.cpu &&
    capacity["memory"] === wanted.memory &&
    capacity["pods"] === String(wanted.pods)
  )
    return false;
  await resizeVirtualNode(kc, nodeName, wanted);
  return true;
}
