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

/** The rules of the chain in a listing of the `nat` table (`iptables -t nat -S`; the `-N` line and other chains' rules left out). */
export function parseExemptionRules(listing: string): string[] {
  const prefix = `-A ${EXEMPTION_CHAIN} `;
  return listing
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith(prefix))
    .map((line) => line.slice(prefix.length));
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
