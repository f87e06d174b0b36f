/**
 * What a WireGuard interface reports about itself, parsed from `wg show <ifname> dump`. Pure: the
 * parser is checked against literal dumps, and the interface's private key (the first field of the
 * dump) is dropped here, so it never travels further than the parser.
 */

/** One peer of a WireGuard interface, as the interface sees it. */
export interface WireguardPeerStatus {
  /** The peer's public key. */
  readonly publicKey: string;
  /**
   * Where the peer's packets last came from (or where they are sent), `host:port`; undefined
   * for a peer configured without an endpoint that has not sent anything yet.
   * @example "172.29.4.11:51820"
   */
  readonly endpoint: string | undefined;
  /** Networks routed to this peer and accepted from it. @example ["10.142.0.0/16", "10.254.0.2/32"] */
  readonly allowedIps: readonly string[];
  /** When the latest handshake completed; undefined if none has yet. */
  readonly latestHandshake: Date | undefined;
  /** Bytes received from the peer (encrypted, UDP payload), since the interface started. */
  readonly rxBytes: number;
  /** Bytes sent to the peer (encrypted, UDP payload), since the interface started. */
  readonly txBytes: number;
  /** Keepalive interval in seconds; undefined when off. */
  readonly keepaliveSeconds: number | undefined;
}

/** A WireGuard interface's state, without its private key. */
export interface WireguardStatus {
  /** The interface name. */
  readonly ifname: string;
  /** The interface's public key; undefined before a private key is set. */
  readonly publicKey: string | undefined;
  /** The UDP port it listens on. */
  readonly listenPort: number;
  /** Its peers, in the order `wg` lists them. */
  readonly peers: readonly WireguardPeerStatus[];
}

/** Thrown for a dump this parser does not understand; the message quotes the bad line without keys. */
export class WireguardDumpError extends Error {
  /** Brand for checks across copies of this module (no `instanceof`). */
  readonly isWireguardDumpError = true;
  constructor(
    readonly ifname: string,
    reason: string,
  ) {
    super(`\`wg show ${ifname} dump\`: ${reason}`);
    this.name = "WireguardDumpError";
  }
}

const none = (field: string): string | undefined => (field === "(none)" || field === "" ? undefined : field);

function count(ifname: string, what: string, field: string): number {
  if (!/^\d+$/.test(field)) throw new WireguardDumpError(ifname, `${what} "${field}" is not a number`);
  return Number(field);
}

/**
 * Parses the output of `wg show <ifname> dump`: one tab-separated line for the interface
 * (private key, public key, listen port, fwmark), then one per peer (public key, preshared key,
 * endpoint, allowed IPs, latest handshake in epoch seconds, rx bytes, tx bytes, keepalive).
 */
export function parseWireguardDump(ifname: string, dump: string): WireguardStatus {
  const lines = dump.split("\n").filter((line) => line.trim() !== "");
  const head = lines[0]?.split("\t");
  if (!head || head.length !== 4) {
    throw new WireguardDumpError(ifname, `expected an interface line of 4 fields, got ${head?.length ?? 0}`);
  }
  const peers = lines.slice(1).map((line, i): WireguardPeerStatus => {
    const f = line.split("\t");
    if (f.length !== 8) throw new WireguardDumpError(ifname, `peer line ${i + 1}: expected 8 fields, got ${f.length}`);
    const handshake = count(ifname, "latest handshake", f[4]!);
    const keepalive = f[7]!;
    return {
      publicKey: f[0]!,
      endpoint: none(f[2]!),
      allowedIps: none(f[3]!)?.split(",") ?? [],
      latestHandshake: handshake === 0 ? undefined : new Date(handshake * 1000),
      rxBytes: count(ifname, "transfer-rx", f[5]!),
      txBytes: count(ifname, "transfer-tx", f[6]!),
      keepaliveSeconds: keepalive === "off" ? undefined : count(ifname, "persistent keepalive", keepalive),
    };
  });
  return { ifname, publicKey: none(head[1]!), listenPort: count(ifname, "listen port", head[2]!), peers };
}
