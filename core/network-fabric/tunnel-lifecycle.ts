/**
 * An out-of-band peering's tunnel as its resource runs it: both sides found from the consumer's
 * kubeconfig and the identity the peering left there (the provider is reached only through it),
 * then the tunnel's steps (tunnel.ts, tunnel-delete.ts).
 */
import type * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE } from "../api/index.js";
import type { OutgoingPeering, TunnelEndpoint } from "../api/index.js";
import { getClusterIdentity, type ClusterIdentity } from "../cluster/install.js";
import { loadKubeconfig, serverOf } from "../kube/client.js";
import { getIdentityKubeconfig } from "../authentication/stored-identity.js";
import { getOutgoingPeering } from "../virtual-node/outgoing-peering.js";
import type { Progress } from "../operation/progress.js";
import { getTunnelEndpoint } from "./endpoints.js";
import {
  driftOf,
  endpointRefOf,
  ensureTunnel,
  providerEndpointNamespace,
  readTunnel,
  readTunnelWithoutIdentity,
  STEP,
  type TunnelDrift,
  type TunnelParties,
  type TunnelRecord,
  type TunnelSides,
} from "./tunnel.js";
import { deleteTunnel, deleteTunnelWithoutIdentity, type TunnelDeleteOptions } from "./tunnel-delete.js";
import { settingsOfEndpoints, withTunnelDefaults, type PeeringSide, type TunnelSettingsInput } from "./tunnel-plan.js";

/** Who the tunnel joins, as the peering names them. */
export interface TunnelReach {
  /** The consumer's kubeconfig (from the peering). */
  readonly consumerKubeconfig: string;
  readonly consumerClusterId: string;
  readonly providerClusterId: string;
  readonly providerClusterName: string;
  /** The consumer's tenant namespace on the provider (from the peering). */
  readonly tenantNamespace: string;
}

/** The consumer's side as its kubeconfig reaches it, both sides as named, and the identity it holds for the provider (undefined once unpeered). */
async function partiesOf(
  reach: TunnelReach,
): Promise<{ consumerKc: k8s.KubeConfig; parties: TunnelParties; identity: string | undefined }> {
  const consumerKc = loadKubeconfig(reach.consumerKubeconfig, "Tunnel: consumerKubeconfig");
  const me = await getClusterIdentity(consumerKc);
  if (!me)
    throw new Error(
      `network fabric: the consumer cluster at ${serverOf(consumerKc)} is not installed (create its Cluster resource first)`,
    );
  const parties: TunnelParties = {
    consumer: {
      namespace: SYSTEM_NAMESPACE,
      party: { clusterId: reach.consumerClusterId, clusterName: me.clusterName },
    },
    provider: {
      namespace: providerEndpointNamespace("out-of-band", reach.tenantNamespace),
      party: { clusterId: reach.providerClusterId, clusterName: reach.providerClusterName },
    },
  };
  return { consumerKc, parties, identity: await getIdentityKubeconfig(consumerKc, reach.providerClusterId) };
}

/** Both sides reached: the consumer with its kubeconfig, the provider only through the peering's identity. */
const sidesWith = (consumerKc: k8s.KubeConfig, parties: TunnelParties, identity: string): TunnelSides => ({
  consumer: { ...parties.consumer, kc: consumerKc },
  provider: { ...parties.provider, kc: loadKubeconfig(identity, "the peering's identity") },
});

/** Both sides; fails when the consumer holds no identity for the provider. */
async function sidesOf(reach: TunnelReach): Promise<TunnelSides> {
  const { consumerKc, parties, identity } = await partiesOf(reach);
  if (!identity) {
    throw new Error(
      `network fabric: consumer ${parties.consumer.party.clusterName} at ${serverOf(consumerKc)} holds no identity ` +
        `for provider ${reach.providerClusterName}: the Peering must exist (and be Ready) before its Tunnel`,
    );
  }
  return sidesWith(consumerKc, parties, identity);
}

/** Sets up (or converges) the tunnel with `settings`; see ensureTunnel. */
export async function convergeTunnel(
  reach: TunnelReach,
  settings: TunnelSettingsInput,
  timeoutMs: number,
  progress: Progress,
): Promise<TunnelRecord> {
  return ensureTunnel(await sidesOf(reach), withTunnelDefaults(settings), timeoutMs, progress);
}

/** What refresh finds: both sides through the identity, or the consumer's alone once the peering no longer holds one. */
export async function readTunnelState(reach: TunnelReach, settings: TunnelSettingsInput): Promise<TunnelDrift> {
  const { consumerKc, parties, identity } = await partiesOf(reach);
  return identity
    ? readTunnel(sidesWith(consumerKc, parties, identity), withTunnelDefaults(settings))
    : readTunnelWithoutIdentity(parties, consumerKc);
}

/** Removes the tunnel (see deleteTunnel), or only the consumer's side under `force` once the consumer holds no identity. */
export async function removeTunnel(
  reach: TunnelReach,
  options: TunnelDeleteOptions,
  progress: Progress,
): Promise<string[]> {
  const { consumerKc, parties, identity } = await partiesOf(reach);
  return identity
    ? deleteTunnel(sidesWith(consumerKc, parties, identity), options, progress)
    : deleteTunnelWithoutIdentity(parties, consumerKc, options, progress);
}

/** What an import finds of the tunnel of the consumer's peering with a provider (each part undefined when absent). */
export interface TunnelFound {
  /** The consumer's API server (the endpoint of the reads there). */
  readonly server: string;
  readonly consumer?: ClusterIdentity;
  readonly outgoing?: OutgoingPeering;
  /** Whether the consumer holds an identity for the provider (the provider's side is read with it). */
  readonly identity: boolean;
  /** Both sides' `TunnelEndpoint`s, where they are. */
  readonly endpoints?: Readonly<Record<PeeringSide, TunnelEndpoint | undefined>>;
  /** The settings both endpoints were forged with, when both are there and agree. */
  readonly settings?: ReturnType<typeof settingsOfEndpoints>;
  /** The tunnel as refresh reads it, with those settings. */
  readonly drift?: TunnelDrift;
}

/** Everything an import reads of the tunnel toward provider `providerClusterId` (nothing is written). */
export async function readTunnelForImport(
  consumerKubeconfig: string,
  kubeconfigInput: string,
  providerClusterId: string,
): Promise<TunnelFound> {
  const consumerKc = loadKubeconfig(consumerKubeconfig, kubeconfigInput);
  const server = serverOf(consumerKc);
  const me = await getClusterIdentity(consumerKc);
  if (!me) return { server, identity: false };
  const outgoing = await getOutgoingPeering(consumerKc, providerClusterId);
  if (!outgoing || outgoing.spec.inBand)
    return { server, consumer: me, identity: false, ...(outgoing ? { outgoing } : {}) };
  const reach = {
    consumerKubeconfig,
    consumerClusterId: me.clusterId,
    providerClusterId,
    providerClusterName: outgoing.spec.providerClusterName,
    tenantNamespace: outgoing.spec.tenantNamespace,
  };
  const { parties, identity } = await partiesOf(reach);
  if (!identity) return { server, consumer: me, outgoing, identity: false };
  const sides = sidesWith(consumerKc, parties, identity);
  const [consumerEnd, providerEnd] = await Promise.all([
    getTunnelEndpoint(sides.consumer.kc, endpointRefOf(sides, "consumer"), STEP),
    getTunnelEndpoint(sides.provider.kc, endpointRefOf(sides, "provider"), STEP),
  ]);
  const endpoints = { consumer: consumerEnd, provider: providerEnd };
  const settings =
    consumerEnd && providerEnd
      ? settingsOfEndpoints(
          { consumer: consumerEnd.spec, provider: providerEnd.spec },
          { consumer: consumerEnd.status?.endpoint, provider: providerEnd.status?.endpoint },
        )
      : undefined;
  const drift = settings ? driftOf(sides, endpoints, { ...settings, behindNat: [] }) : undefined;
  return {
    server,
    consumer: me,
    outgoing,
    identity: true,
    endpoints,
    ...(settings ? { settings } : {}),
    ...(drift ? { drift } : {}),
  };
}
