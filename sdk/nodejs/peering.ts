/** The `Peering` resource: consumer -> provider, out-of-band or in-band. */
import * as pulumi from "@pulumi/pulumi";
import type { Cluster } from "./cluster.js";
import type { PeeringAccess } from "./generated/types.js";
import { PeeringResource, type PeeringArgs } from "./generated/peering.js";
import { claimServedPort } from "./served-ports.js";

/**
 * A peering: the consumer authenticates to the provider's auth service with a token, negotiates
 * resources through the provider's API server with the identity it received, and gets a virtual
 * node standing for the offer, kept Ready by its agent's heartbeat. Out-of-band the steps run from
 * here; in-band the tunnel comes first and the consumer's agent runs them through it.
 */
export class Peering extends PeeringResource {
  /**
   * The consumer cluster it was given: a plain property of this program, not an output. The
   * peering's `Tunnel` reaches the consumer with this cluster's kubeconfig (a secret).
   */
  readonly consumer: Cluster;
  /**
   * How a `Tunnel` or a `NamespaceOffloading` of a stack written against the provider plugin uses
   * this peering (a secret, for the consumer's kubeconfig). Made from this resource's outputs in the
   * program; this package's resources take the `Peering` itself.
   */
  readonly access: pulumi.Output<PeeringAccess>;

  constructor(name: string, args: PeeringArgs, opts?: pulumi.CustomResourceOptions) {
    super(name, args, opts);
    this.consumer = args.consumer;
    this.access = pulumi.output({
      consumer: args.consumer.access,
      providerClusterId: this.providerClusterId,
      providerClusterName: this.providerClusterName,
      tenantNamespace: this.tenantNamespace,
      virtualNodeName: this.virtualNodeName,
    });
    if (args.approach === "in-band" && args.tunnel && args.providerCluster) {
      const { tunnel, consumer, providerCluster } = args;
      const servedBy = pulumi
        .output(tunnel)
        .apply((t) => (t.server === "consumer" ? consumer.clusterId : providerCluster.clusterId));
      claimServedPort({
        holder: `Peering "${name}" (in-band)`,
        serverClusterId: servedBy,
        port: pulumi.output(tunnel).apply((t) => t.port),
        resource: this,
      });
    }
  }
}
