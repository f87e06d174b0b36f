/**
 * The route agent's other decision, pure: which of the node's NAT rules must not touch traffic to
 * and from the remote clusters. A CNI masquerades what its pods send outside the pod network
 * (Flannel's `--ip-masq`, Calico's `natOutgoing`, a cloud's ip-masq-agent): to a remote range,
 * that would replace a pod's address with the node's, which the peer's tunnel does not accept (it
 * takes only the ranges the peering announced) and which hides who called. And traffic from a peer
 * to a pod on another node would leave with the gateway node's address. So every node holds, first
 * in its `nat` POSTROUTING, a jump to a chain of the agent's own that accepts (leaves untranslated)
 * what goes to or comes from a remote range; NAT rules after it never see those packets. With no
 * remote range, chain and jump are removed. The gateway's own translation (remapped ranges) is a
 * table of its own and is not affected.
 */
import { canonical } from "./plan.js";

/** The chain of the agent's exemptions in the `nat` table (an iptables chain name: at most 28 characters). */
export const EXEMPTION_CHAIN = "PULUMI-LIQO-POSTRTG";

/**
 * The comment of the jump to {@link EXEMPTION_CHAIN}, so that it is found and removed as the agent's
 * own. Not of the form `pulumi-liqo:<peer>` that tags a gateway's rules of one peer: the jump is the
 * node's, for every peer.
 */
export const EXEMPTION_JUMP_COMMENT = "pulumi-liqo route agent: peers keep their addresses";

/** The jump from POSTROUTING (arguments after `-t nat -I|-C|-D POSTROUTING`). */
export const EXEMPTION_JUMP: readonly string[] = [
  "-m",
  "comment",
  "--comment",
  EXEMPTION_JUMP_COMMENT,
  "-j",
  EXEMPTION_CHAIN,
];

/** The rules of {@link EXEMPTION_CHAIN}, each as `iptables -S` prints it after `-A <chain>`. */
export function exemptionRules(remoteCidrs: readonly string[]): string[] {
  const ranges = [...new Set(remoteCidrs.map(canonical).filter((c): c is string => c !== undefined))].sort();
  return ranges.flatMap((range) => [`-d ${range} -j ACCEPT`, `-s ${range} -j ACCEPT`]);
}

/** What a listing of the `nat` table (`iptables -t nat -S`) holds of the agent's exemptions. */
export interface ExemptionState {
  /** Whether the chain exists. */
  readonly exists: boolean;
  /** Whether POSTROUTING jumps to it (the agent's jump, by its comment). */
  readonly jumped: boolean;
  /** Its rules, each as after `-A <chain>`. */
  readonly rules: readonly string[];
}

/**
 * Reads the exemptions out of a listing of the whole `nat` table. The whole table, not `-S <chain>`:
 * iptables-nft 1.8 reports a chain that does not exist as "incompatible", which cannot be told
 * from a chain it cannot read.
 */
export function parseExemptionState(listing: string): ExemptionState {
  const lines = listing.split("\n").map((line) => line.trim());
  const prefix = `-A ${EXEMPTION_CHAIN} `;
  const jump = `-A POSTROUTING -m comment --comment "${EXEMPTION_JUMP_COMMENT}" -j ${EXEMPTION_CHAIN}`;
  return {
    exists: lines.includes(`-N ${EXEMPTION_CHAIN}`),
    jumped: lines.includes(jump),
    rules: lines.filter((line) => line.startsWith(prefix)).map((line) => line.slice(prefix.length)),
  };
}

/** Rules to append and rules to delete (each as after `-A <chain>`), so that the chain holds exactly `wanted`. */
export interface ExemptionPlan {
  readonly add: readonly string[];
  readonly remove: readonly string[];
}

/** What turns the chain's `present` rules into `wanted` (order within the chain does not matter: every rule accepts). */
export function planExemptions(wanted: readonly string[], present: readonly string[]): ExemptionPlan {
  return {
    add: wanted.filter((rule) => !present.includes(rule)),
    remove: [...new Set(present.filter((rule) => !wanted.includes(rule)))],
  };
}
