/**
 * The tunnel's types, shared by `Tunnel` and an in-band `Peering` (which builds its tunnel
 * itself): one module both import, so neither imports the other for them. What a gateway reports
 * is declared once, where the provider produces it, and exported here under its public name.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { PeeringSide } from "../core/network-fabric/tunnel-end.js";

export type { PeeringSide, TunnelEnd } from "../core/network-fabric/tunnel-end.js";

/** How a tunnel is set up: a `Tunnel`'s inputs, and an in-band `Peering`'s `tunnel`. */
export interface TunnelSettingsArgs {
  /** Which side's gateway listens: the reachable one when the other is behind NAT. @default "provider" */
  readonly server?: pulumi.Input<PeeringSide>;
  /** Address (IP or DNS name) at which the serving side's gateway is reached. @example "203.0.113.7" */
  readonly serverAddress: pulumi.Input<string>;
  /** UDP port the gateways listen on. Changes in place. @default 51820 */
  readonly port?: pulumi.Input<number>;
  /** MTU of both tunnel interfaces (one value, so the ends cannot disagree). Changes in place. @default 1420 */
  readonly mtu?: pulumi.Input<number>;
  /** Seconds between the client's keepalives (keeps a NAT mapping open); 0 sends none. @default 25 */
  readonly keepaliveSeconds?: pulumi.Input<number>;
  /** Sides behind NAT. Both is refused (nothing could reach either gateway); the server must not be one. @default [] */
  readonly behindNat?: pulumi.Input<pulumi.Input<PeeringSide>[]>;
}
