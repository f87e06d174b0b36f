/** The `Tunnel` resource: the WireGuard network fabric between the two clusters of a peering. */
import * as pulumi from "@pulumi/pulumi";
import { lazyProvider } from "./lazy-provider.js";
import { ownUrn } from "./own-urn.js";
import { claimServedPort } from "./served-ports.js";
import type { Peering } from "./peering.js";
import type { TunnelEnd, TunnelSettingsArgs } from "./tunnel-types.js";

/** Inputs of a {@link Tunnel}. */
export interface TunnelArgs extends TunnelSettingsArgs {
  /**
   * The out-of-band peering the tunnel serves: the provider's side is reached with the identity it
   * issued. (An in-band peering builds its tunnel itself, first.)
   */
  readonly peering: Peering;
  /** Deadline of each operation (create, update, delete), in seconds. @default 300 */
  readonly timeoutSeconds?: pulumi.Input<number>;
  /**
   * On delete with the provider unreachable (found in one connection attempt of a few seconds),
   * remove the consumer's side anyway (its TunnelEndpoint, which its gateway takes down) and list
   * what stays on the provider. Without it, such a delete fails at once and changes nothing.
   * Changing it updates in place without contacting either cluster, so it can be set after the
   * provider is gone: `pulumi up`, then `pulumi destroy`. @default false
   */
  readonly force?: pulumi.Input<boolean>;
}

/**
 * A WireGuard tunnel between the consumer's and the provider's gateways. Each gateway makes its own
 * key pair and keeps the private key in its cluster; only public keys and pod CIDRs are exchanged,
 * through the API servers. Overlapping pod CIDRs are remapped (each side sees the other under a
 * free range and NATs). Create returns once the handshake is done and a probe crossed the tunnel.
 */
export class Tunnel extends pulumi.dynamic.Resource {
  /** The consumer's gateway. */
  declare readonly consumer: pulumi.Output<TunnelEnd>;
  /** The provider's gateway. */
  declare readonly provider: pulumi.Output<TunnelEnd>;
  /** `Connected`, or what the last refresh found wrong. */
  declare readonly status: pulumi.Output<string>;

  constructor(name: string, args: TunnelArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      lazyProvider("tunnel"),
      name,
      {
        consumerKubeconfig: args.peering.consumer.kubeconfig,
        consumerClusterId: args.peering.consumerClusterId,
        providerClusterId: args.peering.providerClusterId,
        providerClusterName: args.peering.providerClusterName,
        tenantNamespace: args.peering.tenantNamespace,
        server: args.server,
        serverAddress: args.serverAddress,
        port: args.port,
        mtu: args.mtu,
        keepaliveSeconds: args.keepaliveSeconds,
        behindNat: args.behindNat,
        timeoutSeconds: args.timeoutSeconds,
        force: args.force,
        consumer: undefined,
        provider: undefined,
        status: undefined,
        ...ownUrn("Tunnel", name, opts),
      },
      { ...opts, additionalSecretOutputs: ["consumerKubeconfig"] },
      "liqo",
      "Tunnel",
    );
    const servedBy = pulumi
      .output(args.server)
      .apply((server) => (server === "consumer" ? args.peering.consumerClusterId : args.peering.providerClusterId));
    claimServedPort({ holder: `Tunnel "${name}"`, serverClusterId: servedBy, port: args.port, resource: this });
  }
}
