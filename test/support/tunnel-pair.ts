/**
 * A peered pair for the tunnel suites: consumer `b` peered out-of-band with provider `a`, and the
 * `TunnelSides` the tunnel steps take, the provider's side written with b's own identity (the
 * identity Secret the peering stores on b), exactly as a `Tunnel` resource writes it.
 */
import type { ResourceAsk } from "../../core/api/crds.js";
import { ensurePeeringTokenSecret, forgePeeringToken } from "../../core/authentication/tokens.js";
import type { TunnelSides } from "../../core/network-fabric/tunnel.js";
import { deleteTunnel } from "../../core/network-fabric/tunnel-delete.js";
import { createPeering, deletePeering, type PeeringRecord } from "../../core/peering/peering.js";
import { progressTo } from "../../core/operation/progress.js";
import { clusterOf, type ClusterState, type LabState } from "../../local-cluster/lab.js";
import { installForPeering, type InstalledCluster } from "../../harness/install.js";
import { allOrFirstFailure } from "../../harness/settle.js";
import { tunnelSidesOf } from "../../harness/peering-pair.js";

/** Progress that goes nowhere. */
export const quietProgress = progressTo(() => undefined);

/** A peered pair, b consuming from a, with what the tunnel steps need. */
export interface Pair {
  readonly a: ClusterState;
  readonly b: ClusterState;
  readonly provider: InstalledCluster;
  readonly consumer: InstalledCluster;
  readonly record: PeeringRecord;
  /** Both sides; `sides.provider.kc` is b's identity on a. */
  readonly sides: TunnelSides;
}

/** Installs a and b of `lab` (as `Cluster`s do, unless the lab runs a host agent) and peers b with a out-of-band. */
export async function peerPair(
  lab: LabState,
  options: { readonly externalCidr?: string; readonly resources?: ResourceAsk } = {},
): Promise<Pair> {
  const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
  const [provider, consumer] = await allOrFirstFailure([installForPeering(a, options), installForPeering(b, options)]);
  const token = forgePeeringToken();
  await ensurePeeringTokenSecret(provider.kc, { tokenId: token.tokenId, secretHash: token.secretHash });
  const record = await createPeering(
    {
      consumerKubeconfig: consumer.kubeconfig,
      provider: { clusterId: provider.clusterId, authUrl: a.authUrl, authCaCert: provider.caPem, token: token.token },
      resources: options.resources ?? { pods: 10 },
      timeoutMs: 90_000,
    },
    quietProgress,
  );
  const sides = await tunnelSidesOf({ ...consumer, name: "b" }, { ...provider, name: "a" }, record);
  return { a, b, provider, consumer, record, sides };
}

/** Removes the pair's tunnel (if any) and its peering. */
export async function unpeerPair(pair: Pair): Promise<void> {
  await deleteTunnel(pair.sides, { force: false, timeoutMs: 60_000 }, quietProgress).catch(() => undefined);
  await deletePeering(
    pair.consumer.kubeconfig,
    pair.record,
    { authUrl: pair.a.authUrl, authCaCert: pair.provider.caPem },
    { force: true, timeoutMs: 30_000 },
    quietProgress,
  );
}
