/** The declaration of `PeeringToken` (vocabulary.ts says its words). */
import { boolean, declareResource, inPlace, integer, replaces, resource, string } from "./vocabulary.js";

/** Why what the token hands over changes nothing but the outputs. */
const HANDOVER =
  "passed through to the outputs a consumer takes; the token and its record on the cluster stay as they are";

export const PEERING_TOKEN = declareResource({
  name: "PeeringToken",
  module: "peering-token",
  summary: "A peering token on the provider; the cluster keeps only its hash.",
  inputs: {
    cluster: {
      type: resource("Cluster"),
      description: "The provider cluster whose auth service accepts the token.",
      required: true,
      changes: {
        kubeconfig: inPlace("only how pulumi reaches the provider cluster; the token stays as it is"),
        clusterId: inPlace(HANDOVER),
        authUrl: inPlace(HANDOVER),
        authCaCert: inPlace(HANDOVER),
      },
      passes: {
        kubeconfig: "kubeconfig",
        clusterId: "clusterId",
        authUrl: "authUrl",
        authCaCert: "authCaCert",
      },
    },
    expiresInSeconds: {
      type: integer,
      description: "Seconds after which the token is refused for new peerings.",
      default: "never",
      change: replaces(
        "the expiry is written into the token's record on the cluster when the token is made: a new " +
          "token with the new expiry is made and the old one revoked (existing peerings keep their " +
          "identities)",
      ),
    },
    rotation: {
      type: string(),
      description:
        "Any text; changing it replaces the token (rotation). The old token stops working for new peerings; peerings made with it keep working.",
      example: '"2026-11"',
      change: replaces(
        "a new token is made and the old one revoked: it stops working for new peerings, existing peerings keep their identities",
      ),
    },
    force: {
      type: boolean,
      description:
        "On delete with the cluster unreachable (found by one short look: a TLS handshake and one " +
        "request, a few seconds), leave the stack anyway and list what stays: the token's record, " +
        "with which the token is accepted while it stays. Without it, such a delete fails at once and " +
        "changes nothing. Changing it updates in place without contacting the cluster, so it can be " +
        "set after the cluster is gone: `pulumi up`, then `pulumi destroy`.",
      default: "false",
      change: inPlace("only what a later delete does when the cluster cannot be reached; update records it"),
    },
  },
  outputs: {
    token: {
      type: string(),
      description: "The token (secret).",
      required: true,
      secret: true,
    },
    tokenId: {
      type: string(),
      description: "Public id of the token.",
      required: true,
    },
    clusterId: {
      type: string(),
      description: "The provider's cluster id.",
      required: true,
    },
    authUrl: {
      type: string(),
      description: "The provider's auth service URL.",
      required: true,
    },
    authCaCert: {
      type: string(),
      description: "PEM of the CA of the provider's auth service.",
      required: true,
    },
    expiresAt: {
      type: string(),
      description: "When the token expires (RFC 3339), if it does.",
    },
  },
});
