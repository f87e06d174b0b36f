/**
 * The iptables rules and routes a gateway installs so the local cluster reaches a remote whose
 * ranges it sees remapped (see remap.ts). Pure builders (`forge*`): they return argument arrays
 * for `iptables` and `ip` and run nothing.
 *
 * Why marks and a routing table, not only NETMAP and a route: NETMAP rewrites the destination
 * in nat PREROUTING, before the routing decision. After it the destination is the remote's real
 * address, which may lie inside the local pod CIDR (identical CIDRs on both sides are the usual
 * case), so routing by destination would deliver the packet to a local pod. The gateway
 * therefore marks such packets in mangle, which runs before nat, while the destination is still
 * the as-seen one, and a policy rule sends marked packets through a per-peer table holding the
 * real range on the tunnel. The same mark catches replies to connections the remote opened:
 * their destination is also the as-seen address until conntrack undoes the SNAT.
 *
 * Per remapped range, on the local gateway:
 *
 *   | table  | chain       | match                          | action                 | for                                  |
 *   |--------|-------------|--------------------------------|------------------------|--------------------------------------|
 *   | mangle | PREROUTING  | -d as-seen                     | mark to-peer           | forwarded from local pods; replies   |
 *   | mangle | OUTPUT      | -d as-seen                     | mark to-peer           | generated on the gateway host        |
 *   | mangle | PREROUTING  | -s real -i tunnel              | mark from-peer         | opened by the remote                 |
 *   | nat    | PREROUTING  | -d as-seen                     | NETMAP (dst) to real   | forwarded from local pods            |
 *   | nat    | OUTPUT      | -d as-seen                     | NETMAP (dst) to real   | generated on the gateway host        |
 *   | nat    | POSTROUTING | -s real, mark from-peer        | NETMAP (src) to as-seen| opened by the remote, to local pods  |
 *   | nat    | INPUT       | -s real -i tunnel              | NETMAP (src) to as-seen| opened by the remote, to the host    |
 *
 * NETMAP rewrites the destination in PREROUTING and OUTPUT and the source in POSTROUTING and
 * INPUT. POSTROUTING cannot match the input interface, hence the from-peer mark set in mangle
 * PREROUTING: matching the source alone would also rewrite local pods whose real addresses fall
 * in the remote's real range. Replies need no rules: conntrack reverses each translation.
 */
import { parseIpv4 } from "../net/cidr.js";
import type { RangeView, RemoteView } from "./remap.js";

/** Bits of the packet mark the fabric owns: 8 bits of peer slot, 1 bit of direction. */
export const FABRIC_MARK_MASK = 0x01ff0000;
/** The per-peer policy-routing tables are `FABRIC_TABLE_BASE + slot` (1001 to 1255). */
export const FABRIC_TABLE_BASE = 1000;
/** Priority of the fabric's `ip rule`s: ahead of the main table's 32766. */
export const FABRIC_RULE_PRIORITY = 1800;
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
   * The peer's slot on this gateway, 1 to 255, unique among its peers: it picks the peer's
   * marks and routing table, so two peers with the same real range never share them.
   */
  readonly slot: number;
}

/** The packet marks of one peer, as `value/mask` text that iptables and `ip rule` both take. */
export interface PeerMarks {
  /** On packets bound for the peer, chosen before NETMAP: routes them via the peer's table. */
  readonly toPeer: string;
  /** On packets the peer opened, arriving on the tunnel: selects them for the source NETMAP. */
  readonly fromPeer: string;
}

/** The iptables tables that hold a peer's rules (`raw`: a server's untracked answers). */
export const PEER_RULE_TABLES = ["mangle", "nat", "raw"] as const;

/** One iptables rule: where it goes and what it says. */
export interface IptablesRule {
  /** The table, `mangle` or `nat` (or `raw`, for {@link forgeServerReplyRule}). */
  readonly table: (typeof PEER_RULE_TABLES)[number];
  /** The built-in chain. */
  readonly chain: "PREROUTING" | "OUTPUT" | "INPUT" | "POSTROUTING";
  /** Matches and target, without table and chain, e.g. `-d 10.64.0.0/16 … -j NETMAP --to …`. */
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

const hex = (n: number): string => `0x${n.toString(16)}`;

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

/** The marks of the peer in `slot` (1 to 255). */
export function forgePeerMarks(slot: number): PeerMarks {
  if (!Number.isInteger(slot) || slot < 1 || slot > 255)
    throw new GatewayPlanError([`slot ${slot} must be an integer from 1 to 255`]);
  const toPeer = slot * 0x10000;
  const fromPeer = toPeer + 0x01000000;
  return { toPeer: `${hex(toPeer)}/${hex(FABRIC_MARK_MASK)}`, fromPeer: `${hex(fromPeer)}/${hex(FABRIC_MARK_MASK)}` };
}

/** The policy-routing table of the peer in `slot`. */
export function peerRouteTable(slot: number): number {
  return FABRIC_TABLE_BASE + slot;
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

/**
 * The iptables rules, in installation order, that translate a remapped peer's addresses on the
 * local gateway, for traffic forwarded from local pods and traffic generated on the gateway
 * host alike (see the table in this module's header). Empty when nothing is remapped.
 * Matches are written in the order `iptables -S` prints them (-s, -d, -i), so a listed rule
 * reads the same as the forged one.
 */
export function forgeNatRules(plan: GatewayPlan): readonly IptablesRule[] {
  const { peerId, tunnelInterface: tun, view, slot } = checked(plan);
  const comment = `${RULE_COMMENT_PREFIX}${peerId}`;
  const marks = forgePeerMarks(slot);
  const rules: IptablesRule[] = [];
  for (const { real, asSeen } of remappedRanges(view)) {
    const seen = asSeen.toString();
    const actual = real.toString();
    // Marks first: they must be set in mangle, before nat rewrites the addresses they key on.
    rules.push(rule("mangle", "PREROUTING", ["-d", seen], comment, ["-j", "MARK", "--set-xmark", marks.toPeer]));
    rules.push(rule("mangle", "OUTPUT", ["-d", seen], comment, ["-j", "MARK", "--set-xmark", marks.toPeer]));
    rules.push(
      rule("mangle", "PREROUTING", ["-s", actual, "-i", tun], comment, ["-j", "MARK", "--set-xmark", marks.fromPeer]),
    );
    rules.push(rule("nat", "PREROUTING", ["-d", seen], comment, ["-j", "NETMAP", "--to", actual]));
    rules.push(rule("nat", "OUTPUT", ["-d", seen], comment, ["-j", "NETMAP", "--to", actual]));
    rules.push(
      rule("nat", "POSTROUTING", ["-s", actual, "-m", "mark", "--mark", marks.fromPeer], comment, [
        "-j",
        "NETMAP",
        "--to",
        seen,
      ]),
    );
    rules.push(rule("nat", "INPUT", ["-s", actual, "-i", tun], comment, ["-j", "NETMAP", "--to", seen]));
  }
  return rules;
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

/** The `iptables` argument arrays that delete exactly the rules of {@link forgeNatRules}, in reverse order. */
export function forgeNatRuleDeletions(plan: GatewayPlan): readonly (readonly string[])[] {
  return [...forgeNatRules(plan)].reverse().map((r) => ["-t", r.table, "-D", r.chain, ...r.spec]);
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
 * The `ip` argument arrays, in installation order, that route a peer through its tunnel: every
 * as-seen range into the tunnel in the main table (what local routing and the gateway host's
 * own first route lookup use), and, when anything is remapped, the real ranges into the tunnel
 * in the peer's table with a rule sending to-peer-marked packets there. Routes use `replace`,
 * so re-running them is harmless; `ip rule add` is not idempotent, so delete before re-adding.
 */
export function forgeRoutes(plan: GatewayPlan): readonly (readonly string[])[] {
  const { tunnelInterface: tun, view, slot } = checked(plan);
  const table = String(peerRouteTable(slot));
  const commands: string[][] = view.ranges.map((r) => ["route", "replace", r.asSeen.toString(), "dev", tun]);
  const remapped = remappedRanges(view);
  for (const r of remapped) commands.push(["route", "replace", r.real.toString(), "dev", tun, "table", table]);
  // The rule comes after its table is filled, so no marked packet meets an empty table.
  if (remapped.length > 0) {
    commands.push([
      "rule",
      "add",
      "fwmark",
      forgePeerMarks(slot).toPeer,
      "lookup",
      table,
      "priority",
      String(FABRIC_RULE_PRIORITY),
    ]);
  }
  return commands;
}

/** The `ip` argument arrays that undo {@link forgeRoutes}, in reverse order. */
export function forgeRouteDeletions(plan: GatewayPlan): readonly (readonly string[])[] {
  return [...forgeRoutes(plan)].reverse().map(([object, , ...rest]) => [object!, "del", ...rest]);
}
