/** The `NamespaceOffloading` resource: a consumer namespace (or the namespaces a label selector picks) whose pods may run on providers. */
import * as pulumi from "@pulumi/pulumi";
import type { Cluster } from "./cluster.js";
import { lazyProvider } from "./lazy-provider.js";
import { ownUrn } from "./own-urn.js";
import type { Peering } from "./peering.js";

/** Inputs of a {@link NamespaceOffloading}. */
export interface NamespaceOffloadingArgs {
  /** The consumer cluster, the one of every peering in `peerings`. */
  readonly consumer: Cluster;
  /**
   * The consumer namespace to offload. It must exist; the offloading does not own it. Changing it
   * replaces the offloading. Give exactly one of `namespace` and `namespaceSelector`.
   */
  readonly namespace?: pulumi.Input<string>;
  /**
   * Offloads every namespace whose labels match (a Kubernetes label selector: `matchLabels`
   * and/or `matchExpressions`), including namespaces made or labelled later: the consumer's agent
   * offloads them as they appear, and withdraws a namespace that stops matching, with no
   * `pulumi up`. `kube-*` namespaces and the project's own are never selected. A change updates
   * in place.
   */
  readonly namespaceSelector?: pulumi.Input<NamespaceSelector>;
  /**
   * The peerings (of `consumer`) whose virtual nodes the namespace's pods may be scheduled on;
   * the namespace is made on each of their providers. A change updates in place: a peering left
   * out has the namespace's pods and remote namespace removed.
   */
  readonly peerings: Peering[];
  /**
   * How the namespace is named on the providers: `suffixed` (default) adds `-<consumer cluster
   * id>`, so that two consumers' namespaces of one name never collide; `same` keeps the name, and
   * a provider refuses it when the name is already taken there. Changing it replaces the
   * offloading. @default "suffixed"
   */
  readonly naming?: pulumi.Input<"suffixed" | "same">;
  /** Deadline of each operation (create, update, delete), in seconds. @default 300 */
  readonly timeoutSeconds?: pulumi.Input<number>;
  /**
   * On delete with a provider unreachable (found in one connection attempt of a few seconds),
   * remove the consumer's side anyway: the NamespaceOffloading, and the namespace's pods on that
   * provider's virtual node (removed at once, as no kubelet will), and list what stays on the
   * provider (the remote namespace, the ConfigMaps and Secrets reflected into it, the pods).
   * Without it, such a delete (or an update) fails at once and changes nothing. Changing it
   * updates in place without contacting any cluster, so it can be set after the provider is
   * gone: `pulumi up`, then `pulumi destroy`. @default false
   */
  readonly force?: pulumi.Input<boolean>;
  /**
   * Where the namespace's pods may run, applied by the consumer's API server to every pod created
   * in the namespace, so workloads need no edit: `local-and-remote` (they tolerate the virtual
   * nodes' taint; the scheduler picks real or virtual nodes), `remote` (virtual nodes only) or
   * `local` (the consumer's own nodes only; the namespace is still made on the providers). A change
   * updates in place and applies to pods created from then on. @default "local-and-remote"
   */
  readonly podOffloading?: pulumi.Input<"local-and-remote" | "remote" | "local">;
  /**
   * The token an offloaded pod that mounts its service account's token gets: `consumer`, a token of
   * that account in the consumer's cluster (asked for by the consumer's agent, bound to the pod,
   * kept fresh), with `kubernetes.default` leading to the consumer's API server through the tunnel,
   * so in-cluster clients work on the consumer as they would at home; or `none`, no token at all.
   * Never one of the provider's. A provider's administrator can read such a token while the pod
   * lives and act with its rights on the consumer: choose `none` for a provider you do not trust
   * that far. A change applies to pods offloaded from then on. @default "consumer"
   */
  readonly serviceAccountTokens?: pulumi.Input<"consumer" | "none">;
}

/** Which namespaces a {@link NamespaceOffloading} selects: all of `matchLabels` and of `matchExpressions` must hold. */
export interface NamespaceSelector {
  /** Labels a namespace must carry, with these values. */
  readonly matchLabels?: Record<string, string>;
  /** Requirements on a namespace's labels: `In` and `NotIn` a list of `values`, `Exists`, `DoesNotExist`. */
  readonly matchExpressions?: {
    /** The label's key. */
    readonly key: string;
    /** `In`, `NotIn`, `Exists` or `DoesNotExist`. */
    readonly operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
    /** The values of `In` and `NotIn`. */
    readonly values?: string[];
  }[];
}

/** How far one namespace a selector picked got. */
export interface SelectedNamespaceStatus {
  /** The consumer namespace. */
  readonly namespace: string;
  /** Its name on the providers. */
  readonly remoteNamespace: string;
  /**
   * `Ready`, `Pending`, `Withdrawing` (it no longer matches), `Refused` (a provider said no) or
   * `Conflict` (offloaded by another resource already, and left as it is).
   */
  readonly phase: string;
  /** Why, when not Ready. */
  readonly message?: string;
}

/** What one provider answered for the namespace. */
export interface RemoteNamespaceStatus {
  /** The virtual node of the peering. */
  readonly virtualNode: string;
  /** That peering's provider. */
  readonly providerClusterId?: string;
  /** The namespace on that provider. */
  readonly remoteNamespace: string;
  /**
   * `Ready`, `Pending`, `Refused`, `Missing` (the remote namespace is gone on the provider),
   * `Unreachable` (the consumer's agent cannot reach the provider and backs off) or `Error`.
   */
  readonly phase: string;
  /** Why, when not Ready. */
  readonly message?: string;
}

/**
 * Offloads a consumer namespace: pods of it that the scheduler binds to a virtual node of one of
 * `peerings` run in that peering's provider, in a namespace made for this consumer there, and the
 * consumer sees them as its own (status, address as it reaches them, logs). Where the pods may
 * go is `podOffloading`, added to each pod when it is created: workloads need no edit. Create returns once every provider made its namespace; delete removes
 * the namespace's pods from the virtual nodes, then the remote namespaces. Delete and update
 * first take one short look at each provider: one out of reach fails them within seconds, naming
 * it, unless `force` is set (delete only).
 */
export class NamespaceOffloading extends pulumi.dynamic.Resource {
  /** The namespace's name on every provider; empty with `namespaceSelector`. */
  declare readonly remoteNamespace: pulumi.Output<string>;
  /** One entry per peering: what its provider answered (with `namespace`). */
  declare readonly remotes: pulumi.Output<RemoteNamespaceStatus[]>;
  /** With `namespaceSelector`: one entry per namespace it offloads, or withdraws, as of the last create, update or refresh. */
  declare readonly selectedNamespaces: pulumi.Output<SelectedNamespaceStatus[] | undefined>;
  /** `Ready`, or what the last refresh found wrong (a remote namespace gone, a provider out of reach). */
  declare readonly status: pulumi.Output<string>;

  constructor(name: string, args: NamespaceOffloadingArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      lazyProvider("namespace-offloading"),
      name,
      {
        consumerKubeconfig: args.consumer.kubeconfig,
        consumerClusterId: args.consumer.clusterId,
        namespace: args.namespace,
        namespaceSelector: args.namespaceSelector,
        virtualNodes: pulumi.all(args.peerings.map((p) => p.virtualNodeName)),
        naming: args.naming,
        timeoutSeconds: args.timeoutSeconds,
        force: args.force,
        podOffloading: args.podOffloading,
        serviceAccountTokens: args.serviceAccountTokens,
        remoteNamespace: undefined,
        remotes: undefined,
        selectedNamespaces: undefined,
        selectorName: undefined,
        status: undefined,
        ...ownUrn("NamespaceOffloading", name, opts),
      },
      // The peerings' virtual node names are inputs: the engine makes them first and removes them last.
      { ...opts, additionalSecretOutputs: ["consumerKubeconfig"] },
      "liqo",
      "NamespaceOffloading",
    );
  }
}
