/**
 * Two clusters of a lab made ready to peer, as their `Cluster` and `PeeringToken` resources would:
 * both installed, a token recorded on the provider, and the request a consumer would make with it.
 */
import { readFileSync } from "node:fs";
import type { ClusterState } from "../local-cluster/lab.js";
import { ensurePeeringTokenSecret, forgePeeringToken, revokePeeringToken } from "../core/authentication/tokens.js";
import { SYSTEM_NAMESPACE } from "../core/api/index.js";
import { loadKubeconfig } from "../core/kube/client.js";
import { providerEndpointNamespace, type TunnelSides } from "../core/network-fabric/tunnel.js";
import type { ProviderHandover } from "../core/peering/handover.js";
import { getIdentityKubeconfig } from "../core/authentication/stored-identity.js";
import type { PeeringRecord, PeeringRequest } from "../core/peering/peering.js";
import {
  installForPeering,
  uninstallClusters,
  type InstalledCluster,
  type PodInstallOptions,
  type TestUninstallOptions,
} from "./install.js";
import { allOrFirstFailure } from "./settle.js";

/** Where the provider's auth service is. */
export type AuthServiceAt = Pick<ProviderHandover, "authUrl" | "authCaCert">;

/** A provider and a consumer ready to peer. */
export interface PeeringPair {
  readonly provider: InstalledCluster;
  readonly consumer: InstalledCluster;
  /** The consumer's admin kubeconfig text. */
  readonly consumerKubeconfig: string;
  /** The provider's auth service. */
  readonly auth: AuthServiceAt;
  /** What the consumer peers with: the handover and `resources`. */
  readonly request: PeeringRequest;
  /** Revokes the token and uninstalls both clusters. */
  cleanup(options?: TestUninstallOptions): Promise<void>;
}

/** Installs `a` (provider) and `b` (consumer), exposed as `options` says, and records a token on `a`. */
export async function preparePeering(
  a: ClusterState,
  b: ClusterState,
  resources: PeeringRequest["resources"],
  options: Pick<PodInstallOptions, "exposure"> = {},
): Promise<PeeringPair> {
  const [provider, consumer] = await allOrFirstFailure([installForPeering(a, options), installForPeering(b, options)]);
  const token = forgePeeringToken();
  await ensurePeeringTokenSecret(provider.kc, { tokenId: token.tokenId, secretHash: token.secretHash });
  const consumerKubeconfig = readFileSync(b.kubeconfig, "utf8");
  const auth = { authUrl: provider.authUrl, authCaCert: provider.caPem };
  return {
    provider,
    consumer,
    consumerKubeconfig,
    auth,
    request: {
      consumerKubeconfig,
      provider: { clusterId: provider.clusterId, ...auth, token: token.token },
      resources,
      timeoutMs: 90_000,
    },
    cleanup: async (options: TestUninstallOptions = {}) => {
      await revokePeeringToken(provider.kc, token.tokenId);
      await uninstallClusters([b, a], options);
    },
  };
}

/**
 * The `TunnelSides` the tunnel steps take for the out-of-band peering `record` of `consumer` with
 * `provider`: the provider's side written with the consumer's own identity (the identity Secret
 * the peering stores on the consumer), exactly as a `Tunnel` resource writes it.
 */
export async function tunnelSidesOf(
  consumer: { readonly kc: InstalledCluster["kc"]; readonly clusterId: string; readonly name: string },
  provider: { readonly clusterId: string; readonly name: string },
  record: PeeringRecord,
): Promise<TunnelSides> {
  const identity = loadKubeconfig((await getIdentityKubeconfig(consumer.kc, provider.clusterId))!, "identity");
  return {
    consumer: {
      kc: consumer.kc,
      namespace: SYSTEM_NAMESPACE,
      party: { clusterId: consumer.clusterId, clusterName: consumer.name },
    },
    provider: {
      kc: identity,
      namespace: providerEndpointNamespace("out-of-band", record.tenantNamespace),
      party: { clusterId: provider.clusterId, clusterName: provider.name },
    },
  };
}
