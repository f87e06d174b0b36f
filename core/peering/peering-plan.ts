/**
 * What a peering's resource decides without a cluster: the virtual node's default name, its
 * status words, its record in the outputs, and what an update does. Pure: no I/O, and light to
 * load (a preview's `diff` runs it).
 */
import type { OfferedResources, ResourceAsk } from "../api/index.js";
import { emptyOfferReason } from "../negotiation/offer.js";

/** What a created peering is: recorded in state, never secret. */
export interface PeeringRecord {
  readonly consumerClusterId: string;
  readonly providerClusterId: string;
  readonly providerClusterName: string;
  readonly tenantNamespace: string;
  readonly requestName: string;
  readonly virtualNodeName: string;
  /** The accepted offer. */
  readonly offer: OfferedResources;
  /** Provider's API server URL, as the identity uses it. */
  readonly providerApiServerUrl: string;
}

/** The virtual node's name unless one is given: `liqo-<provider cluster name>`. */
export function defaultVirtualNodeName(providerClusterName: string): string {
  return `liqo-${providerClusterName}`;
}

/** Whether a peering is in-band (`approach` absent is out-of-band: state written before it existed). */
export const isInBand = (peering: { readonly approach?: string }): boolean => peering.approach === "in-band";

/** The port of the provider's auth service, from its URL. */
export const authPortOf = (authUrl: string | undefined): number => Number(new URL(authUrl ?? "https://x").port || 443);

/** A peering that stands. */
export const READY = "Ready";
/** What the status adds when the offer lets the node run no pod: a fact to know, not drift to repair. */
const EMPTY_OFFER = `${READY}, with an empty offer: `;

/** `Ready`, or `Ready` with why the offer is empty. */
export function readyStatus(offer: OfferedResources): string {
  const empty = emptyOfferReason(offer);
  return empty ? `${EMPTY_OFFER}${empty}` : READY;
}

/** Whether `status` is one of a peering that stands (an empty offer included: up cannot change it). */
export const isReady = (status: string | undefined): boolean => status === READY || !!status?.startsWith(EMPTY_OFFER);

/** The status refresh records: the problems it found, or that the peering stands with `offer`. */
export function statusAfterRead(problems: readonly string[], offer: OfferedResources | undefined): string {
  return problems.length ? problems.join("; ") : offer ? readyStatus(offer) : READY;
}

/** The peering's record held in `outputs`, or undefined when a create stopped before it had one. */
export function recordOf(outputs: PeeringState): PeeringRecord | undefined {
  const { consumerClusterId, providerClusterId, providerClusterName, tenantNamespace } = outputs;
  const { requestName, virtualNodeName, offer, providerApiServerUrl } = outputs;
  if (
    !providerClusterId ||
    !providerClusterName ||
    !tenantNamespace ||
    !requestName ||
    !virtualNodeName ||
    !offer ||
    !providerApiServerUrl
  )
    return undefined;
  return {
    consumerClusterId,
    providerClusterId,
    providerClusterName,
    tenantNamespace,
    requestName,
    virtualNodeName,
    offer,
    providerApiServerUrl,
  };
}

/** A peering as its update sees it: what was recorded, or what is asked. */
export interface PeeringState extends Partial<Omit<PeeringRecord, "consumerClusterId">> {
  readonly consumerClusterId: string;
  readonly approach?: string;
  readonly force?: boolean;
  readonly status?: string;
  readonly resources?: ResourceAsk;
}

/** What an update of a peering does. */
export type PeeringUpdate =
  /** Force was turned on: recorded, neither cluster contacted, nothing repaired. */
  | { readonly kind: "record force" }
  /** The peering's steps run again, as create (each is idempotent). */
  | { readonly kind: "peer again" }
  /** The peering stands as `record`: renegotiated when `resize`, its identity's expiry read again. */
  | { readonly kind: "renegotiate"; readonly record: PeeringRecord; readonly resize: boolean };

/** What the update from `olds` (state) to `news` (inputs) does. */
export function peeringUpdateOf(olds: PeeringState, news: PeeringState): PeeringUpdate {
  // Turning force on is the way out when the provider is gone (refresh may have recorded that
  // as drift): it only records the intent, needs neither cluster, and repairs nothing.
  if (news.force === true && olds.force !== true) return { kind: "record force" };
  const record = recordOf(olds);
  // A create that failed half-way left no record, and drift left a broken one: run create again
  // (every step is idempotent, so what exists is adopted and what is missing is made).
  // In-band, create is also the update: the tunnel, the agent's request and the node all converge.
  if (!record || !isReady(olds.status) || isInBand(news)) return { kind: "peer again" };
  return { kind: "renegotiate", record, resize: JSON.stringify(olds.resources) !== JSON.stringify(news.resources) };
}
