/**
 * In-band peering, the consumer's agent's part: the provider's auth service and API server are
 * reachable only through the tunnel, so the agent (which runs in the cluster, beside its gateway)
 * authenticates and negotiates itself, with what its OutgoingPeering's `inBand` says. Each pass:
 *
 *   authentication  no identity yet: sign a CSR with the cluster's key, present the one-time
 *                   token to the auth service inside the tunnel, store the identity (pointing at
 *                   the API server inside the tunnel) and delete the token
 *   negotiation     file the ResourceRequest with the identity and report the offer answering it
 *
 * The key is the consumer cluster's own and never leaves it; the status says how far it got. A
 * peering whose step fails (the tunnel not up yet, the auth service refusing) is tried again with
 * the agent's backoff (backoff.ts), its own, so that it neither floods the auth service nor holds
 * back the others; the reason is reported when it changes and at each step of the backoff.
 */
import * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE, type OutgoingPeering } from "../core/api/index.js";
import { ensureConsumerKey } from "../core/authentication/consumer-key.js";
import { forgeIdentityKubeconfig, forgeIdentityRequest, requestIdentity } from "../core/authentication/identity.js";
import { getClusterIdentity, type ClusterIdentity } from "../core/cluster/install.js";
import { deleteOptional, loadKubeconfig, readOptional } from "../core/kube/client.js";
import { describeKubeError } from "../core/kube/errors.js";
import { ensureResourceRequest, getResourceOffer } from "../core/negotiation/request.js";
import { ensureIdentitySecret, getIdentityKubeconfig } from "../core/authentication/stored-identity.js";
import { listOutgoingPeerings, writeOutgoingPeeringStatus } from "../core/virtual-node/outgoing-peering.js";
import type { WaitFailedError } from "../core/wait/poll.js";
import { AGENT_BACKOFF, Backoff, type BackoffPolicy } from "./backoff.js";
import type { Reporter } from "./reporter.js";

/**
 * How long one pass may try the auth service before reporting and retrying on the next: longer
 * than the service waits for its signer (CERTIFICATE_WAIT_MS), so that its reason arrives here.
 */
const AUTH_ATTEMPT_MS = 30_000;

/**
 * The agent's backoff with a lower cap: what an in-band peering waits on most (its tunnel) comes
 * up within seconds, and a 30 s pause would be most of a `pulumi up`'s wait.
 */
const IN_BAND_BACKOFF: BackoffPolicy = { ...AGENT_BACKOFF, maxMs: 10_000 };

/** The backoff of each in-band peering that failed lately, by its uid. */
const retries = new Map<string, Backoff>();

/** The identity for the peering's provider: the stored one, or one obtained now through the tunnel. */
async function ensureInBandIdentity(
  kc: k8s.KubeConfig,
  me: ClusterIdentity,
  peering: OutgoingPeering,
  reporter: Reporter,
): Promise<k8s.KubeConfig> {
  const { providerClusterId } = peering.spec;
  const access = peering.spec.inBand!;
  const stored = await getIdentityKubeconfig(kc, providerClusterId);
  if (stored) return loadKubeconfig(stored, `Secret ${SYSTEM_NAMESPACE}/${peering.spec.identitySecret}`);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const secret = await readOptional(() =>
    core.readNamespacedSecret({ name: access.tokenSecret, namespace: SYSTEM_NAMESPACE }),
  );
  const token = Buffer.from(secret?.data?.["token"] ?? "", "base64").toString("utf8");
  if (!token)
    throw new Error(
      `authentication: no identity yet and no token in Secret ${SYSTEM_NAMESPACE}/${access.tokenSecret} (re-run pulumi up to hand a new one over)`,
    );
  const { keyPem, csrPem } = forgeIdentityRequest(me.clusterId, await ensureConsumerKey(kc));
  const identity = await requestIdentity({
    authUrl: access.authUrl,
    authCaPem: access.authCaPem,
    authServerName: access.authServerName,
    token,
    consumerClusterId: me.clusterId,
    consumerClusterName: me.clusterName,
    csrPem,
    timeoutMs: AUTH_ATTEMPT_MS,
    onRetry: (message) => reporter.info(`in-band peering with ${peering.spec.providerClusterName}: ${message}`),
  });
  const kubeconfig = forgeIdentityKubeconfig(identity, keyPem, {
    server: access.apiServerUrl,
    tlsServerName: access.apiServerName,
  });
  await ensureIdentitySecret(kc, providerClusterId, kubeconfig);
  // One-time: the token has done its work, and an identity now stands for the consumer.
  await deleteOptional(() => core.deleteNamespacedSecret({ name: access.tokenSecret, namespace: SYSTEM_NAMESPACE }));
  return loadKubeconfig(kubeconfig, "identity issued in-band");
}

/**
 * One pass over this cluster's in-band peerings that have not reached their current generation's
 * offer. Resolves how many are still pending: they wait on the provider, which no watch here sees.
 */
export async function advanceInBandPeerings(
  kc: k8s.KubeConfig,
  reporter: Reporter,
  now: () => number = Date.now,
): Promise<number> {
  const pending = (await listOutgoingPeerings(kc)).filter(
    (p) =>
      p.spec.inBand && !(p.status?.observedGeneration === p.metadata.generation && p.status?.phase === "Negotiated"),
  );
  const uidOf = (p: OutgoingPeering): string => p.metadata.uid ?? p.metadata.name!;
  for (const uid of retries.keys()) if (!pending.some((p) => uidOf(p) === uid)) retries.delete(uid);
  // Most passes find nothing to do: the cluster's identity is read only when there is.
  const me = pending.length > 0 ? await getClusterIdentity(kc) : undefined;
  if (!me) return 0;
  for (const peering of pending) {
    const access = peering.spec.inBand!;
    const generation = peering.metadata.generation!;
    const provider = peering.spec.providerClusterName;
    const backoff = retries.get(uidOf(peering)) ?? new Backoff(`in-band peering with ${provider}`, IN_BAND_BACKOFF);
    if (now() < backoff.dueAt) continue;
    try {
      const identity = await ensureInBandIdentity(kc, me, peering, reporter);
      const location = { tenantNamespace: peering.spec.tenantNamespace, name: peering.spec.requestName };
      const requestGeneration = await ensureResourceRequest(identity, {
        ...location,
        consumerClusterId: me.clusterId,
        consumerClusterName: me.clusterName,
        resources: access.resources,
      });
      const offer = await getResourceOffer(identity, location);
      if (offer && offer.spec.requestGeneration >= requestGeneration) {
        await writeOutgoingPeeringStatus(kc, peering, {
          phase: "Negotiated",
          observedGeneration: generation,
          offer: offer.spec.resources,
        });
        reporter.info(
          `in-band peering with ${provider}: offer ${JSON.stringify(offer.spec.resources)} through the tunnel`,
        );
      } else if (peering.status?.phase !== "Negotiating") {
        await writeOutgoingPeeringStatus(kc, peering, {
          phase: "Negotiating",
          observedGeneration: generation,
          message: `waiting for ${provider}'s offer`,
        });
      }
      const recovered = backoff.succeeded();
      if (recovered) reporter.info(recovered);
      retries.delete(uidOf(peering));
    } catch (error) {
      const message = describeKubeError(error);
      const decision = backoff.failed(message, now());
      retries.set(uidOf(peering), backoff);
      if (decision.report) reporter.warn(decision.report);
      // Failed: the provider refused or said that asking again will not help (pulumi stops waiting);
      // Error: anything else, which the next pass may well get past. Both are tried again.
      const phase = (error as Partial<WaitFailedError>).isWaitFailedError ? "Failed" : "Error";
      await writeOutgoingPeeringStatus(kc, peering, { phase, observedGeneration: generation, message }).catch(
        () => undefined,
      );
    }
  }
  return pending.length;
}
