/** The `Cluster` resource: one Kubernetes cluster that takes part in peerings. */
import * as pulumi from "@pulumi/pulumi";
import { lazyProvider } from "./lazy-provider.js";
import { ownUrn } from "./own-urn.js";

/** How one of a cluster's endpoints is reached from outside. */
export interface EndpointArgs {
  /**
   * Address (IP or DNS name) others reach the endpoint at.
   * @default the API server URL's host
   */
  readonly address?: pulumi.Input<string>;
  /** Port. */
  readonly port?: pulumi.Input<number>;
}

/** How the WireGuard gateway is reached, and how a deployed gateway is exposed. */
export interface GatewayArgs extends EndpointArgs {
  /**
   * How a deployed gateway is exposed to the other gateway: a `LoadBalancer` or `NodePort`
   * Service (UDP), or `hostPort`: the port of the node the gateway pod runs on, with no Service
   * (peers then dial that node's address). The gateway runs on its node's network, so `port` is
   * the port it serves on there; a `Tunnel`'s `port` must be the same.
   * @default "LoadBalancer"
   */
  readonly exposure?: pulumi.Input<"LoadBalancer" | "NodePort" | "hostPort">;
  /**
   * With `exposure: "NodePort"`: the node port the gateway's Service takes, which
   * `gatewayEndpoint` then names. @default one the cluster picks
   */
  readonly nodePort?: pulumi.Input<number>;
}

/** How the agent is deployed. */
export interface AgentArgs {
  /**
   * The agent image: the archive `npm run image` builds (`pulumi-liqo.local/agent:<version>`),
   * pushed to a registry the cluster pulls from. One image, three roles: the control agent
   * (a Deployment), the gateway (a Deployment of one hostNetwork pod) and the route agent (a
   * DaemonSet). A new image rolls them in place; peerings stay and the gateway keeps its keys.
   * Without it, an agent must already run in the cluster: when the cluster has neither the
   * agent's Deployment nor a fresh agent Lease, the install fails within about 15 s naming this
   * input (what it made stays recorded; `pulumi up` with the image set finishes it).
   * @default none: no agent is deployed
   * @example "registry.example.com/pulumi-liqo/agent:0.1.0"
   */
  readonly image?: pulumi.Input<string>;
  /** How the auth service is exposed. @default "LoadBalancer" */
  readonly exposure?: pulumi.Input<"LoadBalancer" | "NodePort">;
  /**
   * With `exposure: "NodePort"`: the node port the auth service's Service takes, which `authUrl`
   * then names. @default one the cluster picks
   */
  readonly nodePort?: pulumi.Input<number>;
}

/**
 * How another resource reaches a cluster, as the provider plugin's resources take it (this
 * package's own resources take the {@link Cluster} itself).
 */
export interface ClusterAccess {
  /** The cluster's id. */
  readonly clusterId: string;
  /** The kubeconfig (secret). */
  readonly kubeconfig: string;
  /** API server URL as consumers reach it. */
  readonly apiServerUrl?: string;
  /** URL of the cluster's auth service. */
  readonly authUrl?: string;
  /** PEM of the CA that signed the auth service's certificate. */
  readonly authCaCert?: string;
}

/** Inputs of a {@link Cluster}. */
export interface ClusterArgs {
  /**
   * The cluster's name: a DNS label of at most 32 characters. Virtual nodes standing for this
   * cluster are named after it (`liqo-<name>`).
   */
  readonly name: pulumi.Input<string>;
  /**
   * Kubeconfig with rights to install the project's namespace, CRDs and RBAC. Kept as a Pulumi
   * secret; never logged.
   */
  readonly kubeconfig: pulumi.Input<string>;
  /**
   * The cluster's pod CIDR, which its gateway announces to peers. Left out, it is read from the
   * cluster: the controller manager's `--cluster-cidr` where it runs as a pod, else the smallest
   * block holding every node's `spec.podCIDRs`. Preview (or create, when the cluster cannot be read
   * at preview) fails naming this input when neither is there: EKS with the VPC CNI gives nodes no
   * pod CIDR, and there it is the VPC's CIDR. @default detected
   * @example "10.244.0.0/16"
   */
  readonly podCidr?: pulumi.Input<string>;
  /**
   * The cluster's service CIDR. Left out, it is read from the cluster: its default `ServiceCIDR`
   * object (Kubernetes 1.33 and later), else the API server's `--service-cluster-ip-range` where it
   * runs as a pod; preview or create fails naming this input when neither is there. @default detected
   * @example "10.96.0.0/12"
   */
  readonly serviceCidr?: pulumi.Input<string>;
  /**
   * The cluster's external CIDR, if it exposes addresses beyond its pods (e.g. node or load
   * balancer addresses) to peers: its gateway announces it, and peers route it into the tunnel,
   * remapped where it overlaps their own ranges. @default none
   */
  readonly externalCidr?: pulumi.Input<string>;
  /**
   * API server URL as consumers reach it, when it differs from the kubeconfig's (NAT, a load
   * balancer). @default the kubeconfig's server
   */
  readonly apiServerUrl?: pulumi.Input<string>;
  /** How the auth service is reached. @default the API server's host, port 8443 */
  readonly authService?: pulumi.Input<EndpointArgs>;
  /** How the WireGuard gateway is reached, and exposed when deployed. @default the API server's host, UDP port 51820 */
  readonly gateway?: pulumi.Input<GatewayArgs>;
  /**
   * Where the agent comes from. With an `image`, `Cluster` deploys it (the control agent, the
   * gateway and the route agent, each with its own ServiceAccount and least-privilege RBAC, and
   * Services exposing the auth service and the gateway) and waits for them to roll out; without
   * one, an agent must already run in the cluster (a local cluster started with `--host-agent`), and `Cluster` verifies it.
   */
  readonly agent?: pulumi.Input<AgentArgs>;
  /** How long install and the agent check may take, in seconds. @default 300 */
  readonly timeoutSeconds?: pulumi.Input<number>;
  /** Uninstall on delete even while peerings still use the cluster. @default false */
  readonly force?: pulumi.Input<boolean>;
}

/**
 * A cluster that takes part in peerings. Creating it installs what peering needs in the cluster
 * (the project's namespace and CRDs, a stable cluster id, the auth service's TLS material) and
 * verifies that the project's agent serves it. Deleting it removes all of that, and refuses while
 * peerings still use the cluster unless `force` is set.
 */
export class Cluster extends pulumi.dynamic.Resource {
  /** Stable id of the cluster, made once at install. */
  declare readonly clusterId: pulumi.Output<string>;
  /** The cluster's name. */
  declare readonly name: pulumi.Output<string>;
  /** The kubeconfig (secret). */
  declare readonly kubeconfig: pulumi.Output<string>;
  /** API server URL as consumers reach it. */
  declare readonly apiServerUrl: pulumi.Output<string>;
  /** URL of the cluster's auth service. */
  declare readonly authUrl: pulumi.Output<string>;
  /** PEM of the CA that signed the auth service's certificate. */
  declare readonly authCaCert: pulumi.Output<string>;
  /** `host:port` of the WireGuard gateway. */
  declare readonly gatewayEndpoint: pulumi.Output<string>;
  /** Pod CIDR: the input, or what was detected. */
  declare readonly podCidr: pulumi.Output<string>;
  /** Service CIDR: the input, or what was detected. */
  declare readonly serviceCidr: pulumi.Output<string>;
  /**
   * Where each CIDR the inputs left out was read, e.g. `{ podCidr: "kube-controller-manager's
   * --cluster-cidr", serviceCidr: "ServiceCIDR kubernetes" }`; empty when both were given.
   */
  declare readonly detectedFrom: pulumi.Output<{ podCidr?: string; serviceCidr?: string }>;
  /**
   * How other resources reach this cluster (a secret, for its kubeconfig): what a stack written
   * against the provider plugin (YAML, Python, Go…) passes as a `PeeringToken`'s `cluster`, a
   * `Peering`'s `consumer` or `providerCluster`, a `NamespaceOffloading`'s `consumer`. Made from this
   * resource's outputs in the program; this package's resources take the `Cluster` itself.
   */
  readonly access: pulumi.Output<ClusterAccess>;

  constructor(name: string, args: ClusterArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      lazyProvider("cluster"),
      name,
      {
        ...args,
        kubeconfig: pulumi.secret(args.kubeconfig),
        clusterId: undefined,
        authUrl: undefined,
        authCaCert: undefined,
        gatewayEndpoint: undefined,
        detectedFrom: undefined,
        apiServerUrl: args.apiServerUrl,
        ...ownUrn("Cluster", name, opts),
      },
      { ...opts, additionalSecretOutputs: ["kubeconfig"] },
      "liqo",
      "Cluster",
    );
    this.access = pulumi.output({
      clusterId: this.clusterId,
      kubeconfig: this.kubeconfig,
      apiServerUrl: this.apiServerUrl,
      authUrl: this.authUrl,
      authCaCert: this.authCaCert,
    });
  }
}
