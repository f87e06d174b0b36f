/** The `PeeringToken` resource: what a provider hands to its consumers. */
import * as pulumi from "@pulumi/pulumi";
import type { Cluster } from "./cluster.js";
import { lazyProvider } from "./lazy-provider.js";
import { ownUrn } from "./own-urn.js";

/** Inputs of a {@link PeeringToken}. */
export interface PeeringTokenArgs {
  /** The provider cluster whose auth service accepts the token. */
  readonly cluster: Cluster;
  /** Seconds after which the token is refused for new peerings. @default never */
  readonly expiresInSeconds?: pulumi.Input<number>;
  /**
   * Any text; changing it replaces the token (rotation). The old token stops working for new
   * peerings; peerings made with it keep working.
   * @example "2026-11"
   */
  readonly rotation?: pulumi.Input<string>;
}

/**
 * A peering token on the provider cluster: at least 256 random bits, of which the cluster keeps
 * only a hash. Its outputs are everything a consumer needs; `token` is a Pulumi secret. Deleting
 * it revokes the token.
 */
export class PeeringToken extends pulumi.dynamic.Resource {
  /** The token (secret). */
  declare readonly token: pulumi.Output<string>;
  /** Public id of the token. */
  declare readonly tokenId: pulumi.Output<string>;
  /** The provider's cluster id. */
  declare readonly clusterId: pulumi.Output<string>;
  /** The provider's auth service URL. */
  declare readonly authUrl: pulumi.Output<string>;
  /** PEM of the CA of the provider's auth service. */
  declare readonly authCaCert: pulumi.Output<string>;
  /** When the token expires (RFC 3339), if it does. */
  declare readonly expiresAt: pulumi.Output<string | undefined>;

  constructor(name: string, args: PeeringTokenArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      lazyProvider("peering-token"),
      name,
      {
        kubeconfig: args.cluster.kubeconfig,
        clusterId: args.cluster.clusterId,
        authUrl: args.cluster.authUrl,
        authCaCert: args.cluster.authCaCert,
        expiresInSeconds: args.expiresInSeconds,
        rotation: args.rotation,
        token: undefined,
        tokenId: undefined,
        expiresAt: undefined,
        ...ownUrn("PeeringToken", name, opts),
      },
      { ...opts, additionalSecretOutputs: ["token", "kubeconfig"] },
      "liqo",
      "PeeringToken",
    );
  }
}
