/**
 * How the local cluster sees a remote cluster's addresses when the two clusters' CIDRs may
 * overlap, the way Liqo does it: a remote range that collides with anything local is shown
 * locally under a free block of the same size, and the gateway translates between the two with
 * iptables NETMAP (host part kept). Pure: no I/O, so every decision is unit-tested alone.
 *
 * Each side decides only its own view of the other. Cluster A translates B's addresses on A's
 * gateway; B does the same for A's on B's. So a packet leaves A with A's real source and B's
 * real destination, and each gateway rewrites only the addresses of the peer it faces.
 */
import { Cidr, formatIpv4, parseIpv4 } from "../net/cidr.js";

/**
 * The default pool remapped ranges are taken from: `10.64.0.0/10` (10.64.0.0 to 10.127.255.255,
 * room for 64 remapped /16s). It keeps clear of the ranges clusters and clouds most often use,
 * 10.0.0.0/16 (cloud VPC defaults), 10.42/10.43 (k3s) and 10.244.0.0/16 (flannel, kind), so a
 * remapped range rarely collides even with networks the caller forgot to list as reserved. It
 * does hold 10.96.0.0/12 (the kubeadm service default): pass the service CIDR in `reserved`,
 * as with every range in use locally. A remote wider than /10 needs an explicit, wider pool.
 */
export const DEFAULT_REMAP_POOL: Cidr = Cidr.parse("10.64.0.0/10");

/** What went wrong in a remapping decision or a translation. */
export type RemapErrorKind = "invalid-input" | "pool-exhausted" | "outside-range" | "prefix-mismatch";

/** Thrown by the remapping decisions and translations; the message quotes the offending values. */
export class RemapError extends Error {
  /** Brand for checks across copies of this module (no `instanceof`). */
  readonly isRemapError = true;
  constructor(
    /** Which rule was broken, for callers that branch on it. */
    readonly kind: RemapErrorKind,
    message: string,
    /** For `pool-exhausted`: which remote range could not be placed. */
    readonly range?: "pod" | "external",
  ) {
    super(message);
    this.name = "RemapError";
  }
}

/** Input of {@link chooseRemoteView}: every range of both clusters that the decision must respect. */
export interface RemoteViewInput {
  /** The local cluster's pod CIDR. @example Cidr.parse("10.100.0.0/16") */
  readonly localPodCidr: Cidr;
  /** The local cluster's external CIDR (the range its exposed addresses live in), if it has one. */
  readonly localExternalCidr?: Cidr;
  /** The remote cluster's real pod CIDR, as the remote announces it. */
  readonly remotePodCidr: Cidr;
  /** The remote cluster's real external CIDR, if it has one. */
  readonly remoteExternalCidr?: Cidr;
  /**
   * Ranges already in use locally that no remote may be seen under: the service CIDR, other
   * peers' as-seen ranges, the lab and host networks.
   */
  readonly reserved: readonly Cidr[];
  /** Where remapped ranges are taken from. @default {@link DEFAULT_REMAP_POOL} (10.64.0.0/10) */
  readonly pool?: Cidr;
}

/** One remote range and the range the local cluster sees it under. */
export interface RangeView {
  /** The range as the remote cluster really uses it. */
  readonly real: Cidr;
  /** The range the local cluster addresses it by; equal to `real` when not remapped. */
  readonly asSeen: Cidr;
  /** Whether `asSeen` differs from `real`, i.e. whether the gateway must NETMAP. */
  readonly remapped: boolean;
}

/** How the local cluster sees a remote cluster: result of {@link chooseRemoteView}. */
export interface RemoteView {
  /** The remote pod CIDR as the local cluster sees it. */
  readonly remotePodCidrAsSeen: Cidr;
  /** Whether the remote pod CIDR was remapped. */
  readonly remapped: boolean;
  /** The remote external CIDR as the local cluster sees it, when the remote has one. */
  readonly remoteExternalCidrAsSeen?: Cidr;
  /** Whether the remote external CIDR was remapped, when the remote has one. */
  readonly externalRemapped?: boolean;
  /** Every remote range with its view, pod CIDR first: what the NAT and route forgers take. */
  readonly ranges: readonly RangeView[];
}

/** The block of `prefixLength` starting at the 32-bit `network`; Cidr has only a text constructor. */
export function cidrAt(network: number, prefixLength: number): Cidr {
  return Cidr.parse(`${formatIpv4(network)}/${prefixLength}`);
}

/** The first free block of `prefixLength` inside `pool` that overlaps none of `taken`, if any. */
export function firstFreeBlock(pool: Cidr, prefixLength: number, taken: readonly Cidr[]): Cidr | undefined {
  if (prefixLength < pool.prefixLength) return undefined;
  const size = 2 ** (32 - prefixLength);
  const end = pool.network + pool.size;
  let candidate = pool.network;
  while (candidate + size <= end) {
    const block = cidrAt(candidate, prefixLength);
    const blocker = taken.find((t) => t.overlaps(block));
    if (!blocker) return block;
    // Skip past the whole blocking range at once rather than block by block: a /30 searched
    // through a /10 would otherwise take a million steps behind one large reserved range.
    const pastBlocker = blocker.network + blocker.size;
    candidate = Math.ceil(Math.max(candidate + size, pastBlocker) / size) * size;
  }
  return undefined;
}

/** The problems with the ranges given, all at once; empty when the decision can proceed. */
function inputProblems(input: RemoteViewInput): string[] {
  const problems: string[] = [];
  const { localPodCidr, localExternalCidr, remotePodCidr, remoteExternalCidr } = input;
  // A cluster whose own pod and external ranges overlap makes translation ambiguous: an address
  // in both could not be mapped back to one of them.
  if (remoteExternalCidr?.overlaps(remotePodCidr)) {
    problems.push(`the remote pod CIDR ${remotePodCidr} overlaps the remote external CIDR ${remoteExternalCidr}`);
  }
  if (localExternalCidr?.overlaps(localPodCidr)) {
    problems.push(`the local pod CIDR ${localPodCidr} overlaps the local external CIDR ${localExternalCidr}`);
  }
  return problems;
}

/**
 * Decides how the local cluster sees a remote cluster's pod CIDR and external CIDR.
 *
 * A remote range that overlaps nothing local (the local pod and external CIDRs and every
 * reserved range) is seen as is. Otherwise it is seen under the first free block of the same
 * prefix length in the pool, counted from the pool's start, that overlaps nothing local and
 * neither the other remote range's view. Ranges kept as is are settled before any is remapped,
 * so a remapped range never lands on a range kept as is. Deterministic: the same input always
 * gives the same view.
 *
 * @throws RemapError `invalid-input` when a cluster's own pod and external CIDRs overlap;
 *   `pool-exhausted` when no block of the needed size is free, naming the remote CIDR and pool.
 */
export function chooseRemoteView(input: RemoteViewInput): RemoteView {
  const problems = inputProblems(input);
  if (problems.length > 0)
    throw new RemapError("invalid-input", `cannot choose a view of the remote: ${problems.join("; ")}`);
  const pool = input.pool ?? DEFAULT_REMAP_POOL;
  const local = [input.localPodCidr, ...(input.localExternalCidr ? [input.localExternalCidr] : []), ...input.reserved];
  const free = (cidr: Cidr): boolean => !local.some((l) => l.overlaps(cidr));

  const remotes: { readonly label: string; readonly range: "pod" | "external"; readonly real: Cidr }[] = [
    { label: "remote pod CIDR", range: "pod", real: input.remotePodCidr },
    ...(input.remoteExternalCidr
      ? [{ label: "remote external CIDR", range: "external" as const, real: input.remoteExternalCidr }]
      : []),
  ];
  const kept = remotes.map((r) => free(r.real));
  const taken = [...local, ...remotes.filter((_, i) => kept[i]).map((r) => r.real)];
  const ranges = remotes.map(({ label, range, real }, i): RangeView => {
    if (kept[i]) return { real, asSeen: real, remapped: false };
    const asSeen = firstFreeBlock(pool, real.prefixLength, taken);
    if (!asSeen) {
      const why =
        real.prefixLength < pool.prefixLength
          ? `the pool is smaller than a /${real.prefixLength}`
          : `every /${real.prefixLength} in it overlaps one of ${taken.map(String).join(", ")}`;
      throw new RemapError(
        "pool-exhausted",
        `cannot remap the ${label} ${real}: no free /${real.prefixLength} in the pool ${pool} (${why})`,
        range,
      );
    }
    taken.push(asSeen);
    return { real, asSeen, remapped: true };
  });

  const [pod, external] = ranges as [RangeView, RangeView | undefined];
  return {
    remotePodCidrAsSeen: pod.asSeen,
    remapped: pod.remapped,
    ...(external ? { remoteExternalCidrAsSeen: external.asSeen, externalRemapped: external.remapped } : {}),
    ranges,
  };
}

/**
 * Translates `address` from block `from` to block `to` keeping its host part, as iptables
 * NETMAP does: `10.100.3.7` from `10.100.0.0/16` to `10.64.0.0/16` is `10.64.3.7`.
 *
 * @throws RemapError `prefix-mismatch` when the blocks differ in size; `outside-range` when the
 *   address is not in `from`. CidrParseError when `address` is not an IPv4 address.
 */
export function translateAddress(address: string, from: Cidr, to: Cidr): string {
  if (from.prefixLength !== to.prefixLength) {
    throw new RemapError(
      "prefix-mismatch",
      `cannot translate "${address}" from ${from} to ${to}: the prefix lengths differ, and NETMAP keeps the host part only between blocks of one size`,
    );
  }
  const value = parseIpv4(address);
  if (!from.contains(address)) {
    throw new RemapError(
      "outside-range",
      `cannot translate "${address}" from ${from} to ${to}: the address is outside ${from}`,
    );
  }
  return to.nth(value - from.network);
}

/** The inverse of {@link translateAddress} with the same arguments: maps `address` in `to` back into `from`. */
export function untranslateAddress(address: string, from: Cidr, to: Cidr): string {
  return translateAddress(address, to, from);
}

/** The as-seen ranges of a view: what to add to `reserved` when deciding the next peer's view. */
export function asSeenRanges(view: RemoteView): readonly Cidr[] {
  return view.ranges.map((r) => r.asSeen);
}
