/**
 * Where a server gateway last saw its client, kept in the tunnel's key Secret so that the gateway
 * pod that takes over (a restart, a delete, a drain to another node) dials the client at once.
 * A fresh wireguard-go has no session and no endpoint for its peer: it would otherwise wait until
 * the client gives up on the old session and handshakes again (15 s of WireGuard's timers), and
 * every flow across the tunnel would wait with it. Pure: the Secret's I/O is the gateway's.
 */
import { isWireguardKey } from "./keys.js";

/** The key Secret's data key that holds where the peer was last seen. */
export const PEER_SEEN_KEY = "peerSeenAt";

/** Where a peer was last seen: its public key (an endpoint is only worth dialing for that key) and its `ip:port`. */
export interface PeerSeenAt {
  readonly publicKey: string;
  /** IPv4 address and UDP port, as `wg show` reports it. @example "172.29.1.11:46323" */
  readonly endpoint: string;
}

/** Whether `text` is `a.b.c.d:port`, each octet 0-255 and the port 1-65535. */
export function isIpv4Endpoint(text: string): boolean {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3}):(\d{1,5})$/.exec(text);
  if (!match) return false;
  const [octets, port] = [match.slice(1, 5).map(Number), Number(match[5])];
  return octets.every((o) => o <= 255) && port >= 1 && port <= 65535;
}

/** The Secret's value for `seen`, base64 as a Secret's data holds it. */
export function encodePeerSeenAt(seen: PeerSeenAt): string {
  return Buffer.from(JSON.stringify({ publicKey: seen.publicKey, endpoint: seen.endpoint }), "utf8").toString("base64");
}

/**
 * Reads the Secret's value back; undefined for anything that is not a well-formed key and IPv4
 * endpoint (an old gateway's Secret has none; a hand-edited one is not dialed).
 */
export function decodePeerSeenAt(base64: string | undefined): PeerSeenAt | undefined {
  if (!base64) return undefined;
  try {
    const value = JSON.parse(Buffer.from(base64, "base64").toString("utf8")) as Partial<PeerSeenAt>;
    const { publicKey, endpoint } = value;
    if (typeof publicKey !== "string" || typeof endpoint !== "string") return undefined;
    return isWireguardKey(publicKey) && isIpv4Endpoint(endpoint) ? { publicKey, endpoint } : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `next` says something `known` does not: a new key or a new endpoint. */
export function peerMoved(known: PeerSeenAt | undefined, next: PeerSeenAt): boolean {
  return known?.publicKey !== next.publicKey || known.endpoint !== next.endpoint;
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
 * to its sender. The most recently active first (the longest time left). A server gateway that
 * took over finds its client this way: the client keeps sending on its old session, which the new
 * wireguard-go drops without a word.
 */
export function udpSendersTo(listing: string, port: number): string[] {
  const flows = listing.split("\n").flatMap((line) => {
    const words = line.trim().split(/\s+/);
    if (words[2] !== "udp") return [];
    const fields = conntrackFields(line);
    const original = Object.fromEntries(fields.slice(0, 4).map((f) => [f.key, f.value]));
    const reply = Object.fromEntries(fields.slice(4, 8).map((f) => [f.key, f.value]));
    if (reply["sport"] !== String(port) || original["sport"] === String(port)) return [];
    const endpoint = `${reply["dst"]}:${reply["dport"]}`;
    return isIpv4Endpoint(endpoint) ? [{ endpoint, timeLeft: Number(words[4]) }] : [];
  });
  return [...new Set(flows.sort((x, y) => y.timeLeft - x.timeLeft).map((f) => f.endpoint))];
}
