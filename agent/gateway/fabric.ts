/**
 * The routes and translation toward one peer, applied to and removed from a gateway's namespace (a
 * named one, or undefined for this process's own). What to apply is decided by the pure forgers of
 * gateway-nat.ts; this module runs them.
 */
import { readFile } from "node:fs/promises";
import { runIn, type CommandError } from "../../host/exec.js";
import {
  forgeNatRuleDeletionsFromListing,
  forgeNatTable,
  forgeNatTableDeletion,
  forgeRoutes,
  forgeRelayRule,
  forgeServerReplyRule,
  PEER_RULE_TABLES,
  type GatewayPlan,
} from "../../core/network-fabric/gateway-nat.js";

/**
 * Kernel settings a gateway needs: forwarding, and no reverse-path filter, which would drop what
 * arrives from the tunnel with a source inside a local range (the usual case when both clusters
 * use the same pod CIDR: the remote's real addresses then look like local ones).
 */
async function ensureGatewaySysctls(netns: string | undefined, ifname: string): Promise<void> {
  for (const [key, value] of [
    ["net.ipv4.ip_forward", "1"],
    ["net.ipv4.conf.all.rp_filter", "0"],
    [`net.ipv4.conf.${ifname}.rp_filter`, "0"],
  ] as const) {
    // Read first, write only what differs: a pod's /proc/sys is read-only (its container runtime
    // mounts it so), so a gateway pod can only work on a node already set this way, and says which.
    if ((await runIn(netns, "sysctl", ["-n", key])).trim() === value) continue;
    await runIn(netns, "sysctl", ["-q", "-w", `${key}=${value}`]);
  }
}

/**
 * Removes every rule of `peerId`: its nft table, and its iptables rules in `tables` (tagged by their
 * comment, found by listing; those of a gateway before the stateless translation too). Idempotent.
 */
export async function removePeerFabric(
  netns: string | undefined,
  peerId: string,
  tables: readonly (typeof PEER_RULE_TABLES)[number][] = PEER_RULE_TABLES,
): Promise<void> {
  for (const table of tables) {
    const listing = await runIn(netns, "iptables", ["-w", "-t", table, "-S"]);
    for (const args of forgeNatRuleDeletionsFromListing(table, listing, peerId))
      await runIn(netns, "iptables", ["-w", ...args]);
  }
  await runIn(netns, "nft", forgeNatTableDeletion(peerId)).catch((error: CommandError) => {
    // No table: the peer was seen as is, or it is gone already.
    if (!/No such file or directory/.test(error.stderr)) throw error;
  });
}

/**
 * Brings the namespace's translation and routes toward one peer to `plan`: removes whatever of the
 * peer's is there first (a changed remapping must not leave the old rules behind, nor the old
 * view's route in the main table), then installs routes and translation afresh.
 */
export async function applyPeerFabric(netns: string | undefined, plan: GatewayPlan): Promise<void> {
  await ensureGatewaySysctls(netns, plan.tunnelInterface);
  // Not the raw table: a server's reply rule (applyServerReplyRule) is set before its interface
  // starts and must hold while it runs.
  await removePeerFabric(netns, plan.peerId, ["mangle", "nat"]);
  // The routes `ip route replace` added into the tunnel (proto boot), not the link's own /30
  // (proto kernel, from its address): a view that moved must not keep routing its old range.
  await runIn(netns, "ip", ["route", "flush", "table", "main", "dev", plan.tunnelInterface, "proto", "boot"]).catch(
    (error: CommandError) => {
      if (!/Nothing to flush/.test(error.stderr)) throw error;
    },
  );
  for (const args of forgeRoutes(plan)) await runIn(netns, "ip", args);
  const table = forgeNatTable(plan);
  if (table) await runIn(netns, "nft", table);
}

/**
 * Lets the replies of a server interface toward `peerId`, from `listenPort`, leave untracked unless
 * they come from `nodeAddress` (see forgeServerReplyRule for why). Replaces the peer's former rule,
 * so a changed port leaves none behind; removePeerFabric removes it with the peer's other rules.
 */
export async function applyServerReplyRule(
  netns: string | undefined,
  peerId: string,
  listenPort: number,
  nodeAddress: string | undefined,
): Promise<void> {
  const rule = forgeServerReplyRule(peerId, listenPort, nodeAddress);
  const listing = await runIn(netns, "iptables", ["-w", "-t", rule.table, "-S"]);
  for (const args of forgeNatRuleDeletionsFromListing(rule.table, listing, peerId))
    await runIn(netns, "iptables", ["-w", ...args]);
  await runIn(netns, "iptables", ["-w", ...rule.args]);
}

/**
 * Keeps connections arriving on interface `ifname` for `address`, on the relayed `ports`, for the
 * gateway's relay (see forgeRelayRule for why). Tagged with the interface's name like the peer's
 * other rules, so applyPeerFabric and removePeerFabric remove it with them.
 */
export async function applyRelayRule(
  netns: string | undefined,
  ifname: string,
  address: string,
  ports: readonly number[],
): Promise<void> {
  const rule = forgeRelayRule(ifname, ifname, address, ports);
  const present = await runIn(netns, "iptables", ["-w", "-t", rule.table, "-C", rule.chain, ...rule.spec]).then(
    () => true,
    () => false,
  );
  if (!present) await runIn(netns, "iptables", ["-w", ...rule.args]);
}

/**
 * Sends one ICMP echo to `address` out of `ifname`; resolves the round-trip time in milliseconds,
 * or undefined when no reply came within a second.
 */
export async function probeAcross(
  netns: string | undefined,
  ifname: string,
  address: string,
): Promise<number | undefined> {
  const out = await runIn(netns, "ping", ["-n", "-q", "-c", "1", "-W", "1", "-I", ifname, address]).catch(() => "");
  const match = /= [\d.]+\/([\d.]+)\//.exec(out);
  return match ? Number(match[1]) : undefined;
}

/**
 * The namespace's conntrack listing (`/proc/net/nf_conntrack`), or "" where the kernel offers none.
 * Read by the process itself in its own namespace (a gateway pod's image has no `cat`), through
 * `cat` inside another one.
 */
export async function readConntrack(netns: string | undefined): Promise<string> {
  const file = "/proc/net/nf_conntrack";
  return (netns === undefined ? readFile(file, "utf8") : runIn(netns, "cat", [file])).catch(() => "");
}
