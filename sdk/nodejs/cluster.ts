/** The `Cluster` resource: one Kubernetes cluster that takes part in peerings. */
import * as pulumi from "@pulumi/pulumi";
import { ClusterResource, type ClusterArgs } from "./generated/cluster.js";
import type { ClusterAccess } from "./generated/types.js";

/**
 * A cluster that takes part in peerings. Creating it installs what peering needs in the cluster
 * (the project's namespace and CRDs, a stable cluster id, the auth service's TLS material) and
 * verifies that the project's agent serves it. Deleting it removes all of that, and refuses while
 * peerings still use the cluster unless `force` is set.
 */
export class Cluster extends ClusterResource {
  /**
   * How other resources reach this cluster (a secret, for its kubeconfig): what a stack written
   * against the provider plugin (YAML, Python, Go…) passes as a `PeeringToken`'s `cluster`, a
   * `Peering`'s `consumer` or `providerCluster`, a `NamespaceOffloading`'s `consumer`. Made from this
   * resource's outputs in the program; this package's resources take the `Cluster` itself.
   */
  readonly access: pulumi.Output<ClusterAccess>;

  constructor(name: string, args: ClusterArgs, opts?: pulumi.CustomResourceOptions) {
    super(name, args, opts);
    this.access = pulumi.output({
      clusterId: this.clusterId,
      kubeconfig: this.kubeconfig,
      apiServerUrl: this.apiServerUrl,
      authUrl: this.authUrl,
      authCaCert: this.authCaCert,
    });
  }
}
