/**
 * `pulumi import` of an out-of-band peering's `Tunnel` (made by another stack, by the TypeScript
 * SDK's dynamic resource, or by hand): the ID names the pair as the resource's own ID does,
 * `<consumerClusterId>-to-<providerClusterId>`, and the consumer's kubeconfig reaches both sides'
 * `TunnelEndpoint`s (the provider's through the peering's identity). Deciding what the reads
 * found is pure; the reads are ../network-fabric/tunnel-lifecycle.ts.
 */
import type { TunnelFound } from "../network-fabric/tunnel-lifecycle.js";
import { TUNNEL_DEFAULTS } from "../network-fabric/tunnel-plan.js";
import type { Imported } from "./imported.js";
import { pairOf, PEERING_IMPORT_OBJECT } from "./peering-import.js";
import { onFirstNeed } from "./steps.js";
import type { TunnelInputs, TunnelOutputs } from "./tunnel.js";

/** What an import of a Tunnel is asked. */
export interface TunnelImport {
  /** The ID's object part: `<consumerClusterId>-to-<providerClusterId>`. */
  readonly pair: string;
  /** The consumer's kubeconfig (secret). */
  readonly consumerKubeconfig: string;
  /** How errors name the import, e.g. `Tunnel import of ID "…"`. */
  readonly label: string;
}

/** The object part a Tunnel's import ID has, for messages: the same pair as its Peering's. */
export const TUNNEL_IMPORT_OBJECT = PEERING_IMPORT_OBJECT;

/**
 * The Tunnel an import finds as `found`, or an error naming the step and the endpoint when there is
 * none to take: a consumer other than the ID names, no out-of-band peering with that provider (an
 * in-band one builds its tunnel itself), no identity to read the provider's side with, or not both
 * sides' `TunnelEndpoint`s of one tunnel.
 */
export function importedTunnel(asked: TunnelImport, found: TunnelFound): Imported<TunnelInputs, TunnelOutputs> {
  const refuse = (step: string, why: string) => new Error(`${asked.label}: ${step} at ${found.server}: ${why}`);
  const pair = pairOf(asked.pair);
  if (!pair)
    throw new Error(`${asked.label}: ${JSON.stringify(asked.pair)} is not ${TUNNEL_IMPORT_OBJECT} (two cluster IDs)`);
  const { consumer, outgoing, drift } = found;
  if (!consumer)
    throw refuse("reading the consumer's identity", "pulumi-liqo is not installed there: nothing to import");
  if (consumer.clusterId !== pair.consumerClusterId)
    throw refuse(
      "reading the consumer's identity",
      `the kubeconfig reaches cluster ${consumer.clusterId}, not ${pair.consumerClusterId}: refused, an import ID names the consumer its kubeconfig reaches`,
    );
  const peering = `OutgoingPeering of provider ${pair.providerClusterId}`;
  if (!outgoing) throw refuse(`reading the ${peering}`, "there is none: no peering, so no tunnel, with it");
  if (outgoing.spec.inBand)
    throw refuse(`reading the ${peering}`, "an in-band peering builds its tunnel itself: import the Peering");
  if (!found.identity)
    throw refuse(
      "reading the identity Secret",
      `the consumer holds no identity for ${outgoing.spec.providerClusterName}, so the provider's side cannot be read`,
    );
  const missing = (["consumer", "provider"] as const).filter((side) => !found.endpoints?.[side]);
  if (missing.length > 0)
    throw refuse(
      "reading both sides' TunnelEndpoints",
      `the ${missing.join(" and ")} side has none: there is no tunnel to import`,
    );
  const settings = found.settings;
  if (!settings || !drift)
    throw refuse(
      "reading both sides' TunnelEndpoints",
      "their specs are not one tunnel's (no single server dialed at host:port)",
    );

  const inputs = {
    consumerClusterId: pair.consumerClusterId,
    providerClusterId: pair.providerClusterId,
    providerClusterName: outgoing.spec.providerClusterName,
    tenantNamespace: outgoing.spec.tenantNamespace,
    ...(settings.serverAddress !== undefined ? { serverAddress: settings.serverAddress } : {}),
    ...(settings.server !== "provider" ? { server: settings.server } : {}),
    ...(settings.port !== TUNNEL_DEFAULTS.port ? { port: settings.port } : {}),
    ...(settings.mtu !== TUNNEL_DEFAULTS.mtu ? { mtu: settings.mtu } : {}),
    ...(settings.keepaliveSeconds !== TUNNEL_DEFAULTS.keepaliveSeconds
      ? { keepaliveSeconds: settings.keepaliveSeconds }
      : {}),
  };
  return {
    id: asked.pair,
    inputs,
    outputs: {
      ...inputs,
      consumerKubeconfig: asked.consumerKubeconfig,
      ...(drift.record ? { consumer: drift.record.consumer, provider: drift.record.provider } : {}),
      status: drift.problems.length > 0 ? drift.problems.join("; ") : "Connected",
    },
    unrecovered: [
      {
        input: "consumerKubeconfig",
        why: "a secret the cluster never shows: the state keeps the file's text the ID names only to reach the consumer, the program must give it",
      },
    ],
    untraced: ["behindNat", "timeoutSeconds", "force"],
  };
}

/** The reads, loaded on first need: they bring the Kubernetes client. */
const reads = onFirstNeed((): typeof import("../network-fabric/tunnel-lifecycle.js") =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it with this module
  require("../network-fabric/tunnel-lifecycle.js"),
);

/** Imports the Tunnel of `asked`: reads both sides (writing nothing). */
export async function importTunnel(asked: TunnelImport): Promise<Imported<TunnelInputs, TunnelOutputs>> {
  const pair = pairOf(asked.pair);
  const found = pair
    ? await reads().readTunnelForImport(asked.consumerKubeconfig, `${asked.label}: kubeconfig`, pair.providerClusterId)
    : { server: "", identity: false };
  return importedTunnel(asked, found);
}
