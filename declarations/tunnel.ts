/** The declaration of `Tunnel` (vocabulary.ts says its words). */
import {
  boolean,
  declareResource,
  inPlace,
  integer,
  listOf,
  object,
  replaces,
  resource,
  string,
} from "./vocabulary.js";
import { SERVER_ADDRESS } from "./types.js";

/** Why another pair of clusters is another tunnel. */
const ANOTHER_PAIR =
  "a tunnel joins one pair of clusters: each side's TunnelEndpoint is named after the other's cluster ID, and the tunnel's link addresses derive from both IDs";

export const TUNNEL = declareResource({
  name: "Tunnel",
  module: "tunnel",
  summary: "The WireGuard network fabric of an out-of-band peering.",
  inputs: {
    peering: {
      type: resource("Peering"),
      description:
        "The out-of-band peering the tunnel serves: the provider's side is reached with the " +
        "identity it issued. (An in-band peering builds its tunnel itself, first.)",
      required: true,
      changes: {
        consumerClusterId: replaces(ANOTHER_PAIR),
        providerClusterId: replaces(ANOTHER_PAIR),
        consumerKubeconfig: inPlace(
          "only how pulumi reaches the consumer cluster, which its cluster ID identifies; update checks the tunnel again through it",
        ),
        tenantNamespace: inPlace(
          "the provider's TunnelEndpoint is written in the peering's tenant namespace, which moved",
        ),
      },
      passes: {
        consumerKubeconfig: "consumer.kubeconfig",
        consumerClusterId: "consumer.clusterId",
        providerClusterId: "providerClusterId",
        providerClusterName: "providerClusterName",
        tenantNamespace: "tenantNamespace",
      },
    },
    server: {
      type: string("consumer", "provider"),
      description: "Which side's gateway listens: the reachable one when the other is behind NAT.",
      default: '"provider"',
      change: inPlace(
        "the other gateway listens and this one dials; both TunnelEndpoints are rewritten and the gateways keep their keys",
      ),
    },
    serverAddress: {
      ...SERVER_ADDRESS,
      change: inPlace("the dialing gateway is told the new address; both gateways keep their keys"),
    },
    port: {
      type: integer,
      description: "UDP port the gateways listen on. Changes in place.",
      default: "51820",
      change: inPlace(
        "the serving gateway listens on the new port and the other dials it there; both gateways keep their keys",
      ),
    },
    mtu: {
      type: integer,
      description: "MTU of both tunnel interfaces (one value, so the ends cannot disagree). Changes in place.",
      default: "1420",
      change: inPlace("both tunnel interfaces take the new MTU; the gateways keep their keys"),
    },
    keepaliveSeconds: {
      type: integer,
      description: "Seconds between the client's keepalives (keeps a NAT mapping open); 0 sends none.",
      default: "25",
      change: inPlace("the dialing gateway's keepalive interval changes; the gateways keep their keys"),
    },
    behindNat: {
      type: listOf(string("consumer", "provider")),
      description:
        "Sides behind NAT. Both is refused (nothing could reach either gateway); the server must not be one.",
      default: "[]",
      change: inPlace(
        "it only decides which side may serve (checked at preview); the gateways' settings do not " +
          "depend on it, so update checks the tunnel again as it is",
      ),
    },
    timeoutSeconds: {
      type: integer,
      description: "Deadline of each operation (create, update, delete), in seconds.",
      default: "300",
      change: inPlace(
        "only the deadline of later operations; update checks the tunnel again (handshake and probe) as it is",
      ),
    },
    force: {
      type: boolean,
      description:
        "On delete with the provider unreachable (found by one short look: a TLS handshake and one request, a few " +
        "seconds), remove the consumer's side anyway (its TunnelEndpoint, which its gateway takes " +
        "down) and list what stays on the provider. Without it, such a delete fails at once and " +
        "changes nothing. Changing it updates in place without contacting either cluster, so it can " +
        "be set after the provider is gone: `pulumi up`, then `pulumi destroy`.",
      default: "false",
      change: inPlace(
        "only what a later delete does when the provider cannot be reached; update records it and contacts neither cluster",
      ),
    },
  },
  outputs: {
    consumer: {
      type: object("TunnelEnd"),
      description: "The consumer's gateway.",
      required: true,
    },
    provider: {
      type: object("TunnelEnd"),
      description: "The provider's gateway.",
      required: true,
    },
    status: {
      type: string(),
      description: "`Connected`, or what the last refresh found wrong.",
      required: true,
      repairedByUpdate:
        "the last create stopped half-way, or pulumi refresh found the tunnel broken: update " +
        "converges both gateways again, which finishes or repairs it",
    },
  },
});
