/**
 * Catches at preview what a gateway would refuse at `up`: two tunnels of one program that the same
 * cluster serves on the same UDP port (one wireguard-go interface, so one port, per served tunnel).
 * Decided as soon as both clusters' ids and ports are known, which is every preview after the
 * clusters exist; the gateway still checks tunnels that other programs made.
 */
import * as pulumi from "@pulumi/pulumi";
import { TUNNEL_DEFAULTS } from "../../core/network-fabric/tunnel-plan.js";

/** Who serves a port: the resource's kind and name, as the error names it. */
type Holder = string;

/** Served ports claimed so far by this program's tunnels, by `<cluster id>:<port>`. */
const claimed = new Map<string, Holder>();

/** The tunnel of a resource, as far as the serving side and its port go. */
export interface ServedTunnel {
  /** `Tunnel "a-b"` or `Peering "a-b" (in-band)`. */
  readonly holder: Holder;
  /** Cluster id of the side that serves: the consumer's or the provider's, as `server` says. */
  readonly serverClusterId: pulumi.Input<string>;
  /** The tunnel's port. @default 51820 */
  readonly port?: pulumi.Input<number | undefined>;
  /** The resource whose preview fails on a clash. */
  readonly resource: pulumi.Resource;
}

/**
 * Records the port `tunnel` is served on; a second tunnel served by the same cluster on the same
 * port is an error of the second resource, naming both and the way out.
 */
export function claimServedPort(tunnel: ServedTunnel): void {
  pulumi.all([tunnel.serverClusterId, tunnel.port]).apply(([clusterId, port]) => {
    const key = `${clusterId}:${port ?? TUNNEL_DEFAULTS.port}`;
    const holder = claimed.get(key);
    if (holder === undefined || holder === tunnel.holder) {
      claimed.set(key, tunnel.holder);
      return;
    }
    const message =
      `${tunnel.holder}: the gateway of cluster ${clusterId} would serve UDP port ` +
      `${port ?? TUNNEL_DEFAULTS.port} for ${holder} too; give each tunnel that cluster serves a port of its own (input port)`;
    pulumi.log.error(message, tunnel.resource);
    throw new Error(message);
  });
}
