/**
 * An out-of-band peering, consumer -> provider, as the protocol reads. The consumer acts with its
 * own kubeconfig and what the provider handed over (cluster id, auth URL and CA, token); every
 * call on the provider goes through the identity its auth service issues.
 *
 *   1. authentication  consumer signs a CSR with its cluster's identity key; provider's auth
 *                      service checks the token (bound to the first consumer that uses it) and
 *                      returns a certificate for the tenant namespace; consumer stores it
 *   2. negotiation     consumer files a ResourceRequest on the provider; provider's agent answers
 *                      with a ResourceOffer; consumer accepts it
 *   3. virtual node    consumer records the peering for its agent and creates the virtual node,
 *                      which the agent's heartbeat keeps Ready
 *
 * Delete undoes them: the provider's side in one revocation at its auth service, then the
 * consumer's node and records. Every step is idempotent, so a create that was killed half-way
 * converges when it runs again.
 */
import * as k8s from "@kubernetes/client-node";
import type { OfferedResources, ResourceAsk } from "../api/index.js";
import { REMOTE_CLUSTER_LABEL, tenantNamespace } from "../api/index.js";
import {
  forgeIdentityKubeconfig,
  forgeIdentityRequest,
  requestIdentity,
  revokeIdentity,
  waitForAuthService,
} from "../authentication/identity.js";
import { ensureConsumerKey } from "../authentication/consumer-key.js";
import { getClusterIdentity, type ClusterIdentity } from "../cluster/install.js";
import { claimPeering } from "./claim.js";
import { loadKubeconfig, PROBE_TIMEOUT_MS, probeApiServer, readOptional, serverOf } from "../kube/client.js";
import { describeKubeError } from "../kube/errors.js";
import {
  ensureResourceRequest,
  getResourceOffer,
  waitForResourceOffer,
  withdrawResourceRequest,
} from "../negotiation/request.js";
import {
  deleteVirtualNode,
  ensureVirtualNode,
  nodeReadiness,
  resizeVirtualNode,
  waitForNodeReady,
} from "../virtual-node/node.js";
import { deleteConsumerRecords } from "./consumer-records.js";
import {
  ensureIdentitySecret,
  getIdentityKubeconfig,
  heldCertificateOf,
  identitySecretName,
} from "../authentication/stored-identity.js";
import { ensureOutgoingPeering, getOutgoingPeering } from "../virtual-node/outgoing-peering.js";
import type { ProviderHandover } from "./handover.js";
import type { Progress } from "../operation/progress.js";
import { drainVirtualNode } from "../virtual-node/drain.js";
import { describeRevokedIdentity } from "../authentication/revoked.js";
import { defaultVirtualNodeName, type PeeringRecord } from "./peering-plan.js";
import { describeUnreachable, providerUnreachableError, type UnreachableProvider } from "../operation/unreachable.js";
import { parseAuthUrl, probeAuthService } from "../authentication/auth-client.js";
import { TENANT_ROLE } from "../authentication/tenant.js";
import { startDeadline, type Deadline } from "../wait/deadline.js";

/** Everything a peering needs to be created. */
export interface PeeringRequest {
  /** Consumer's kubeconfig. */
  readonly consumerKubeconfig: string;
  readonly provider: ProviderHandover;
  /** What to ask for. */
  readonly resources: ResourceAsk;
  /** Virtual node name. @default `liqo-<provider cluster name>` */
  readonly virtualNodeName?: string;
  /** Extra labels for the virtual node. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Extra taints for the virtual node. */
  readonly taints?: readonly k8s.V1Taint[];
  /** The whole operation's deadline. */
  readonly timeoutMs: number;
  /** URN of the `Peering` resource making it: a second resource for the same pair is refused. */
  readonly owner?: string;
}

/**
 * How long the provider's auth service may stay out of reach before an out-of-band peering gives
 * up: the provider's Cluster is installed by then, so this is the network, and waiting the whole
 * timeout would not change it.
 */
const AUTH_REACH_TIMEOUT_MS = 15_000;

/** Fails fast, naming the endpoint and the way out, when the auth service cannot be reached from here. */
async function ensureAuthServiceReachable(
  authUrl: string,
  authCaPem: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  try {
    await waitForAuthService(authUrl, authCaPem, timeoutMs, signal);
  } catch (error) {
    throw new Error(
      `${(error as Error).message}. Out-of-band peering needs the provider's auth service and API server reachable from where pulumi runs; ` +
        `if only the clusters' gateways can reach each other, peer in-band (approach: "in-band") instead`,
      { cause: error },
    );
  }
}

/** Declared with the decisions about it, which a preview loads without this module. */
export type { PeeringRecord };

/** Creates (or converges) the peering. */
export async function createPeering(request: PeeringRequest, progress: Progress): Promise<PeeringRecord> {
  const consumer = loadKubeconfig(request.consumerKubeconfig, "consumer kubeconfig");
  const deadline = startDeadline(request.timeoutMs);
  const me = await getClusterIdentity(consumer);
  if (!me)
    throw new Error(
      `peering: the consumer cluster at ${serverOf(consumer)} is not installed (create its Cluster resource first)`,
    );

  await claimPeering(consumer, { clusterId: request.provider.clusterId }, request.owner);

  // 1. authentication — consumer signs a CSR with its cluster's key; provider's auth service issues
  // the identity. A repair (node or offer gone, a create retried) keeps the identity it holds.
  const identity =
    (await heldIdentity(consumer, request.provider.clusterId, progress)) ??
    (await authenticate(consumer, me, request, progress, deadline));
  const provider = identity.provider;

  // 2. negotiation — consumer asks the provider (with its identity); provider's agent offers.
  const requestName = `from-${me.clusterId}`;
  progress.step(2, 3, `negotiation: waiting for an offer from provider ${identity.providerClusterName}`);
  const offer = await negotiate(
    provider,
    {
      tenantNamespace: identity.tenantNamespace,
      name: requestName,
      consumerClusterId: me.clusterId,
      consumerClusterName: me.clusterName,
      resources: request.resources,
    },
    identity.providerClusterName,
    deadline,
  );

  // 3. virtual node — consumer records the peering for its agent and creates the node.
  const virtualNodeName = request.virtualNodeName ?? defaultVirtualNodeName(identity.providerClusterName);
  progress.step(3, 3, `virtual node: creating Node ${virtualNodeName} in consumer ${me.clusterName}`);
  await ensureOutgoingPeering(consumer, {
    providerClusterId: identity.providerClusterId,
    providerClusterName: identity.providerClusterName,
    identitySecret: identitySecretName(identity.providerClusterId),
    tenantNamespace: identity.tenantNamespace,
    requestName,
    virtualNodeName,
    // Where the consumer's agent renews the identity before it expires.
    auth: { url: request.provider.authUrl, caPem: request.provider.authCaCert },
  });
  await ensureVirtualNode(consumer, {
    name: virtualNodeName,
    providerClusterId: identity.providerClusterId,
    providerClusterName: identity.providerClusterName,
    resources: offer,
    ...(request.labels ? { labels: request.labels } : {}),
    ...(request.taints ? { taints: request.taints } : {}),
  });
  await waitForNodeReady(consumer, virtualNodeName, deadline.left(), deadline.signal);
  return {
    consumerClusterId: me.clusterId,
    providerClusterId: identity.providerClusterId,
    providerClusterName: identity.providerClusterName,
    tenantNamespace: tenantNamespace(me.clusterId),
    requestName,
    virtualNodeName,
    offer,
    providerApiServerUrl: identity.apiServerUrl,
  };
}

/** An identity on the provider as the steps after authentication use it. */
interface UsableIdentity {
  /** Client for the provider's API server, as the consumer. */
  readonly provider: k8s.KubeConfig;
  readonly providerClusterId: string;
  readonly providerClusterName: string;
  readonly tenantNamespace: string;
  readonly apiServerUrl: string;
}

/**
 * The identity the consumer already holds for this provider, if the provider still accepts it
 * (it reads the consumer's own offer with it): then a repair needs no token and no new
 * certificate. Undefined when there is none, or the provider does not accept it (revoked) or
 * cannot be asked: then the consumer authenticates again.
 */
async function heldIdentity(
  consumer: k8s.KubeConfig,
  providerClusterId: string,
  progress: Progress,
): Promise<UsableIdentity | undefined> {
  const [text, outgoing] = [
    await getIdentityKubeconfig(consumer, providerClusterId),
    await getOutgoingPeering(consumer, providerClusterId),
  ];
  if (!text || !outgoing) return undefined;
  const provider = loadKubeconfig(text, "stored identity");
  const { providerClusterName, tenantNamespace: tenant, requestName } = outgoing.spec;
  // Refused (revoked) or not answering: authentication, which follows, says why in its own words.
  if (
    !(await getResourceOffer(provider, { tenantNamespace: tenant, name: requestName }).then(
      () => true,
      () => false,
    ))
  )
    return undefined;
  progress.step(
    1,
    3,
    `authentication: provider ${providerClusterName} at ${serverOf(provider)} still accepts the identity held for it; not asking for another`,
  );
  return {
    provider,
    providerClusterId,
    providerClusterName,
    tenantNamespace: tenant,
    apiServerUrl: serverOf(provider),
  };
}

/** Asks the provider's auth service for an identity with the token, and stores it in the consumer. */
async function authenticate(
  consumer: k8s.KubeConfig,
  me: ClusterIdentity,
  request: PeeringRequest,
  progress: Progress,
  deadline: Deadline,
): Promise<UsableIdentity> {
  progress.step(1, 3, `authentication: asking ${request.provider.authUrl} for an identity`);
  await ensureAuthServiceReachable(
    request.provider.authUrl,
    request.provider.authCaCert,
    Math.min(AUTH_REACH_TIMEOUT_MS, deadline.left()),
    deadline.signal,
  );
  const { keyPem, csrPem } = forgeIdentityRequest(me.clusterId, await ensureConsumerKey(consumer));
  const identity = await requestIdentity({
    authUrl: request.provider.authUrl,
    authCaPem: request.provider.authCaCert,
    token: request.provider.token,
    consumerClusterId: me.clusterId,
    consumerClusterName: me.clusterName,
    csrPem,
    timeoutMs: deadline.left(),
    signal: deadline.signal,
    onRetry: (message) => progress.step(1, 3, `authentication: ${message}`),
  });
  const identityKubeconfig = forgeIdentityKubeconfig(identity, keyPem);
  await ensureIdentitySecret(consumer, identity.providerClusterId, identityKubeconfig);
  return { ...identity, provider: loadKubeconfig(identityKubeconfig, "identity issued by the provider") };
}

async function negotiate(
  provider: k8s.KubeConfig,
  spec: Parameters<typeof ensureResourceRequest>[1],
  providerName: string,
  deadline: Deadline,
): Promise<OfferedResources> {
  const generation = await ensureResourceRequest(provider, spec);
  return waitForResourceOffer(
    provider,
    { tenantNamespace: spec.tenantNamespace, name: spec.name, generation, providerName },
    deadline.left(),
    deadline.signal,
  );
}

/** Renegotiates the resources of an existing peering in place: no re-authentication. */
export async function updatePeeringResources(
  consumerKubeconfig: string,
  record: PeeringRecord,
  resources: ResourceAsk,
  timeoutMs: number,
  progress: Progress,
): Promise<PeeringRecord> {
  const consumer = loadKubeconfig(consumerKubeconfig, "consumer kubeconfig");
  const deadline = startDeadline(timeoutMs);
  const identityText = await getIdentityKubeconfig(consumer, record.providerClusterId);
  if (!identityText)
    throw new Error(
      `negotiation: no identity for provider ${record.providerClusterName} is stored in the consumer at ${serverOf(consumer)}; the peering must be recreated`,
    );
  const provider = loadKubeconfig(identityText, "stored identity");
  progress.step(1, 2, `negotiation: renegotiating with provider ${record.providerClusterName}`);
  const me = await getClusterIdentity(consumer);
  const offer = await negotiate(
    provider,
    {
      tenantNamespace: record.tenantNamespace,
      name: record.requestName,
      consumerClusterId: record.consumerClusterId,
      consumerClusterName: me?.clusterName ?? record.consumerClusterId,
      resources,
    },
    record.providerClusterName,
    deadline,
  );
  progress.step(2, 2, `virtual node: resizing Node ${record.virtualNodeName}`);
  await resizeVirtualNode(consumer, record.virtualNodeName, offer);
  return { ...record, offer };
}

/** What `readPeering` finds: the drift between the record and the clusters. */
export interface PeeringDrift {
  /** Problems found; empty when the peering is as recorded. */
  readonly problems: string[];
  /** The offer the provider currently makes, if it could be read. */
  readonly offer?: OfferedResources;
  /** Neither the virtual node nor the identity exists any more: the peering is gone. */
  readonly gone: boolean;
}

/**
 * Reads the live peering and reports drift (identity revoked or gone, offer withdrawn, node missing
 * or not Ready). A provider that refuses the identity is drift, reported first since it is the
 * cause of the rest, never a failure of the read: the next `pulumi up` authenticates again.
 */
export async function readPeering(consumerKubeconfig: string, record: PeeringRecord): Promise<PeeringDrift> {
  const consumer = loadKubeconfig(consumerKubeconfig, "consumer kubeconfig");
  const problems: string[] = [];
  // Only "not found" counts as missing: an unreachable cluster fails the read instead.
  const node = await readOptional(() =>
    consumer.makeApiClient(k8s.CoreV1Api).readNode({ name: record.virtualNodeName }),
  );
  const readiness = nodeReadiness(node);
  if (!readiness.ready) problems.push(`virtual node ${record.virtualNodeName}: ${readiness.state}`);
  const identityText = await getIdentityKubeconfig(consumer, record.providerClusterId);
  if (!identityText)
    return {
      problems: [...problems, `identity for provider ${record.providerClusterName} is gone`],
      gone: node === undefined,
    };
  const provider = loadKubeconfig(identityText, "stored identity");
  const location = { tenantNamespace: record.tenantNamespace, name: record.requestName };
  const offer = await getResourceOffer(provider, location).catch((error: unknown) => {
    const call = `reading ResourceOffer ${location.tenantNamespace}/${location.name}`;
    const revoked = describeRevokedIdentity(error, {
      providerName: record.providerClusterName,
      endpoint: serverOf(provider),
      call,
    });
    problems.unshift(
      revoked ??
        `provider ${record.providerClusterName} could not be read with the identity (${call} at ${serverOf(provider)}): ${describeKubeError(error)}`,
    );
    return undefined;
  });
  if (!offer && problems.length === 0)
    problems.push(`the offer of provider ${record.providerClusterName} was withdrawn`);
  return { problems, ...(offer ? { offer: offer.spec.resources } : {}), gone: false };
}

/** How delete treats an unreachable provider. */
export interface DeleteOptions {
  /** Clean the consumer side even if the provider cannot be reached, and say what was left there. */
  readonly force: boolean;
  readonly timeoutMs: number;
}

/**
 * What a peering leaves on a provider it could not unpeer from: the tenant namespace and all in it,
 * the RBAC that still lets the identity in (a client certificate cannot be revoked), and the CSRs.
 */
export function peeringLeftOnProvider(record: PeeringRecord, requestWithdrawn: boolean): string[] {
  const ns = record.tenantNamespace;
  return [
    `tenant namespace ${ns}`,
    `Role and RoleBinding ${ns}/${TENANT_ROLE} (the identity's rights: its certificate stays valid until it expires)`,
    requestWithdrawn
      ? `ResourceOffer ${ns}/${record.requestName} (the ResourceRequest was withdrawn)`
      : `ResourceRequest ${ns}/${record.requestName} and its ResourceOffer`,
    `CertificateSigningRequests labelled ${REMOTE_CLUSTER_LABEL}=${record.consumerClusterId}`,
  ];
}

/**
 * Why the provider cannot be unpeered from, found in one connection attempt to each endpoint the
 * unpeering needs (its auth service revokes, its API server removes), or undefined when both answer.
 */
async function findUnreachable(
  provider: k8s.KubeConfig,
  handover: Pick<ProviderHandover, "authUrl" | "authCaCert">,
  providerName: string,
): Promise<UnreachableProvider | undefined> {
  const [api, auth] = await Promise.all([
    probeApiServer(provider),
    probeAuthService(parseAuthUrl(handover.authUrl, "unpeer"), handover.authCaCert, PROBE_TIMEOUT_MS).then(
      () => undefined,
      (error: Error) => error.message,
    ),
  ]);
  if (api) return { step: "unpeer", providerName, endpoint: `API server ${serverOf(provider)}`, cause: api };
  return auth ? { step: "unpeer", providerName, endpoint: `auth service ${handover.authUrl}`, cause: auth } : undefined;
}

/**
 * Unpeers. First the provider's side, in one call to its auth service: revoking the identity
 * removes the tenant namespace with the request, the RBAC and the CSR. Then the consumer's virtual
 * node and records. A short probe of the provider's endpoints comes first: with either out of
 * reach it fails at once naming it and changes nothing, unless `force`: then it withdraws the
 * request if the API server answers, cleans the consumer, and returns what it left on the provider.
 */
export async function deletePeering(
  consumerKubeconfig: string,
  record: PeeringRecord,
  handover: Pick<ProviderHandover, "authUrl" | "authCaCert">,
  options: DeleteOptions,
  progress: Progress,
): Promise<string[]> {
  const consumer = loadKubeconfig(consumerKubeconfig, "consumer kubeconfig");
  const identityText = await getIdentityKubeconfig(consumer, record.providerClusterId);
  const leftOnProvider: string[] = [];
  if (identityText) {
    const provider = loadKubeconfig(identityText, "stored identity");
    const held = heldCertificateOf(identityText, "stored identity");
    const unreachable = await findUnreachable(provider, handover, record.providerClusterName);
    if (unreachable && !options.force) throw providerUnreachableError(unreachable, "Peering");
    await drainBeforeUnpeering(consumer, record, options, progress, unreachable !== undefined);
    if (!unreachable)
      progress.step(
        2,
        3,
        `authentication: revoking the identity at ${handover.authUrl} (provider ${record.providerClusterName})`,
      );
    const failure = unreachable
      ? describeUnreachable(unreachable)
      : await revokeIdentity({
          authUrl: handover.authUrl,
          authCaPem: handover.authCaCert,
          ...held,
          timeoutMs: options.timeoutMs,
          onRetry: (message) => progress.step(2, 3, `authentication: ${message}`),
        }).then(
          () => undefined,
          (error: Error) => error.message,
        );
    if (failure) {
      if (!options.force)
        throw new Error(
          `unpeer from provider ${record.providerClusterName} (auth service ${handover.authUrl}) failed: ${failure}; nothing ` +
            `was changed; set force: true on the Peering to clean the consumer side anyway`,
        );
      progress.step(2, 3, `unpeer: ${failure}; leaving the provider's side (force)`);
      // The request can still be withdrawn when the API server answers (only the auth service is out of reach).
      const apiAnswers = !unreachable?.endpoint.startsWith("API server");
      const withdrawn =
        apiAnswers &&
        (await withdrawResourceRequest(provider, {
          tenantNamespace: record.tenantNamespace,
          name: record.requestName,
        }).then(
          () => true,
          () => false,
        ));
      leftOnProvider.push(...peeringLeftOnProvider(record, withdrawn));
    }
  }
  progress.step(3, 3, `virtual node: removing Node ${record.virtualNodeName} and the consumer's records`);
  await deleteVirtualNode(consumer, record.virtualNodeName);
  await deleteConsumerRecords(consumer, record.providerClusterId);
  return leftOnProvider;
}

/**
 * Drains the peering's virtual node (step 1 of 3): its offloaded pods are removed
 * from the provider and then from the consumer while the identity can still reach the provider;
 * with the provider gone (force), they are removed from the consumer only.
 */
async function drainBeforeUnpeering(
  consumer: k8s.KubeConfig,
  record: PeeringRecord,
  options: DeleteOptions,
  progress: Progress,
  providerGone: boolean,
): Promise<void> {
  progress.step(1, 3, `virtual node: draining Node ${record.virtualNodeName} of its offloaded pods`);
  await drainVirtualNode(consumer, record.virtualNodeName, { timeoutMs: options.timeoutMs, providerGone });
}
