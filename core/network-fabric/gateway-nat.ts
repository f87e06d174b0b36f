/**
 * The translation and routes a gateway installs so the local cluster reaches a remote whose ranges
 * it sees remapped (see remap.ts). Pure builders (`forge*`): they return argument arrays for
 * `nft`, `iptables` and `ip` and run nothing.
 *
 * Why a stateless translation on the tunnel interface, not NETMAP: the remapped addresses are
 * rewritten on the wire side of the tunnel only (the destination, as-seen to real, on packets
 * leaving into it; the source, real to as-seen, on packets arriving from it, before conntrack), so
 * that nothing inside the cluster, conntrack included, ever sees a remote's real address. Two
 * things NETMAP in nat PREROUTING got wrong follow from that:
 *
 * - A pod on the gateway's node (a hostNetwork gateway shares the node's stack) reaching a
 *   ClusterIP Service whose endpoints are remote pods: kube-proxy's DNAT to the as-seen address is
 *   the connection's one destination NAT, so NETMAP never ran and the packet left with the
 *   as-seen address, which the remote drops. Rewritten after routing, it leaves with the real one.
 * - A gateway that moves to another node: conntrack entries that had NETMAP (or had none, on the
 *   node the gateway moved to) kept their translation for the connection's life, so flows in
 *   flight never recovered. Stateless, every node's entries hold as-seen addresses only, and a
 *   flow follows the routes wherever the gateway is.
 *
 * Per remapped range, on the local gateway, in the peer's own nft table (`ip pulumi-liqo-<peer>`):
 *
 *   | chain     | hook, priority          | match                          | action                          |
 *   |-----------|-------------------------|--------------------------------|---------------------------------|
 *   | to-peer   | postrouting, 300        | oif tunnel, daddr in as-seen   | daddr to real (host part kept)  |
 *   | from-peer | prerouting, -300 (raw)  | iif tunnel, saddr in real      | saddr to as-seen (host part kept) |
 *
 * Postrouting at 300 runs after every NAT (kube-proxy's masquerade included) and sees forwarded and
 * locally generated packets alike; prerouting at -300 runs before conntrack (-200). nft fixes the IP
 * and TCP/UDP checksums. The as-seen ranges are routed into the tunnel in the main table, and no
 * mark or policy table is needed: a remote's real address (inside the local pod CIDR, when the two
 * are the same) is written only once the packet is routed and leaving.
 */
import { formatIpv4, parseIpv4, type Cidr } from "../net/cidr.js";
import type { RangeView, RemoteView } from "./remap.js";

/** Prefix of the iptables comment that tags every rule of a peer. */
export const RULE_COMMENT_PREFIX = "pulumi-liqo:";

/** Thrown for a gateway plan that cannot be forged; the message quotes the bad values. */
export class GatewayPlanError extends Error {
  /** Brand for checks across copies of this module (no `instanceof`). */
  readonly isGatewayPlanError = true;
  constructor(readonly problems: readonly string[]) {
    super(`invalid gateway plan: ${problems.join("; ")}`);
    this.name = "GatewayPlanError";
  }
}

/** What the gateway needs to forge its rules and routes for one peer. */
export interface GatewayPlan {
  /** The peer's id, tagged on every rule. Letters, digits, `.`, `_`, `-`. @example "cluster-b" */
  readonly peerId: string;
  /** The WireGuard interface toward the peer. @example "liqo-b" */
  readonly tunnelInterface: string;
  /** How the local cluster sees the peer, from `chooseRemoteView`. */
  readonly view: RemoteView;
  /**
   * The peer's slot on this gateway, 1 to 255, unique among its peers (reported in its endpoint's
   * status). Checked here so that a plan is refused whole.
   */
  readonly slot: number;
}

/**
 * The iptables tables that hold a peer's rules (`raw`: a server's untracked answers; `nat`: the
 * relay's; `mangle` and `nat`: the marks and NETMAP of gateways before the stateless translation,
 * removed on sight, so a gateway upgraded in place leaves none behind).
 */
export const PEER_RULE_TABLES = ["mangle", "nat", "raw"] as const;

/** One iptables rule: where it goes and what it says. */
export interface IptablesRule {
  /** The table: `raw` for {@link forgeServerReplyRule}, `nat` for {@link forgeRelayRule}. */
  readonly table: (typeof PEER_RULE_TABLES)[number];
  /** The built-in chain. */
  readonly chain: "PREROUTING" | "OUTPUT" | "INPUT" | "POSTROUTING";
  /** Matches and target, without table and chain, e.g. `-p udp -m udp --sport 51820 … -j NOTRACK`. */
  readonly spec: readonly string[];
  /** The full argument array that adds the rule: `-t <table> -A <chain> <spec>` (or `-I <chain> 1`, where it must come first). */
  readonly args: readonly string[];
}

const isIpv4 = (text: string): boolean => {
  try {
    parseIpv4(text);
    return true;
  } catch {
    return false;
  }
};

/** The problems with a peer id, which every rule of the peer carries in its comment. */
function peerIdProblems(peerId: string): string[] {
  // The comment is matched token by token on deletion, so it must hold no spaces or quotes.
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/.test(peerId)
    ? []
    : [`peerId "${peerId}" must be 1 to 200 letters, digits, ".", "_" or "-", starting with a letter or digit`];
}

/** The problems with a plan, all at once. */
function planProblems(plan: GatewayPlan): string[] {
  const problems = peerIdProblems(plan.peerId);
  // Linux interface names: at most 15 bytes, no slash, no whitespace.
  if (!/^[A-Za-z0-9._-]{1,15}$/.test(plan.tunnelInterface)) {
    problems.push(`tunnelInterface "${plan.tunnelInterface}" must be 1 to 15 letters, digits, ".", "_" or "-"`);
  }
  if (!Number.isInteger(plan.slot) || plan.slot < 1 || plan.slot > 255) {
    problems.push(`slot ${plan.slot} must be an integer from 1 to 255`);
  }
  return problems;
}

function checked(plan: GatewayPlan): GatewayPlan {
  const problems = planProblems(plan);
  if (problems.length > 0) throw new GatewayPlanError(problems);
  return plan;
}

function rule(
  table: IptablesRule["table"],
  chain: IptablesRule["chain"],
  matches: readonly string[],
  comment: string,
  target: readonly string[],
): IptablesRule {
  const spec = [...matches, "-m", "comment", "--comment", comment, ...target];
  return { table, chain, spec, args: ["-t", table, "-A", chain, ...spec] };
}

/** The remapped ranges of a view; ranges seen as is need routes only. */
function remappedRanges(view: RemoteView): readonly RangeView[] {
  return view.ranges.filter((r) => r.remapped);
}

/** One stateless rewrite on the tunnel interface: addresses in `match` become the same host in `to`. */
export interface Translation {
  /**
   * `to-peer`: the destination of packets leaving into the tunnel (as-seen to real);
   * `from-peer`: the source of packets arriving from it (real to as-seen).
   */
  readonly direction: "to-peer" | "from-peer";
  /** The range matched. */
  readonly match: Cidr;
  /** The block of the same size it is rewritten into, host part kept. */
  readonly to: Cidr;
}

/** The nft table that holds a peer's translation: one per peer, replaced and deleted as a whole. */
export function natTableName(peerId: string): string {
  const problems = peerIdProblems(peerId);
  if (problems.length > 0) throw new GatewayPlanError(problems);
  return `${RULE_COMMENT_PREFIX.slice(0, -1)}-${peerId}`;
}

/** The translations of a plan, pod range first, both directions of each remapped range. Empty when nothing is remapped. */
export function forgeTranslations(plan: GatewayPlan): readonly Translation[] {
  return remappedRanges(checked(plan).view).flatMap(({ real, asSeen }): Translation[] => [
    { direction: "to-peer", match: asSeen, to: real },
    { direction: "from-peer", match: real, to: asSeen },
  ]);
}

/** The nft expression that rewrites `field` from `match` into `to`, keeping the host part. */
function rewrite(field: "daddr" | "saddr", { match, to }: Translation): string {
  const hostmask = formatIpv4(match.size - 1);
  return `ip ${field} ${match} ip ${field} set ip ${field} & ${hostmask} | ${formatIpv4(to.network)}`;
}

/**
 * The `nft` arguments (one transaction) that replace the peer's table with its translation, or
 * undefined when nothing is remapped. Adding, deleting and adding the table again in one batch makes
 * it idempotent and atomic: no packet meets half a table.
 */
export function forgeNatTable(plan: GatewayPlan): readonly string[] | undefined {
  const translations = forgeTranslations(plan);
  if (translations.length === 0) return undefined;
  const table = `ip ${natTableName(plan.peerId)}`;
  const tun = plan.tunnelInterface;
  const commands = [
    `add table ${table}`,
    `delete table ${table}`,
    `add table ${table}`,
    `add chain ${table} to-peer { type filter hook postrouting priority 300; policy accept; }`,
    `add chain ${table} from-peer { type filter hook prerouting priority -300; policy accept; }`,
    ...translations.map((t) =>
      t.direction === "to-peer"
        ? `add rule ${table} to-peer oifname "${tun}" ${rewrite("daddr", t)}`
        : `add rule ${table} from-peer iifname "${tun}" ${rewrite("saddr", t)}`,
    ),
  ];
  return [commands.join("; ")];
}

/** The `nft` arguments that delete the peer's table (nft fails with "No such file or directory" when there is none). */
export function forgeNatTableDeletion(peerId: string): readonly string[] {
  return ["delete", "table", "ip", natTableName(peerId)];
}

/**
 * The rule that sends a server gateway's WireGuard replies untracked, unless they leave from its
 * node's own address. Why: a Service (NodePort, LoadBalancer) that brings the peer's packets to a
 * hostNetwork gateway rewrites their destination to the node's address, but wireguard-go answers
 * from whatever source the route back prefers, not from the address the packet reached. On a node
 * with several addresses the two differ; conntrack then takes the answer for a new flow whose
 * reply tuple clashes with the peer's, NATs it to another source port, and the peer's own NAT
 * drops it. Untracked, the answer leaves from the very address and port the peer dialled. An
 * answer from the node's address matches the DNATed flow and stays tracked, so conntrack restores
 * the address the peer dialled (a Service IP the node itself holds, for one).
 */
export function forgeServerReplyRule(peerId: string, listenPort: number, nodeAddress?: string): IptablesRule {
  const problems = [
    ...peerIdProblems(peerId),
    ...(Number.isInteger(listenPort) && listenPort >= 1 && listenPort <= 65535
      ? []
      : [`listenPort ${listenPort} must be a port, 1 to 65535`]),
    ...(nodeAddress === undefined || isIpv4(nodeAddress)
      ? []
      : [`nodeAddress "${nodeAddress}" must be an IPv4 address`]),
  ];
  if (problems.length > 0) throw new GatewayPlanError(problems);
  // In the order `iptables -S` prints them, like every rule here.
  const matches = [
    ...(nodeAddress ? ["!", "-s", `${nodeAddress}/32`] : []),
    ...["-p", "udp", "-m", "udp", "--sport", String(listenPort)],
  ];
  return rule("raw", "OUTPUT", matches, `${RULE_COMMENT_PREFIX}${peerId}`, ["-j", "NOTRACK"]);
}

/**
 * The rule that keeps the in-band relay's connections for the gateway itself: packets from the
 * tunnel to its own address, on the relayed ports, skip the rest of nat PREROUTING. Why: a
 * NodePort Service matches its port on every address of the node, the tunnel's included, and
 * kube-proxy's DNAT would take a connection meant for the relay to the Service's pod, whose
 * answer, without the relay's NAT, goes to the peer's real address (inside the local pod CIDR
 * where the two overlap). Its `args` insert it first in the chain, ahead of kube-proxy's jump.
 */
export function forgeRelayRule(
  peerId: string,
  tunnelInterface: string,
  address: string,
  ports: readonly number[],
): IptablesRule {
  const problems = [
    ...peerIdProblems(peerId),
    ...(/^[A-Za-z0-9._-]{1,15}$/.test(tunnelInterface)
      ? []
      : [`tunnelInterface "${tunnelInterface}" is not an interface name`]),
    ...(isIpv4(address) ? [] : [`address "${address}" must be an IPv4 address`]),
    ...ports.filter((p) => !(Number.isInteger(p) && p >= 1 && p <= 65535)).map((p) => `port ${p} must be 1 to 65535`),
    ...(ports.length === 0 ? ["no port to relay"] : []),
  ];
  if (problems.length > 0) throw new GatewayPlanError(problems);
  const matches = [
    ...["-d", `${address}/32`, "-i", tunnelInterface, "-p", "tcp"],
    ...["-m", "multiport", "--dports", [...new Set(ports)].join(",")],
  ];
  const relay = rule("nat", "PREROUTING", matches, `${RULE_COMMENT_PREFIX}${peerId}`, ["-j", "ACCEPT"]);
  return { ...relay, args: ["-t", "nat", "-I", "PREROUTING", "1", ...relay.spec] };
}

/** Splits one `iptables -S` line into arguments, honouring the double quotes iptables prints. */
function splitRuleLine(line: string): string[] {
  const tokens: string[] = [];
  for (const m of line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g))
    tokens.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : m[2]!);
  return tokens;
}

/**
 * The `iptables` argument arrays that delete every rule of `peerId` found in a listing of
 * `table` (the output of `iptables -t <table> -S`), last rule first. For deletion when the plan
 * that forged the rules is no longer known. A rule is the peer's only when its comment is
 * exactly `pulumi-liqo:<peerId>`, so peer `b` never takes peer `b2`'s rules.
 */
export function forgeNatRuleDeletionsFromListing(
  table: IptablesRule["table"],
  listing: string,
  peerId: string,
): readonly (readonly string[])[] {
  const comment = `${RULE_COMMENT_PREFIX}${peerId}`;
  const deletions: string[][] = [];
  for (const line of listing.split("\n")) {
    const tokens = splitRuleLine(line.trim());
    if (tokens[0] !== "-A" || tokens.length < 2) continue;
    const own = tokens.some((t, i) => t === "--comment" && tokens[i + 1] === comment);
    if (own) deletions.push(["-t", table, "-D", ...tokens.slice(1)]);
  }
  return deletions.reverse();
}

/**
 * The `ip` argument arrays that route a peer through its tunnel: every as-seen range into the
 * tunnel in the main table. `replace`, so re-running them is harmless.
 */
export function forgeRoutes(plan: GatewayPlan): readonly (readonly string[])[] {
  const { tunnelInterface: tun, view } = checked(plan);
  return view.ranges.map((r) => ["route", "replace", r.asSeen.toString(), "dev", tun]);
}

/** The `ip` argument arrays that undo {@link forgeRoutes}. */
export function forgeRouteDeletions(plan: GatewayPlan): readonly (readonly string[])[] {
  return forgeRoutes(plan).map(([object, , ...rest]) => [object!, "del", ...rest]);
}
