/**
 * `host:port` endpoints: joining them, and reading one that another cluster announced. Pure: a
 * gateway's announced endpoint arrives from the other organisation's cluster, and is dialed by
 * this one's gateway only once {@link readAnnouncedEndpoint} has accepted it.
 */
import { isIP } from "node:net";

/** `host:port`, with brackets around an IPv6 host (one given in brackets already is kept as it is). */
export function joinHostPort(host: string, port: number): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** An endpoint's parts. */
export interface Endpoint {
  /** An IPv4 or IPv6 address (without brackets) or a DNS name. */
  readonly host: string;
  /** A UDP or TCP port, 1-65535. */
  readonly port: number;
}

/** The longest endpoint text read: a DNS name's 253 characters, brackets, a colon and five digits. */
export const MAX_ENDPOINT_LENGTH = 262;

/** A DNS name as RFC 1123 allows it: labels of letters, digits and inner hyphens, 253 characters at most. */
const DNS_NAME =
  /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/**
 * Why a gateway cannot be reached at address `host` from another cluster: an address that means
 * this very machine, every address, a group, or the link it is on (the tunnel's own addresses are
 * link-local). Undefined for any other address, and for a DNS name (resolved by whoever dials it).
 */
export function unreachableAddressReason(host: string): string | undefined {
  if (isIP(host) === 4) {
    const [a, b] = host.split(".").map(Number) as [number, number];
    if (a === 0) return "it is an unspecified (0.0.0.0/8) address";
    if (a === 127) return "it is a loopback address";
    if (a === 169 && b === 254) return "it is a link-local address";
    if (a >= 224) return "it is a multicast or reserved address";
    return undefined;
  }
  if (isIP(host) === 6) {
    const lower = host.toLowerCase();
    if (lower === "::" || lower === "::1") return "it is the unspecified or loopback address";
    if (/^fe[89ab]/.test(lower)) return "it is a link-local address";
    if (lower.startsWith("ff")) return "it is a multicast address";
    return undefined;
  }
  return /^localhost\.?$/i.test(host) ? "it names this machine" : undefined;
}

/**
 * Reads `text` as an endpoint another cluster announced: `host:port` with an IP address (IPv6 in
 * brackets) or a DNS name and a port of 1-65535, at an address a gateway can be reached at from
 * elsewhere. Returns the endpoint, or why it is refused; the reason quotes nothing of `text`
 * (which may be anything), so it can be shown as it is.
 */
export function readAnnouncedEndpoint(text: unknown): { endpoint: Endpoint } | { refused: string } {
  if (typeof text !== "string") return { refused: "it is not text" };
  if (text.length > MAX_ENDPOINT_LENGTH) return { refused: `it is longer than ${MAX_ENDPOINT_LENGTH} characters` };
  const parts = /^(?:\[(?<v6>[0-9A-Fa-f:.]+)\]|(?<host>[^:[\]]+)):(?<port>\d{1,5})$/.exec(text)?.groups;
  if (!parts) return { refused: "it is not host:port (an IPv6 address in brackets)" };
  const host = parts["v6"] ?? parts["host"]!;
  const port = Number(parts["port"]);
  if (port < 1 || port > 65535) return { refused: "its port is not 1-65535" };
  if (parts["v6"] !== undefined ? isIP(host) !== 6 : isIP(host) !== 4 && !DNS_NAME.test(host))
    return { refused: "its host is neither an IP address nor a DNS name" };
  const unreachable = unreachableAddressReason(host);
  return unreachable ? { refused: unreachable } : { endpoint: { host, port } };
}
