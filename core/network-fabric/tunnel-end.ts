/**
 * A tunnel's sides and what each side's gateway reports: types only, importing nothing. The SDK's
 * public types are made of them, so a user's program that type-checks the SDK reads these and no
 * Kubernetes client's types.
 */

/** The two sides of a peering. */
export type PeeringSide = "consumer" | "provider";

/**
 * What one side's gateway reports: a `Tunnel`'s `consumer` and `provider` outputs and an in-band
 * `Peering`'s `tunnelStatus` (the SDK exports it as `TunnelEnd`).
 */
export interface TunnelEnd {
  /** The gateway's WireGuard public key (its private key never leaves its cluster). */
  readonly publicKey: string;
  /** `host:port` where it listens, when it serves. */
  readonly endpoint?: string;
  /** The side's real pod CIDR. */
  readonly podCidr: string;
  /** The other side's pod CIDR as this side sees it: remapped when the two overlap. */
  readonly remotePodCidrAsSeen: string;
  /** The side's external CIDR, when its `Cluster` has one. */
  readonly externalCidr?: string;
  /** The other side's external CIDR as this side sees it, when it has one. */
  readonly remoteExternalCidrAsSeen?: string;
  /** The WireGuard interface's name. */
  readonly interfaceName: string;
  /** Latest handshake (RFC 3339), when the tunnel was last created or updated. */
  readonly latestHandshake?: string;
  /** Round-trip time of a probe across the tunnel, ms, when it was last created or updated. */
  readonly rttMs?: number;
}
