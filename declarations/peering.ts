/** The declaration of `Peering` (vocabulary.ts says its words). */
import {
  boolean,
  declareResource,
  inPlace,
  integer,
  listOf,
  mapOf,
  object,
  replaces,
  resource,
  string,
} from "./vocabulary.js";

/** Why another provider is another peering. */
const ANOTHER_PROVIDER =
  "the consumer's identity is issued by that provider and stored under its cluster ID, and the virtual node stands for it: another provider is another peering";
/** Why the provider's auth service endpoint changes nothing but the record. */
const AUTH_ENDPOINT =
  "recorded for delete, which revokes the identity at the provider's auth service; the identity already issued talks to the " +
  "provider's API server, so nothing else changes";
/** Why an input that only says how pulumi reaches a cluster changes nothing there. */
const reachOnly = (side: string): string =>
  `only how pulumi reaches the ${side} cluster, which its cluster ID identifies`;

export const PEERING = declareResource({
  name: "Peering",
  module: "peering",
  summary: "Consumer to provider, out-of-band or in-band: authentication, negotiation and a virtual node.",
  inputs: {
    consumer: {
      type: resource("Cluster"),
      description: "The consumer cluster (this side).",
      required: true,
      changes: {
        consumerClusterId: replaces(
          "the consumer's identity, its tenant namespace on the provider and its resource request are all named after the consumer's cluster ID",
        ),
        consumerKubeconfig: inPlace(reachOnly("consumer")),
      },
      passes: {
        consumerKubeconfig: "kubeconfig",
        consumerClusterId: "clusterId",
      },
    },
    approach: {
      type: string("out-of-band", "in-band"),
      // State written before the approach existed holds none: that was out-of-band.
      sent: "out-of-band",
      description:
        "`out-of-band` (default): the consumer reaches the provider's auth service and API server " +
        "directly, with what the provider handed over. `in-band`: only the gateways reach each " +
        "other; the tunnel is built first (with both clusters' kubeconfigs), and the consumer's " +
        "agent authenticates and negotiates through it. Changing it replaces the peering.",
      change: replaces(
        "out-of-band and in-band peerings authenticate differently (pulumi with the handed-over " +
          "token, or the consumer's agent inside the tunnel) and keep different records: the peering " +
          "is undone one way and made the other",
      ),
    },
    provider: {
      type: object("ProviderHandover"),
      // Only another clusterId replaces the peering, which the code decides; an engine replacing on
      // every change of it would replace the peering whenever its token is rotated.
      replaceOnChanges: false,
      description: "Out-of-band: what the provider handed over.",
      secret: true,
      changes: {
        "provider.clusterId": replaces(ANOTHER_PROVIDER),
        "provider.authUrl": inPlace(AUTH_ENDPOINT),
        "provider.authCaCert": inPlace(AUTH_ENDPOINT),
      },
    },
    providerCluster: {
      type: resource("Cluster"),
      description: "In-band: the provider cluster, managed in the same program or imported with its kubeconfig.",
      changes: {
        providerClusterId: replaces(ANOTHER_PROVIDER),
        providerKubeconfig: inPlace(reachOnly("provider")),
        providerAuthUrl: inPlace(
          "in-band, the consumer's agent is told the auth service's port inside the tunnel, which it " +
            "uses only to authenticate again; the identity stays",
        ),
      },
      passes: {
        providerKubeconfig: "kubeconfig",
        providerClusterId: "clusterId",
        providerAuthUrl: "authUrl",
      },
    },
    tunnel: {
      type: object("TunnelSettings"),
      description:
        "In-band: the tunnel, built first; left out, every setting takes its default (the provider " +
        "serves, dialed where its gateway says it is reached). (Out-of-band, add a `Tunnel` resource instead.)",
      change: inPlace(
        "in-band, the tunnel converges first (both TunnelEndpoints rewritten, the gateways keeping " +
          "their keys), then the rest of the peering is checked again",
      ),
    },
    resources: {
      type: object("ResourceRequest"),
      description: "What to ask for. A change is renegotiated in place.",
      required: true,
      change: inPlace(
        "renegotiated: the provider's agent answers the changed request with a new offer and the virtual node is resized to it; the identity stays",
      ),
    },
    virtualNodeName: {
      type: string(),
      description: "Name of the virtual node. Changing it replaces the peering.",
      default: "`liqo-<provider name>`",
      change: replaces(
        "a Kubernetes Node cannot be renamed: the peering is made again with a virtual node of the new name",
      ),
    },
    labels: {
      type: mapOf(string()),
      description: "Extra labels for the virtual node.",
      change: inPlace(
        "in-band, the virtual node's labels are patched; out-of-band they are only recorded, and the node keeps those it was created with",
      ),
    },
    taints: {
      type: listOf(object("Taint")),
      description: "Extra taints for the virtual node.",
      change: inPlace(
        "in-band, the virtual node's taints are patched; out-of-band they are only recorded, and the node keeps those it was created with",
      ),
    },
    timeoutSeconds: {
      type: integer,
      description: "Deadline of each operation (create, update, delete), in seconds.",
      default: "300",
      change: inPlace("only the deadline of later operations (in-band, update converges the peering again as it is)"),
    },
    force: {
      type: boolean,
      description: "On delete with the provider unreachable, clean the consumer side anyway.",
      default: "false",
      change: inPlace("only what a later out-of-band delete does when the provider cannot be reached"),
    },
  },
  outputs: {
    virtualNodeName: {
      type: string(),
      description: "The virtual node in the consumer.",
      required: true,
    },
    tenantNamespace: {
      type: string(),
      description: "The consumer's tenant namespace on the provider.",
      required: true,
    },
    providerClusterName: {
      type: string(),
      description: "The provider's name.",
      required: true,
    },
    offer: {
      type: object("Offer"),
      description: "The accepted offer.",
      required: true,
    },
    status: {
      type: string(),
      description: "`Ready`, or what the last refresh found wrong.",
      required: true,
      repairedByUpdate:
        "the last create stopped half-way, or pulumi refresh found the peering broken (its identity " +
        "revoked, its node gone): update runs the peering's steps again (each is idempotent, " +
        "authentication included), which finishes or repairs it",
    },
    identityExpiresAt: {
      type: string(),
      description:
        "When the identity the consumer holds on the provider expires (RFC 3339), as the last " +
        "create, update or refresh read it. The consumer's agent renews it at two thirds of its " +
        "lifetime, so a `pulumi refresh` shows the renewed date.",
      example: '"2026-12-23T10:04:05.000Z"',
    },
    consumerClusterId: {
      type: string(),
      description: "The consumer's cluster id.",
      required: true,
    },
    providerClusterId: {
      type: string(),
      description: "The provider's cluster id.",
      required: true,
    },
    tunnelStatus: {
      type: object("TunnelStatus"),
      description: "In-band: both gateways' reports.",
    },
  },
  access: {
    type: "PeeringAccess",
    description:
      "How a Tunnel or a NamespaceOffloading uses this peering (its consumer's kubeconfig is " +
      "secret): what a program of the provider plugin gives as a Tunnel's peering or among a " +
      "NamespaceOffloading's peerings; this package's TypeScript resources take the Peering " +
      "itself.",
    fromState: {
      "consumer.clusterId": "consumerClusterId",
      "consumer.kubeconfig": "consumerKubeconfig",
      providerClusterId: "providerClusterId",
      providerClusterName: "providerClusterName",
      tenantNamespace: "tenantNamespace",
      virtualNodeName: "virtualNodeName",
    },
    // The SDK's Peering keeps the consumer it was given (a Cluster) and the consumer's id as an output.
    inProgram: { "consumer.clusterId": "consumerClusterId" },
  },
});
