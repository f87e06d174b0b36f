/** The `Tunnel` resource: the WireGuard network fabric between the two clusters of a peering. */
import * as pulumi from "@pulumi/pulumi";
import { TunnelResource, type TunnelArgs } from "./generated/tunnel.js";
import { claimServedPort } from "./served-ports.js";

/**
 * A WireGuard tunnel between the consumer's and the provider's gateways. Each gateway makes its own
 * key pair and keeps the private key in its cluster; only public keys and pod CIDRs are exchanged,
 * through the API servers. Overlapping pod CIDRs are remapped (each side sees the other under a
 * free range and NATs). Create returns once the handshake is done and a probe crossed the tunnel.
 */
export class Tunnel extends TunnelResource {
  constructor(name: string, args: TunnelArgs, opts?: pulumi.CustomResourceOptions) {
    super(name, args, opts);
    const servedBy = pulumi
      .output(args.server)
      .apply((server) => (server === "consumer" ? args.peering.consumerClusterId : args.peering.providerClusterId));
    claimServedPort({ holder: `Tunnel "${name}"`, serverClusterId: servedBy, port: args.port, resource: this });
  }
}
