/**
 * The decisions of a tunnel, with no I/O: which side listens, the tunnel's own addresses, the
 * `TunnelEndpoint` spec each side's gateway gets, and what is wrong with the settings. The steps
 * in tunnel.ts feed them what they read from the clusters.
 */
import { createHash } from "node:crypto";
import {
  POD_API_PORT,
  type InBandPorts,
  type TunnelEndpoint,
  type TunnelEndpointSpec,
  type TunnelRemote,
  type TunnelRole,
} from "../api/index.js";
import { Cidr } from "../net/cidr.js";
import { joinHostPort, readAnnouncedEndpoint } from "../net/endpoint.js";
import type { PeeringSide } from "./tunnel-end.js";

export type { PeeringSide } from "./tunnel-end.js";

/** What the user chooses about a tunnel. */
export interface TunnelSettings {
  /** Which side's gateway listens: the reachable one. */
  readonly server: PeeringSide;
  /**
   * Address (IP or DNS name) at which the other side reaches the server's gateway, on `port`.
   * Unset: where the server's gateway announces it is reached (its cluster's gateway endpoint).
   */
  readonly serverAddress?: string;
  /** UDP port the gateways listen on. */
  readonly port: number;
  /** MTU of both tunnel interfaces. */
  readonly mtu: number;
  /** Seconds between keepalives; 0 sends none. */
  readonly keepaliveSeconds: number;
  /** Sides that sit behind NAT (reachable by nobody from outside). */
  readonly behindNat: readonly PeeringSide[];
}

/** Defaults of the settings: port 51820 (WireGuard's own), MTU 1420 (1500 minus WireGuard's 80 bytes), keepalive 25 s. */
export const TUNNEL_DEFAULTS = { port: 51820, mtu: 1420, keepaliveSeconds: 25 } as const;

/** Settings as a user gives them: each may be left to its default. */
export type TunnelSettingsInput = Partial<TunnelSettings>;

/** The settings with their defaults filled in: the provider serves, on 51820, MTU 1420, keepalive 25 s, nobody behind NAT. */
export function withTunnelDefaults(input: TunnelSettingsInput): TunnelSettings {
  return {
    server: input.server ?? "provider",
    ...(input.serverAddress !== undefined ? { serverAddress: input.serverAddress } : {}),
    port: input.port ?? TUNNEL_DEFAULTS.port,
    mtu: input.mtu ?? TUNNEL_DEFAULTS.mtu,
    keepaliveSeconds: input.keepaliveSeconds ?? TUNNEL_DEFAULTS.keepaliveSeconds,
    behindNat: input.behindNat ?? [],
  };
}

/** The other side. */
export const otherSide = (side: PeeringSide): PeeringSide => (side === "consumer" ? "provider" : "consumer");

/**
 * What is wrong with the settings, each problem naming its input. Both sides behind NAT cannot
 * work (neither gateway can be reached, and this project runs no relay); a server behind NAT
 * cannot either, so the reachable side must serve.
 */
export function tunnelSettingsProblems(
  settings: Partial<TunnelSettings>,
): { readonly input: string; readonly reason: string }[] {
  const problems: { input: string; reason: string }[] = [];
  const behindNat = settings.behindNat ?? [];
  if (behindNat.includes("consumer") && behindNat.includes("provider")) {
    problems.push({
      input: "behindNat",
      reason:
        "both clusters are behind NAT: neither gateway can be reached by the other, so no tunnel can be set up; one side must be reachable and serve",
    });
  } else if (settings.server !== undefined && behindNat.includes(settings.server)) {
    problems.push({
      input: "server",
      reason:
        `the ${settings.server} is behind NAT, so its gateway cannot be reached: let the ${otherSide(settings.server)} ` +
        `serve (server: "${otherSide(settings.server)}")`,
    });
  }
  if (settings.server !== undefined && settings.server !== "consumer" && settings.server !== "provider") {
    problems.push({
      input: "server",
      reason: `${JSON.stringify(settings.server)} is neither "consumer" nor "provider"`,
    });
  }
  if (settings.port !== undefined && (!Number.isInteger(settings.port) || settings.port < 1 || settings.port > 65535)) {
    problems.push({ input: "port", reason: `${settings.port} is not a UDP port (1-65535)` });
  }
  if (settings.mtu !== undefined && (!Number.isInteger(settings.mtu) || settings.mtu < 1280 || settings.mtu > 9000)) {
    problems.push({
      input: "mtu",
      reason: `${settings.mtu} is outside 1280-9000 (1280 is the least IPv6 allows inside the tunnel)`,
    });
  }
  if (
    settings.keepaliveSeconds !== undefined &&
    (!Number.isInteger(settings.keepaliveSeconds) || settings.keepaliveSeconds < 0 || settings.keepaliveSeconds > 65535)
  ) {
    problems.push({
      input: "keepaliveSeconds",
      reason: `${settings.keepaliveSeconds} is not a number of seconds from 0 to 65535`,
    });
  }
  return problems;
}

/** Name of the `TunnelEndpoint` toward the cluster `remoteClusterId`, on either side. */
export function tunnelEndpointName(remoteClusterId: string): string {
  return `to-${remoteClusterId}`;
}

/**
 * The /30 holding the two ends' tunnel addresses, derived from the peering's two cluster ids so
 * both sides find the same one without telling each other: a block of 169.254.1.0-169.254.254.255
 * (link-local, never a pod or service range), picked by hash. The direction counts: b consuming
 * from a and a consuming from b are two tunnels, on two blocks. Two peers of one gateway share a
 * block with odds of about 1 in 16,000; their interfaces differ, so it costs only the probe.
 */
export function tunnelLinkCidr(consumerClusterId: string, providerClusterId: string): Cidr {
  const digest = createHash("sha256").update(`${consumerClusterId}\0${providerClusterId}`).digest();
  const block = digest.readUInt32BE(0) % (254 * 64);
  const third = 1 + Math.floor(block / 64);
  const fourth = (block % 64) * 4;
  return Cidr.parse(`169.254.${third}.${fourth}/30`);
}

/** The tunnel address of `role` in `linkCidr`, with its prefix: the server has the first host, the client the second. */
export function tunnelAddress(linkCidr: Cidr, role: TunnelRole): string {
  return `${linkCidr.nth(role === "server" ? 1 : 2)}/${linkCidr.prefixLength}`;
}

/** The role of `side`'s gateway under `settings`. */
export function roleOf(side: PeeringSide, settings: Pick<TunnelSettings, "server">): TunnelRole {
  return settings.server === side ? "server" : "client";
}

/** One side as the plan needs it. */
export interface TunnelParty {
  readonly clusterId: string;
  readonly clusterName: string;
}

/**
 * The endpoint the client dials: the server address given, on the tunnel's port; else the one the
 * server's gateway announced (`announced`, from the other cluster, read by readAnnouncedEndpoint).
 * Says why there is none when neither is there.
 */
export function dialedEndpoint(
  settings: Pick<TunnelSettings, "serverAddress" | "port">,
  announced: unknown,
): { endpoint: string } | { missing: string } {
  if (settings.serverAddress !== undefined) return { endpoint: joinHostPort(settings.serverAddress, settings.port) };
  if (announced === undefined || announced === "")
    return { missing: "its gateway announces no endpoint where it is reached" };
  const read = readAnnouncedEndpoint(announced);
  return "endpoint" in read
    ? { endpoint: joinHostPort(read.endpoint.host, read.endpoint.port) }
    : { missing: `the endpoint its gateway announces is refused: ${read.refused}` };
}

/**
 * The spec of `side`'s `TunnelEndpoint`: the settings, and what is known of the other side so
 * far (`remote`, which the steps fill in as the other gateway answers). The endpoint to dial is
 * given only to the client, and only the server's: the server address given, else the endpoint
 * the server announced (in `remote`, once it passed {@link dialedEndpoint}). `inBandPorts`: what
 * this side's gateway serves the peer's agent on its tunnel address (the provider's side of an
 * in-band peering).
 */
export function forgeTunnelEndpointSpec(
  side: PeeringSide,
  parties: Readonly<Record<PeeringSide, TunnelParty>>,
  settings: TunnelSettings,
  remote: TunnelRemote,
  inBandPorts?: InBandPorts,
): TunnelEndpointSpec {
  const peer = parties[otherSide(side)];
  const role = roleOf(side, settings);
  const dial = dialedEndpoint(settings, remote.endpoint);
  const { endpoint: _announced, ...announced } = remote;
  return {
    remoteClusterId: peer.clusterId,
    remoteClusterName: peer.clusterName,
    role,
    listenPort: settings.port,
    mtu: settings.mtu,
    keepaliveSeconds: role === "client" ? settings.keepaliveSeconds : 0,
    linkCidr: tunnelLinkCidr(parties.consumer.clusterId, parties.provider.clusterId).toString(),
    remote: {
      ...Object.fromEntries(Object.entries(announced).filter(([, v]) => v !== undefined)),
      ...(role === "client" && "endpoint" in dial ? { endpoint: dial.endpoint } : {}),
    },
    ...(inBandPorts ? { inBandPorts } : {}),
    // The consumer's gateway serves its API server to the pods it offloads (their kubernetes.default).
    ...(side === "consumer" ? { podApiPort: POD_API_PORT } : {}),
  };
}

/**
 * The settings both sides' `TunnelEndpoint` specs were forged with (the other way from
 * {@link forgeTunnelEndpointSpec}), for an import; `behindNat` leaves no trace in them and is left
 * out. A client dialing just what the server announces (`announced`, each side's status) had no
 * server address given. Undefined when the specs are not one tunnel's: no single server, or a
 * client that dials no `host:port`.
 */
export function settingsOfEndpoints(
  specs: Readonly<Record<PeeringSide, TunnelEndpointSpec>>,
  announced: Readonly<Partial<Record<PeeringSide, string>>> = {},
): Omit<TunnelSettings, "behindNat"> | undefined {
  const servers = (["consumer", "provider"] as const).filter((side) => specs[side].role === "server");
  if (servers.length !== 1) return undefined;
  const server = servers[0]!;
  const client = specs[otherSide(server)];
  const dialed = /^(?:\[(?<v6>[^\]]+)\]|(?<host>[^:]+)):(?<port>\d+)$/.exec(client.remote.endpoint ?? "")?.groups;
  if (!dialed) return undefined;
  const asAnnounced = dialedEndpoint({ port: specs[server].listenPort }, announced[server]);
  const defaulted = "endpoint" in asAnnounced && asAnnounced.endpoint === client.remote.endpoint;
  return {
    server,
    ...(defaulted ? {} : { serverAddress: dialed["v6"] ?? dialed["host"]! }),
    port: specs[server].listenPort,
    mtu: specs[server].mtu,
    keepaliveSeconds: client.keepaliveSeconds,
  };
}

/** What a gateway's status says about the spec it was given, in one word and a reason. */
export interface EndpointReadiness {
  /** The gateway answered this very spec and reports the tunnel up. */
  readonly connected: boolean;
  /** The gateway answered this very spec (with keys and CIDRs), whatever the tunnel's state. */
  readonly answered: boolean;
  /** What it reports, for a timeout's message. */
  readonly state: string;
  /**
   * Set when the gateway refused this very spec (phase `Refused`): its message, naming the field.
   * Terminal: the gateway will not retry the same spec, so a wait ends at once with it.
   */
  readonly refused?: string;
}

/** Reads a `TunnelEndpoint`'s status against its spec generation. */
export function endpointReadiness(endpoint: TunnelEndpoint | undefined): EndpointReadiness {
  if (!endpoint) return { connected: false, answered: false, state: "absent" };
  const status = endpoint.status ?? {};
  const current = status.observedGeneration !== undefined && status.observedGeneration === endpoint.metadata.generation;
  const answered = current && !!status.publicKey && !!status.podCidr;
  const state = !current
    ? `gateway has not answered generation ${endpoint.metadata.generation ?? "?"} yet (last answered ${status.observedGeneration ?? "none"})`
    : `${status.phase ?? "no phase"}${status.message ? `: ${status.message}` : ""}`;
  if (current && status.phase === "Refused")
    return { connected: false, answered: false, state, refused: status.message ?? "refused (no reason given)" };
  return { connected: answered && status.phase === "Connected", answered, state };
}
