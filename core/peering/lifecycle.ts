/**
 * A peering's steps as its resource runs them, either approach: out-of-band (peering.ts, with the
 * provider's handover) or in-band (in-band.ts, through the tunnel), and the consumer's identity's
 * expiry read beside them.
 */
import { loadKubeconfig } from "../kube/client.js";
import type { TunnelRecord } from "../network-fabric/tunnel.js";
import { withTunnelDefaults, type TunnelSettingsInput } from "../network-fabric/tunnel-plan.js";
import { claimPeering, releasePeeringClaim } from "./claim.js";
import { createInBandPeering, deleteInBandPeering, readInBandPeering, type InBandPeeringRequest } from "./in-band.js";
import { getIdentityExpiresAt } from "../authentication/stored-identity.js";
import {
  createPeering,
  deletePeering,
  readPeering,
  updatePeeringResources,
  type PeeringDrift,
  type PeeringRecord,
  type PeeringRequest,
} from "./peering.js";
import type { ProviderHandover } from "./handover.js";
import { isInBand, type PeeringState } from "./peering-plan.js";
import type { Progress } from "../operation/progress.js";

export { isRefusedBeforeChange } from "./claim.js";

/** A peering asked for: out-of-band with the provider's handover, or in-band with both kubeconfigs and a tunnel. */
export type PeerRequest =
  | ({ readonly approach: "out-of-band" } & PeeringRequest)
  | ({ readonly approach: "in-band" } & Omit<InBandPeeringRequest, "tunnel"> & {
        readonly tunnel: TunnelSettingsInput;
      });

/** What a peering made: its record, in-band its tunnel, and when the consumer's identity expires. */
export interface Peered {
  readonly record: PeeringRecord;
  readonly tunnel?: TunnelRecord;
  /** RFC 3339; absent when the consumer holds no identity. */
  readonly identityExpiresAt?: string;
}

/** When the identity the consumer holds for the provider expires (RFC 3339), or undefined when it holds none. */
async function identityExpiryOf(consumerKubeconfig: string, providerClusterId: string): Promise<string | undefined> {
  return getIdentityExpiresAt(loadKubeconfig(consumerKubeconfig, "consumerKubeconfig"), providerClusterId);
}

/** Makes (or converges) the peering `request` asks for, the one way or the other. */
export async function peer(request: PeerRequest, progress: Progress): Promise<Peered> {
  let made: { record: PeeringRecord; tunnel?: TunnelRecord };
  if (request.approach === "in-band") {
    const { approach: _approach, ...inBand } = request;
    const { tunnel, ...record } = await createInBandPeering(
      { ...inBand, tunnel: withTunnelDefaults(request.tunnel) },
      progress,
    );
    made = { record, tunnel };
  } else {
    const { approach: _approach, ...outOfBand } = request;
    made = { record: await createPeering(outOfBand, progress) };
  }
  const identityExpiresAt = await identityExpiryOf(request.consumerKubeconfig, made.record.providerClusterId);
  return { ...made, ...(identityExpiresAt ? { identityExpiresAt } : {}) };
}

/** An out-of-band peering that stands, renegotiated for `resources` when given; its identity's expiry read again. */
export async function renegotiate(
  consumerKubeconfig: string,
  record: PeeringRecord,
  resources: PeeringRequest["resources"] | undefined,
  timeoutMs: number,
  progress: Progress,
): Promise<Peered> {
  const resized = resources
    ? await updatePeeringResources(consumerKubeconfig, record, resources, timeoutMs, progress)
    : record;
  const identityExpiresAt = await identityExpiryOf(consumerKubeconfig, record.providerClusterId);
  return { record: resized, ...(identityExpiresAt ? { identityExpiresAt } : {}) };
}

/** How a peering is reached: the consumer's kubeconfig, and in-band the provider's and the tunnel's settings. */
export interface PeeringReach {
  readonly approach?: string;
  readonly consumerKubeconfig: string;
  readonly providerKubeconfig?: string;
  readonly tunnel?: TunnelSettingsInput;
}

/** What refresh finds of a peering: its drift, and when the consumer's identity expires now. */
export interface PeeringFound extends PeeringDrift {
  readonly identityExpiresAt?: string;
}

/** Reads the live peering `record` and its identity's expiry (the two reads at once). */
export async function readPeeringState(reach: PeeringReach, record: PeeringRecord): Promise<PeeringFound> {
  const [drift, identityExpiresAt] = await Promise.all([
    isInBand(reach)
      ? readInBandPeering(
          reach.consumerKubeconfig,
          reach.providerKubeconfig!,
          record,
          withTunnelDefaults(reach.tunnel ?? {}),
        )
      : readPeering(reach.consumerKubeconfig, record),
    identityExpiryOf(reach.consumerKubeconfig, record.providerClusterId),
  ]);
  return { ...drift, ...(identityExpiresAt ? { identityExpiresAt } : {}) };
}

/** What {@link unpeer} takes down. */
export interface Unpeering extends PeeringReach, PeeringState {
  /** Out-of-band: where the provider's auth service is (to revoke the identity). */
  readonly handover?: Pick<ProviderHandover, "clusterId" | "authUrl" | "authCaCert">;
  readonly owner?: string;
  readonly force: boolean;
  readonly timeoutMs: number;
}

/**
 * Undoes a peering; resolves to what stays on an unreachable provider under `force` (see
 * deletePeering). In-band, both clusters are at hand: even a create that failed half-way is
 * cleaned up fully; out-of-band, a create that failed before it had a record still holds its
 * claim on the pair, which is let go.
 */
export async function unpeer(
  peering: Unpeering,
  record: PeeringRecord | undefined,
  progress: Progress,
): Promise<string[]> {
  if (isInBand(peering)) {
    await deleteInBandPeering(
      peering.consumerKubeconfig,
      peering.providerKubeconfig!,
      peering.virtualNodeName,
      peering.timeoutMs,
      progress,
    );
    return [];
  }
  if (!record) {
    await releasePeeringClaim(
      loadKubeconfig(peering.consumerKubeconfig, "consumerKubeconfig"),
      peering.handover!.clusterId,
      peering.owner,
    );
    return [];
  }
  return deletePeering(
    peering.consumerKubeconfig,
    record,
    peering.handover!,
    { force: peering.force, timeoutMs: peering.timeoutMs },
    progress,
  );
}

/**
 * Passes the claim on the pair with provider `providerClusterId` to `owner` from `takenFrom`, the
 * resource an import took the peering over from; refused when a third resource holds it.
 */
export async function takeOverPeering(
  consumerKubeconfig: string,
  providerClusterId: string,
  owner: string | undefined,
  takenFrom: string,
): Promise<void> {
  const consumer = loadKubeconfig(consumerKubeconfig, "consumerKubeconfig");
  await claimPeering(consumer, { clusterId: providerClusterId }, owner, takenFrom);
}
