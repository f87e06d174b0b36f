/** The `PeeringToken` resource: what a provider hands to its consumers. */
import type * as pulumi from "@pulumi/pulumi";
import { PeeringTokenResource, type PeeringTokenArgs } from "./generated/peering-token.js";

/**
 * A peering token on the provider cluster: at least 256 random bits, of which the cluster keeps
 * only a hash. Its outputs are everything a consumer needs; `token` is a Pulumi secret. Deleting
 * it revokes the token.
 */
export class PeeringToken extends PeeringTokenResource {
  constructor(name: string, args: PeeringTokenArgs, opts?: pulumi.CustomResourceOptions) {
    super(name, args, opts);
  }
}
