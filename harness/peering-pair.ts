/**
 * Two clusters of a lab made ready to peer, as their `Cluster` and `PeeringToken` resources would:
 * both installed, a token recorded on the provider, and the request a consumer would make with it.
 */
import { readFileSync } from "node:fs";
import type { ClusterState } from "../local-cluster/lab.js";
import { ensurePeeringTokenSecret, forgePeeringToken, revokePeeringToken } from "../provider/authentication/tokens.js";
import type { ProviderHandover } from "../provider/peering/handover.js";
import type { PeeringRequest } from "../provider/peering/peering.js";
import { installForPeering, uninstallClusters, type InstalledCluster } from "./install.js";
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
  cleanup(): Promise<void>;
}

/** Installs `a` (provider) and `b` (consumer) and records a token on `a`. */
export async function preparePeering(
  a: ClusterState,
  b: ClusterState,
  resources: PeeringRequest["resources"],
): Promise<PeeringPair> {
  const [provider, consumer] = await allOrFirstFailure([installForPeering(a), installForPeering(b)]);
  const token = forgePeeringToken();
  await ensurePeeringTokenSecret(provider.kc, { tokenId: token.tokenId, secretHash: token.secretHash });
  const consumerKubeconfig = readFileSync(b.kubeconfig, "utf8");
  const auth = { authUrl: a.authUrl, authCaCert: provider.caPem };
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
    cleanup: async () => {
      await revokePeeringToken(provider.kc, token.tokenId);
      await uninstallClusters([b, a]);
    },
  };
}
