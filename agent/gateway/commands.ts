/**
 * The `wg` and `ip` argument lists of a gateway, forged from typed specs with no I/O, and the checks
 * on those specs. Every check collects all problems, each naming its field and echoing its value
 * (never a key's value).
 */
import { createHash } from "node:crypto";
import { Cidr, parseIpv4 } from "../../core/net/cidr.js";
import { describeNamespace } from "../../host/namespaces.js";
import { isWireguardKey } from "./keys.js";

/** Thrown with every problem of a gateway spec, not only the first. */
export class GatewaySpecError extends Error {
  /** Brand for checks across copies of this module (no `instanceof`). */
  readonly isGatewaySpecError = true;
  constructor(
    readonly what: string,
    readonly problems: readonly string[],
  ) {
    super(`invalid ${what}:\n  - ${problems.join("\n  - ")}`);
    this.name = "GatewaySpecError";
  }
}

/** Linux's limit on interface names (IFNAMSIZ minus the terminating NUL). */
export const MAX_IFNAME_LENGTH = 15;

/** Prefix of every WireGuard interface this project names. */
export const WIREGUARD_IFNAME_PREFIX = "lqw";

/**
 * The WireGuard interface name for the tunnel to `peerId`: `lqw` and 12 hex digits of a SHA-256,
 * so 15 characters, deterministic, and unique in practice.
 *
 * wireguard-go's control sockets live in `/var/run/wireguard/<ifname>.sock`, one directory for
 * every network namespace of the machine, so a name must be unique machine-wide, not only inside
 * a cluster. Where several clusters share one machine (the local labs) and two of them may peer
 * with the same remote, pass `localClusterId` too: the name then stands for the pair.
 */
export function wireguardInterfaceName(peerId: string, localClusterId = ""): string {
  if (peerId === "") throw new GatewaySpecError("interface name request", ['peerId "": give the remote cluster\'s id']);
  const digest = createHash("sha256").update(`${localClusterId}\0${peerId}`).digest("hex");
  return `${WIREGUARD_IFNAME_PREFIX}${digest.slice(0, MAX_IFNAME_LENGTH - WIREGUARD_IFNAME_PREFIX.length)}`;
}

/** Problems of an interface name, each echoing it. */
export function ifnameProblems(ifname: string): string[] {
  return /^[A-Za-z0-9_.=+-]{1,15}$/.test(ifname)
    ? []
    : [
        `ifname "${ifname}": use 1 to ${MAX_IFNAME_LENGTH} letters, digits or _.=+- (wireguard-go names its socket after it)`,
      ];
}

/** Problems of an address with prefix such as `10.254.0.1/30`. */
export function interfaceAddressProblems(field: string, address: string): string[] {
  const match = /^([^/]+)\/(\d{1,2})$/.exec(address);
  if (!match || Number(match[2]) > 32)
    return [`${field} "${address}": expected an address with its prefix, e.g. 10.254.0.1/30`];
  try {
    parseIpv4(match[1]!);
    return [];
  } catch (error) {
    return [`${field} "${address}": ${(error as Error).message}`];
  }
}

function portProblems(field: string, port: number): string[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535
    ? []
    : [`${field} ${port}: expected a UDP port from 1 to 65535`];
}

function cidrProblems(field: string, cidrs: readonly string[]): string[] {
  return cidrs.flatMap((cidr, i) => {
    try {
      Cidr.parse(cidr);
      return [];
    } catch (error) {
      return [`${field}[${i}]: ${(error as Error).message}`];
    }
  });
}

/** What `wg set` is told about the interface itself. */
export interface WireguardInterfaceSettings {
  /** Interface name. */
  readonly ifname: string;
  /** Path of a file holding the private key (mode 600, deleted right after use). */
  readonly privateKeyFile: string;
  /** UDP port to listen on; 0 lets WireGuard pick a free one (enough for a side that only dials). */
  readonly listenPort: number;
}

/** `wg set <ifname> private-key <file> listen-port <port>`, as arguments after `wg`. */
export function forgeInterfaceArgs(settings: WireguardInterfaceSettings): string[] {
  return ["set", settings.ifname, "private-key", settings.privateKeyFile, "listen-port", String(settings.listenPort)];
}

/** One peer of a WireGuard interface. */
export interface WireguardPeerSpec {
  /** Network namespace of the interface. @default this process's own */
  readonly netns?: string;
  /** Interface name. */
  readonly ifname: string;
  /** The peer's public key (base64, 44 characters). */
  readonly peerPublicKey: string;
  /**
   * Where to reach the peer, `host:port`. Leave it out on the side that serves: WireGuard learns
   * the endpoint from the first authenticated packet.
   * @default none (the peer is expected to connect)
   * @example "172.29.4.10:51820"
   */
  readonly endpoint?: string;
  /**
   * Networks routed to the peer and accepted from it: its pod CIDR and its tunnel address.
   * The list replaces the peer's previous one.
   * @example ["10.142.0.0/16", "10.254.0.2/32"]
   */
  readonly allowedIps: readonly string[];
  /**
   * Persistent keepalive in seconds: set it on the side that connects, so that NAT and
   * firewall state stays open and the server learns the endpoint without waiting for traffic.
   * @default off
   */
  readonly keepaliveSeconds?: number;
}

/** Checks a peer spec; throws {@link GatewaySpecError} with every problem. */
export function checkPeerSpec(spec: WireguardPeerSpec): void {
  const problems = [...ifnameProblems(spec.ifname), ...cidrProblems("allowedIps", spec.allowedIps)];
  if (!isWireguardKey(spec.peerPublicKey))
    problems.push("peerPublicKey: expected 44 characters of base64 encoding 32 bytes");
  if (spec.endpoint !== undefined) {
    const match = /^(.+):(\d+)$/.exec(spec.endpoint);
    if (!match) problems.push(`endpoint "${spec.endpoint}": expected host:port, e.g. 172.29.4.10:51820`);
    else problems.push(...portProblems(`endpoint "${spec.endpoint}" port`, Number(match[2])));
  }
  const keepalive = spec.keepaliveSeconds;
  if (keepalive !== undefined && !(Number.isInteger(keepalive) && keepalive >= 0 && keepalive <= 65535)) {
    problems.push(`keepaliveSeconds ${keepalive}: expected whole seconds from 0 (off) to 65535`);
  }
  if (problems.length > 0)
    throw new GatewaySpecError(`peer of ${spec.ifname} in ${describeNamespace(spec.netns)}`, problems);
}

/**
 * `wg set <ifname> peer <key> [endpoint <e>] allowed-ips <a,b> persistent-keepalive <n|off>`.
 * The keepalive is always given, so that applying a spec again makes the peer match it.
 */
export function forgePeerArgs(spec: WireguardPeerSpec): string[] {
  return [
    "set",
    spec.ifname,
    "peer",
    spec.peerPublicKey,
    ...(spec.endpoint === undefined ? [] : ["endpoint", spec.endpoint]),
    "allowed-ips",
    spec.allowedIps.join(","),
    "persistent-keepalive",
    spec.keepaliveSeconds ? String(spec.keepaliveSeconds) : "off",
  ];
}

/** `ip route replace <cidr> dev <ifname> [src <source>]` for each CIDR, as arguments after `ip`. */
export function forgeRouteArgs(ifname: string, cidrs: readonly string[], source?: string): string[][] {
  return cidrs.map((cidr) => [
    "route",
    "replace",
    cidr,
    "dev",
    ifname,
    ...(source === undefined ? [] : ["src", source]),
  ]);
}

/** Checks the routes asked of {@link forgeRouteArgs}; throws {@link GatewaySpecError} with every problem. */
export function checkRoutes(ifname: string, cidrs: readonly string[], source?: string): void {
  const problems = [...ifnameProblems(ifname), ...cidrProblems("cidrs", cidrs)];
  if (source !== undefined) {
    try {
      parseIpv4(source);
    } catch (error) {
      problems.push(`source: ${(error as Error).message}`);
    }
  }
  if (problems.length > 0) throw new GatewaySpecError(`routes into ${ifname}`, problems);
}

/** Checks what an interface is made from; collects every problem. */
export function interfaceSpecProblems(spec: {
  readonly ifname: string;
  readonly privateKey: string;
  readonly listenPort: number;
  readonly address: string;
  readonly mtu: number;
}): string[] {
  const problems = [
    ...ifnameProblems(spec.ifname),
    ...(spec.listenPort === 0 ? [] : portProblems("listenPort", spec.listenPort)),
    ...interfaceAddressProblems("address", spec.address),
  ];
  if (!isWireguardKey(spec.privateKey)) problems.push("privateKey: expected 44 characters of base64 encoding 32 bytes");
  if (!(Number.isInteger(spec.mtu) && spec.mtu >= 576 && spec.mtu <= 65535))
    problems.push(`mtu ${spec.mtu}: expected 576 to 65535`);
  return problems;
}
