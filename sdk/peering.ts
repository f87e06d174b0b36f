/** The `Peering` resource: consumer -> provider, out-of-band or in-band. */
import * as pulumi from "@pulumi/pulumi";
import type { ProviderHandover } from "../core/peering/handover.js";
import type { Cluster, ClusterAccess } from "./cluster.js";
import { lazyProvider } from "./lazy-provider.js";
import { ownUrn } from "./own-urn.js";
import { claimServedPort } from "./served-ports.js";
import type { TunnelEnd, TunnelSettingsArgs } from "./tunnel-types.js";

/**
 * What a provider hands to a consumer: its `PeeringToken`'s outputs `clusterId`, `authUrl`,
 * `authCaCert` and `token` (keep it a secret), or the same values from another stack. The
 * provider's `ProviderHandover` with each field a `pulumi.Input`; its fields are documented there.
 */
export type ProviderHandoverArgs = { readonly [K in keyof ProviderHandover]: pulumi.Input<ProviderHandover[K]> };

/** Resources asked of the provider: a share of its free capacity, or fixed amounts. */
export interface ResourceRequestArgs {
  /** Percentage (1-100) of the provider's free allocatable capacity. Excludes the fixed amounts. */
  readonly sharePercent?: pulumi.Input<number>;
  /** Fixed CPU. @example "2" or "500m" */
  readonly cpu?: pulumi.Input<string>;
  /** Fixed memory. @example "4Gi" */
  readonly memory?: pulumi.Input<string>;
  /** Fixed pod count. */
  readonly pods?: pulumi.Input<number>;
}

/** A taint for the virtual node, besides the one every virtual node carries. */
export interface TaintArgs {
  readonly key: pulumi.Input<string>;
  readonly value?: pulumi.Input<string>;
  readonly effect: pulumi.Input<"NoSchedule" | "PreferNoSchedule" | "NoExecute">;
}

/**
 * How a `Tunnel` or a `NamespaceOffloading` of the provider plugin uses a peering (this package's
 * own resources take the {@link Peering} itself).
 */
export interface PeeringAccess {
  /** The consumer cluster. */
  readonly consumer: ClusterAccess;
  /** The provider's cluster id. */
  readonly providerClusterId: string;
  /** The provider's name. */
  readonly providerClusterName: string;
  /** The consumer's tenant namespace on the provider. */
  readonly tenantNamespace: string;
  /** The virtual node in the consumer. */
  readonly virtualNodeName: string;
}

/** Inputs of a {@link Peering}. */
export interface PeeringArgs {
  /** The consumer cluster (this side). */
  readonly consumer: Cluster;
  /**
   * `out-of-band` (default): the consumer reaches the provider's auth service and API server
   * directly, with what the provider handed over. `in-band`: only the gateways reach each other;
   * the tunnel is built first (with both clusters' kubeconfigs), and the consumer's agent
   * authenticates and negotiates through it. Changing it replaces the peering.
   */
  readonly approach?: "out-of-band" | "in-band";
  /** Out-of-band: what the provider handed over. */
  readonly provider?: pulumi.Input<ProviderHandoverArgs>;
  /** In-band: the provider cluster, managed in the same program or imported with its kubeconfig. */
  readonly providerCluster?: Cluster;
  /** In-band: the tunnel. (Out-of-band, add a `Tunnel` resource instead.) */
  readonly tunnel?: pulumi.Input<TunnelSettingsArgs>;
  /** What to ask for. A change is renegotiated in place. */
  readonly resources: pulumi.Input<ResourceRequestArgs>;
  /** Name of the virtual node. Changing it replaces the peering. @default `liqo-<provider name>` */
  readonly virtualNodeName?: pulumi.Input<string>;
  /** Extra labels for the virtual node. */
  readonly labels?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** Extra taints for the virtual node. */
  readonly taints?: pulumi.Input<pulumi.Input<TaintArgs>[]>;
  /** Deadline of each operation (create, update, delete), in seconds. @default 300 */
  readonly timeoutSeconds?: pulumi.Input<number>;
  /** On delete with the provider unreachable, clean the consumer side anyway. @default false */
  readonly force?: pulumi.Input<boolean>;
}

/**
 * A peering: the consumer authenticates to the provider's auth service with a token, negotiates
 * resources through the provider's API server with the identity it received, and gets a virtual
 * node standing for the offer, kept Ready by its agent's heartbeat. Out-of-band the steps run from
 * here; in-band the tunnel comes first and the consumer's agent runs them through it.
 */
export class Peering extends pulumi.dynamic.Resource {
  /** The virtual node in the consumer. */
  declare readonly virtualNodeName: pulumi.Output<string>;
  /** The consumer's tenant namespace on the provider. */
  declare readonly tenantNamespace: pulumi.Output<string>;
  /** The provider's name. */
  declare readonly providerClusterName: pulumi.Output<string>;
  /** The accepted offer. */
  declare readonly offer: pulumi.Output<{ cpu: string; memory: string; pods: number }>;
  /** `Ready`, or what the last refresh found wrong. */
  declare readonly status: pulumi.Output<string>;
  /**
   * When the identity the consumer holds on the provider expires (RFC 3339), as the last create,
   * update or refresh read it. The consumer's agent renews it at two thirds of its lifetime, so a
   * `pulumi refresh` shows the renewed date. @example "2026-12-23T10:04:05.000Z"
   */
  declare readonly identityExpiresAt: pulumi.Output<string | undefined>;
  /** The consumer's cluster id. */
  declare readonly consumerClusterId: pulumi.Output<string>;
  /** The provider's cluster id. */
  declare readonly providerClusterId: pulumi.Output<string>;
  /** In-band: both gateways' reports. */
  declare readonly tunnelStatus: pulumi.Output<{ consumer: TunnelEnd; provider: TunnelEnd } | undefined>;
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
    super(
      lazyProvider("peering"),
      name,
      {
        consumerKubeconfig: args.consumer.kubeconfig,
        consumerClusterId: args.consumer.clusterId,
        approach: args.approach ?? "out-of-band",
        provider: args.provider === undefined ? undefined : pulumi.secret(args.provider),
        providerKubeconfig: args.providerCluster?.kubeconfig,
        providerAuthUrl: args.providerCluster?.authUrl,
        tunnel: args.tunnel,
        resources: args.resources,
        virtualNodeName: args.virtualNodeName,
        labels: args.labels,
        taints: args.taints,
        timeoutSeconds: args.timeoutSeconds,
        force: args.force,
        tenantNamespace: undefined,
        providerClusterName: undefined,
        offer: undefined,
        status: undefined,
        identityExpiresAt: undefined,
        providerClusterId: args.providerCluster?.clusterId,
        tunnelStatus: undefined,
        ...ownUrn("Peering", name, opts),
      },
      { ...opts, additionalSecretOutputs: ["consumerKubeconfig", "providerKubeconfig"] },
      "liqo",
      "Peering",
    );
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
