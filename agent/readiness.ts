/**
 * What the consumer's heartbeat posts as a virtual node's Ready condition, decided from what the
 * provider answered, how long it has been out of reach and how the identity's renewal goes. Pure:
 * the heartbeat (heartbeat.ts) does the calls and posts.
 */
import type { IdentityStatus } from "../core/api/index.js";
import { IDENTITY_REVOKED_REASON } from "../core/authentication/revoked.js";
import { NODE_LEASE_DURATION_SECONDS, PEERING_ACTIVE, type NodeReadinessReport } from "../core/virtual-node/node.js";

/**
 * How long a provider may go without one call of the heartbeat reaching it before its virtual node
 * is NotReady: as long as a kubelet's own Lease holds (40 s, the node lifecycle controller's grace),
 * so a virtual node whose provider is out of reach goes NotReady as soon as a real node whose
 * kubelet is out of reach would. That is four heartbeats: a provider API server that restarts, or
 * a call or two lost, does not make the node flap.
 */
export const PROVIDER_UNREACHABLE_AFTER_MS = NODE_LEASE_DURATION_SECONDS * 1000;

/** Ready=False reason while the provider's API server cannot be reached. */
export const PROVIDER_UNREACHABLE_REASON = "ProviderUnreachable";
/** Ready=True reason while the identity is valid but renewing it fails. */
export const IDENTITY_RENEWAL_FAILING_REASON = "IdentityRenewalFailing";
/** Ready=False reason once the provider refuses an identity that has expired. */
export const IDENTITY_EXPIRED_REASON = "IdentityExpired";

/** What {@link decideReadiness} weighs for one peering. */
export interface ReadinessInputs {
  /** The provider's name, for messages. */
  readonly providerName: string;
  /** What the provider's answer this pass implies; undefined when it gave none. */
  readonly answered?: NodeReadinessReport;
  /** Why the provider could not be reached this pass, if it could not. */
  readonly unreachable?: string;
  /** What was posted last, if anything. */
  readonly last?: NodeReadinessReport;
  /** When a call last reached the provider (ms since the epoch; the agent's first look counts). */
  readonly lastContactAt: number;
  /** The identity's lifetime and renewal, as the renewal last wrote them. */
  readonly identity?: IdentityStatus;
  /** Now (ms since the epoch). */
  readonly now: number;
}

/**
 * What to post as a virtual node's Ready condition. Pure. In order: the provider's own answer (an
 * expired identity refused is told apart from a revoked one); no call reaching the provider for
 * {@link PROVIDER_UNREACHABLE_AFTER_MS} makes it NotReady; otherwise what was posted last stands.
 * A node that is Ready says so with the reason {@link IDENTITY_RENEWAL_FAILING_REASON} while
 * renewals of its identity fail.
 */
export function decideReadiness(inputs: ReadinessInputs): NodeReadinessReport {
  const { answered, identity, now } = inputs;
  const expiresAt = identity?.expiresAt ? Date.parse(identity.expiresAt) : undefined;
  if (answered?.reason === IDENTITY_REVOKED_REASON && expiresAt !== undefined && now >= expiresAt) {
    return {
      ready: false,
      reason: IDENTITY_EXPIRED_REASON,
      message:
        `identity expired at ${identity!.expiresAt} and provider ${inputs.providerName} refuses it; pulumi up ` +
        `authenticates again with the peering token`,
    };
  }
  const silentMs = now - inputs.lastContactAt;
  const base: NodeReadinessReport =
    answered ??
    (inputs.unreachable && silentMs >= PROVIDER_UNREACHABLE_AFTER_MS
      ? {
          ready: false,
          reason: PROVIDER_UNREACHABLE_REASON,
          message:
            `provider ${inputs.providerName} not reached for ${Math.round(silentMs / 1000)} s (last reached at ` +
            `${new Date(inputs.lastContactAt).toISOString()}): ${inputs.unreachable}`,
        }
      : // A renewal failure is overlaid afresh below, from the renewal's latest status.
        inputs.last && inputs.last.reason !== IDENTITY_RENEWAL_FAILING_REASON
        ? inputs.last
        : PEERING_ACTIVE);
  if (base.reason !== PEERING_ACTIVE.reason || !identity?.renewalFailures) return base;
  return {
    ready: true,
    reason: IDENTITY_RENEWAL_FAILING_REASON,
    message:
      `the identity expires at ${identity.expiresAt ?? "an unknown time"}; renewing it failed ` +
      `${identity.renewalFailures} times in a row (next try at ${identity.renewAt ?? "unknown"}): ${identity.renewalError ?? "no reason recorded"}`,
  };
}
