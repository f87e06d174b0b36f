/**
 * `pulumi import` of an out-of-band `Peering` (made by another stack, by the TypeScript SDK's
 * dynamic resource, or by hand): the ID `<consumerClusterId>-to-<providerClusterId>` names the
 * pair, as the resource's own ID does, and the consumer's kubeconfig reaches what the consumer
 * records of it. Deciding what the reads found is pure; the reads are ../peering/import-read.ts.
 */
import { isClusterId } from "../api/names.js";
import type { PeeringFound } from "../peering/import-read.js";
import { defaultVirtualNodeName, statusAfterRead } from "../peering/peering-plan.js";
import type { Imported } from "./imported.js";
import type { PeeringInputs, PeeringOutputs } from "./peering.js";
import { onFirstNeed } from "./steps.js";

/** What an import of a Peering is asked. */
export interface PeeringImport {
  /** The ID's object part: `<consumerClusterId>-to-<providerClusterId>`. */
  readonly pair: string;
  /** The consumer's kubeconfig (secret). */
  readonly consumerKubeconfig: string;
  /** The importing resource's URN: a claim another resource holds is taken over from it. */
  readonly urn: string;
  /** How errors name the import, e.g. `Peering import of ID "…"`. */
  readonly label: string;
}

/** The optional inputs a peering leaves no trace of in the clusters: an import leaves them out. */
const PEERING_UNTRACED = ["timeoutSeconds", "force"] as const;

/** The object part an import ID of a Peering has, for messages. */
export const PEERING_IMPORT_OBJECT = "<consumerClusterId>-to-<providerClusterId>";

/** The two cluster IDs of `pair`, or undefined when it is not `<16 hex>-to-<16 hex>`. */
export function pairOf(pair: string): { consumerClusterId: string; providerClusterId: string } | undefined {
  const [consumerClusterId, providerClusterId, ...rest] = pair.split("-to-");
  return rest.length === 0 && isClusterId(consumerClusterId) && isClusterId(providerClusterId)
    ? { consumerClusterId, providerClusterId }
    : undefined;
}

/**
 * The Peering an import finds as `found`, or an error naming the step and the endpoint when it is
 * not there to take: a consumer other than the ID names (a forged or mistaken ID), no peering with
 * that provider, an in-band one, or one whose identity, request, offer or node is missing (broken:
 * repaired by the stack that made it, not imported). A claim held by another resource is taken over.
 */
export function importedPeering(asked: PeeringImport, found: PeeringFound): Imported<PeeringInputs, PeeringOutputs> {
  const refuse = (step: string, endpoint: string, why: string) =>
    new Error(`${asked.label}: ${step} at ${endpoint}: ${why}`);
  const pair = pairOf(asked.pair);
  if (!pair)
    throw new Error(`${asked.label}: ${JSON.stringify(asked.pair)} is not ${PEERING_IMPORT_OBJECT} (two cluster IDs)`);
  const { consumerClusterId, providerClusterId } = pair;
  const { server, consumer, outgoing, negotiation, node } = found;
  if (!consumer)
    throw refuse("reading the consumer's identity", server, "pulumi-liqo is not installed there: nothing to import");
  if (consumer.clusterId !== consumerClusterId)
    throw refuse(
      "reading the consumer's identity",
      server,
      `the kubeconfig reaches cluster ${consumer.clusterId}, not ${consumerClusterId}: refused, an import ID names the consumer its kubeconfig reaches`,
    );
  const outgoingName = `OutgoingPeering of provider ${providerClusterId}`;
  if (!outgoing)
    throw refuse(`reading the ${outgoingName}`, server, "there is none: the consumer does not peer with it");
  const spec = outgoing.spec;
  if (spec.inBand || !spec.auth)
    throw refuse(
      `reading the ${outgoingName}`,
      server,
      "an in-band peering is not importable yet (its tunnel settings are not read back); keep it in the stack that made it",
    );
  const broken = (step: string, endpoint: string, why: string) =>
    refuse(
      step,
      endpoint,
      `${why}: the peering is broken; repair it with pulumi up in the stack that made it, then import it`,
    );
  if (!negotiation)
    throw broken(
      "reading the identity Secret",
      server,
      `the consumer holds no identity for ${spec.providerClusterName}`,
    );
  if (negotiation.unreadable)
    throw broken("reading the negotiation", negotiation.providerApiServerUrl, negotiation.unreadable);
  const { asked: resources, offer, providerApiServerUrl } = negotiation;
  if (!resources || !offer)
    throw broken(
      `reading ResourceRequest and ResourceOffer ${spec.tenantNamespace}/${spec.requestName}`,
      providerApiServerUrl,
      resources ? "the provider made no offer" : "the consumer's request is not filed",
    );
  if (!node) throw broken(`reading Node ${spec.virtualNodeName}`, server, "the virtual node is gone");

  const inputs = {
    consumerClusterId,
    provider: { clusterId: providerClusterId, authUrl: spec.auth.url, authCaCert: spec.auth.caPem },
    resources,
    ...(spec.virtualNodeName !== defaultVirtualNodeName(spec.providerClusterName)
      ? { virtualNodeName: spec.virtualNodeName }
      : {}),
    ...(Object.keys(node.labels).length > 0 ? { labels: node.labels } : {}),
    ...(node.taints.length > 0 ? { taints: node.taints } : {}),
  };
  return {
    id: asked.pair,
    // The token is an input the state never keeps, and the consumer's kubeconfig is an unrecovered one.
    inputs: inputs as unknown as Partial<PeeringInputs>,
    outputs: {
      ...inputs,
      consumerKubeconfig: asked.consumerKubeconfig,
      providerClusterId,
      providerClusterName: spec.providerClusterName,
      tenantNamespace: spec.tenantNamespace,
      requestName: spec.requestName,
      virtualNodeName: spec.virtualNodeName,
      offer,
      providerApiServerUrl,
      ...(found.identityExpiresAt ? { identityExpiresAt: found.identityExpiresAt } : {}),
      status: statusAfterRead(node.ready ? [] : [`virtual node ${spec.virtualNodeName}: ${node.readiness}`], offer),
    },
    unrecovered: [
      {
        input: "consumerKubeconfig",
        why: "a secret the cluster never shows: the state keeps the file's text the ID names only to reach the consumer, the program must give it",
      },
      {
        input: "provider.token",
        why: "the provider keeps only its hash; a peering that stands never uses it again, so the token of any PeeringToken of the provider does",
      },
    ],
    untraced: PEERING_UNTRACED,
    ...(found.claimHolder && found.claimHolder !== asked.urn ? { takenFrom: found.claimHolder } : {}),
  };
}

/** The reads, loaded on first need: they bring the Kubernetes client. */
const reads = onFirstNeed((): typeof import("../peering/import-read.js") =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it with this module
  require("../peering/import-read.js"),
);

/** Imports the Peering of `asked`: reads the consumer and, with its identity, the provider (writing nothing). */
export async function importPeering(asked: PeeringImport): Promise<Imported<PeeringInputs, PeeringOutputs>> {
  const pair = pairOf(asked.pair);
  const found = pair
    ? await reads().readPeeringForImport(asked.consumerKubeconfig, `${asked.label}: kubeconfig`, pair.providerClusterId)
    : { server: "" };
  return importedPeering(asked, found);
}
