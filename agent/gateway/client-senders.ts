/**
 * Where a server gateway's client sends from now, read from its node's conntrack, so that a gateway
 * pod that takes over (a restart, a delete, a drain to another node) dials its client at once. A
 * fresh wireguard-go has no session and no endpoint for its peer: it would otherwise wait until the
 * client gives up on the old session and handshakes again (15 s of WireGuard's timers), and every
 * flow across the tunnel would wait with it. Pure: reading the listing is the gateway's.
 *
 * Why conntrack, and not where the old pod last saw the client: a gateway behind a Service's NAT
 * (on a node other than the one its clients dial) sees its client at the NAT's address, and one that
 * dialed the client's own address from there would open a flow of its own through the NAT, to which
 * the client roams and which outlives the gateway's next move (nothing clears it, and the client's
 * packets keep it alive). The flow conntrack lists is the Service's own, whose entries kube-proxy
 * clears when its endpoint moves; answering along it reaches the client from the address it dials.
 */

/** Whether `text` is `a.b.c.d:port`, each octet 0-255 and the port 1-65535. */
export function isIpv4Endpoint(text: string): boolean {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3}):(\d{1,5})$/.exec(text);
  if (!match) return false;
  const [octets, port] = [match.slice(1, 5).map(Number), Number(match[5])];
  return octets.every((o) => o <= 255) && port >= 1 && port <= 65535;
}

/** The `key=value` fields of a conntrack line, in order (each key appears once per direction). */
function conntrackFields(line: string): { key: string; value: string }[] {
  return [...line.matchAll(/(\w+)=(\S+)/g)].map((m) => ({ key: m[1]!, value: m[2]! }));
}

/**
 * Where the packets of UDP flows answered from `port` on this node come from, as this node's
 * conntrack lists them (`/proc/net/nf_conntrack`): for each flow that arrived (not one this node
 * started from `port`), the address its answers go to, after any NAT on the way (a Service's DNAT
 * on another node and its masquerade included), so that a packet sent there follows the flow back
 * to its sender. The most recently active first (the longest time left). A flow whose answers go to
 * one of `ownAddresses` is one this node forwards to another (a Service's masquerade on the way to
 * the gateway's former node): dialing it would send to this node itself.
 */
export function udpSendersTo(listing: string, port: number, ownAddresses: readonly string[] = []): string[] {
  const flows = listing.split("\n").flatMap((line) => {
    const words = line.trim().split(/\s+/);
    if (words[2] !== "udp") return [];
    const fields = conntrackFields(line);
    const original = Object.fromEntries(fields.slice(0, 4).map((f) => [f.key, f.value]));
    const reply = Object.fromEntries(fields.slice(4, 8).map((f) => [f.key, f.value]));
    if (reply["sport"] !== String(port) || original["sport"] === String(port)) return [];
    if (ownAddresses.includes(reply["dst"] ?? "")) return [];
    const endpoint = `${reply["dst"]}:${reply["dport"]}`;
    return isIpv4Endpoint(endpoint) ? [{ endpoint, timeLeft: Number(words[4]) }] : [];
  });
  return [...new Set(flows.sort((x, y) => y.timeLeft - x.timeLeft).map((f) => f.endpoint))];
}

/**
 * Which of `senders` (newest first) to dial next while the tunnel is down, given those dialed since
 * it went down, and the dialed list after it: the newest not dialed yet; when all were, the newest
 * again, and the turn starts over. Anyone can send packets to a gateway's port, and a stranger's
 * flow can be newer than the client's; dialing senders in turn keeps a stranger from taking every
 * turn, so the client is dialed within as many turns as there are senders. (A stranger dialed gets
 * a handshake it cannot answer; at worst the client is reached by WireGuard's own rehandshake, as
 * without any dial.) `undefined`: nobody to dial (none, or only the one already dialed).
 */
export function nextSenderToDial(
  senders: readonly string[],
  dialed: readonly string[],
): { sender: string; dialed: string[] } | undefined {
  const fresh = senders.find((s) => !dialed.includes(s));
  if (fresh) return { sender: fresh, dialed: [...dialed, fresh] };
  const [newest] = senders;
  return newest && senders.length > 1 ? { sender: newest, dialed: [newest] } : undefined;
}
