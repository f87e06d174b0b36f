/** The `NamespaceOffloading` resource: a consumer namespace (or the namespaces a label selector picks) whose pods may run on providers. */
import type * as pulumi from "@pulumi/pulumi";
import { NamespaceOffloadingResource, type NamespaceOffloadingArgs } from "./generated/namespace-offloading.js";

/**
 * Offloads a consumer namespace: pods of it that the scheduler binds to a virtual node of one of
 * `peerings` run in that peering's provider, in a namespace made for this consumer there, and the
 * consumer sees them as its own (status, address as it reaches them, logs). Where the pods may
 * go is `podOffloading`, added to each pod when it is created: workloads need no edit. Create returns once every provider made its namespace; delete removes
 * the namespace's pods from the virtual nodes, then the remote namespaces. Delete and update
 * first take one short look at each provider: one out of reach fails them within seconds, naming
 * it, unless `force` is set (delete only).
 */
export class NamespaceOffloading extends NamespaceOffloadingResource {
  constructor(name: string, args: NamespaceOffloadingArgs, opts?: pulumi.CustomResourceOptions) {
    // The peerings' virtual node names are inputs: the engine makes them first and removes them last.
    super(name, args, opts);
  }
}
