/**
 * An in-band peering, with both clusters' kubeconfigs: the control planes need not reach each
 * other, only the gateways do. The tunnel comes first, negotiated directly with both API servers;
 * then the consumer's agent authenticates and negotiates through it, with the provider's auth
 * service and API server at their addresses inside the tunnel.
 *
 *   1. network fabric  both TunnelEndpoints, written with each cluster's own kubeconfig
 *   2. authentication  a one-time token recorded on the provider and handed to the consumer's
 *                      agent in a Secret; the agent makes its key and CSR and gets the identity
 *                      through the tunnel (its kubeconfig points at the API server there)
 *   3. negotiation     the agent files the ResourceRequest through the tunnel; the offer answers
 *   4. virtual node    as out-of-band; the agent's heartbeat follows offers through the tunnel
 *
 * Delete undoes them, the provider's side directly with its kubeconfig (the tenant and its RBAC),
 * then the consumer's node and records, then the tunnel. Every step is idempotent.
 */
import { joinHostPort } from "../net/endpoint.js";
import { drainVirtualNode } from "../virtual-node/drain.js";
import * as k8s from "@kubernetes/client-node";
import {
  AUTH_TLS_SECRET,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  SYSTEM_NAMESPACE,
  tenantNamespace,
  type OfferedResources,
  type ResourceAsk,
} from "../api/index.js";
import { removeTenant } from "../authentication/tenant.js";
import {
  ensurePeeringTokenSecret,
  forgePeeringToken,
  parsePeeringToken,
  revokePeeringToken,
} from "../authentication/tokens.js";
import { AUTH_SERVICE_TLS_NAME, getClusterIdentity, type ClusterIdentity } from "../cluster/install.js";
import {
  deleteOptional,
  describeFailure,
  ensureObject,
  loadKubeconfig,
  readOptional,
  serverOf,
} from "../kube/client.js";
import { ensureTunnel, readTunnel, type TunnelRecord, type TunnelSides } from "../network-fabric/tunnel.js";
import { deleteTunnel } from "../network-fabric/tunnel-delete.js";
import { roleOf, tunnelAddress, tunnelLinkCidr, type TunnelSettings } from "../network-fabric/tunnel-plan.js";
import { deleteVirtualNode, ensureVirtualNode, nodeReadiness, waitForNodeReady } from "../virtual-node/node.js";
import { startDeadline, type Deadline } from "../wait/deadline.js";
import { poll } from "../wait/poll.js";
import { claimPeering } from "./claim.js";
import { defaultVirtualNodeName, type PeeringRecord } from "./peering-plan.js";
import { deleteConsumerRecords } from "./consumer-records.js";
import {
  ensureOutgoingPeering,
  getOutgoingPeering,
  writeOutgoingPeeringStatus,
} from "../virtual-node/outgoing-peering.js";
import { getIdentityKubeconfig, identitySecretName } from "../authentication/stored-identity.js";
import { withinStep, type Progress } from "../operation/progress.js";

/** Name the provider's API server certificate is verified under inside the tunnel: every API server's certificate carries it. */
export const API_SERVER_TLS_NAME = "kubernetes.default";

/** Everything an in-band peering needs. */
export interface InBandPeeringRequest {
  readonly consumerKubeconfig: string;
  readonly providerKubeconfig: string;
  /** Port of the provider's auth service (where its agent listens). */
  readonly authPort: number;
  /** The tunnel's settings. */
  readonly tunnel: TunnelSettings;
  readonly resources: ResourceAsk;
  readonly virtualNodeName?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly k8s.V1Taint[];
  /** The whole operation's deadline. */
  readonly timeoutMs: number;
  /** URN of the `Peering` resource making it: a second resource for the same pair is refused. */
  readonly owner?: string;
}

/** A created in-band peering: the peering's record and both gateways' reports. */
export interface InBandPeeringRecord extends PeeringRecord {
  readonly tunnel: TunnelRecord;
}

/** The consumer's Secret handing the one-time token to its agent. */
export const inBandTokenSecretName = (providerClusterId: string): string => `in-band-token-${providerClusterId}`;

/** How long a one-time token is accepted: long enough for the agent's retries, short enough not to linger. */
const ONE_TIME_TOKEN_TTL_MS = 30 * 60_000;

interface Parties {
  readonly consumer: k8s.KubeConfig;
  readonly provider: k8s.KubeConfig;
  readonly me: ClusterIdentity;
  readonly them: ClusterIdentity;
  readonly sides: TunnelSides;
}

async function partiesOf(consumerKubeconfig: string, providerKubeconfig: string): Promise<Parties> {
  const consumer = loadKubeconfig(consumerKubeconfig, "consumer kubeconfig");
  const provider = loadKubeconfig(providerKubeconfig, "provider kubeconfig");
  const [me, them] = [await getClusterIdentity(consumer), await getClusterIdentity(provider)];
  if (!me)
    throw new Error(
      `peering: the consumer cluster at ${serverOf(consumer)} is not installed (create its Cluster resource first)`,
    );
  if (!them)
    throw new Error(
      `peering: the provider cluster at ${serverOf(provider)} is not installed (create its Cluster resource first)`,
    );
  if (me.clusterId === them.clusterId)
    throw new Error(`peering: consumer and provider are the same cluster (${me.clusterName}, ${me.clusterId})`);
  const sides: TunnelSides = {
    consumer: {
      kc: consumer,
      namespace: SYSTEM_NAMESPACE,
      party: { clusterId: me.clusterId, clusterName: me.clusterName },
    },
    provider: {
      kc: provider,
      namespace: SYSTEM_NAMESPACE,
      party: { clusterId: them.clusterId, clusterName: them.clusterName },
    },
  };
  return { consumer, provider, me, them, sides };
}

/** The provider's address inside the tunnel. */
export function providerTunnelIp(
  parties: Pick<Parties, "me" | "them">,
  settings: Pick<TunnelSettings, "server">,
): string {
  return tunnelAddress(
    tunnelLinkCidr(parties.me.clusterId, parties.them.clusterId),
    roleOf("provider", settings),
  ).split("/")[0]!;
}

/** Hands a one-time token to the consumer's agent, unless it already holds an identity. Resolves the token's id, if one was made. */
async function handOverToken(p: Parties): Promise<string | undefined> {
  if (await getIdentityKubeconfig(p.consumer, p.them.clusterId)) return undefined;
  const token = forgePeeringToken();
  await ensurePeeringTokenSecret(p.provider, {
    tokenId: token.tokenId,
    secretHash: token.secretHash,
    expiresAt: new Date(Date.now() + ONE_TIME_TOKEN_TTL_MS),
  });
  const name = inBandTokenSecretName(p.them.clusterId);
  await ensureObject(p.consumer, {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: {
      name,
      namespace: SYSTEM_NAMESPACE,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: p.them.clusterId },
    },
    data: { token: Buffer.from(token.token, "utf8").toString("base64") },
  } as k8s.V1Secret).catch(
    describeFailure(
      `authentication: handing the one-time token to the consumer's agent (Secret ${SYSTEM_NAMESPACE}/${name})`,
      serverOf(p.consumer),
    ),
  );
  return token.tokenId;
}

async function authCaOf(provider: k8s.KubeConfig): Promise<string> {
  const secret = await readOptional(() =>
    provider.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ name: AUTH_TLS_SECRET, namespace: SYSTEM_NAMESPACE }),
  ).catch(
    describeFailure(
      `authentication: reading the auth service's CA (Secret ${SYSTEM_NAMESPACE}/${AUTH_TLS_SECRET})`,
      serverOf(provider),
    ),
  );
  const ca = Buffer.from(secret?.data?.["ca.crt"] ?? "", "base64").toString("utf8");
  if (!ca)
    throw new Error(
      `authentication: the provider at ${serverOf(provider)} has no auth service certificate yet (is its Cluster resource installed?)`,
    );
  return ca;
}

/**
 * A `Failed` status of an earlier run would end this run's wait at once, though the cause may be
 * fixed by now: it is set back to pending, which the agent's watch takes as the cue to try again.
 */
async function askAgainIfFailed(p: Parties): Promise<void> {
  const peering = await getOutgoingPeering(p.consumer, p.them.clusterId);
  if (peering?.status?.phase === "Failed")
    await writeOutgoingPeeringStatus(p.consumer, peering, {
      phase: "Pending",
      observedGeneration: 0,
      message: "asked again by pulumi up",
    });
}

/** Waits until the consumer's agent reports the offer for the OutgoingPeering's current generation (or that it failed for good). */
function waitForInBandOffer(p: Parties, deadline: Deadline): Promise<OfferedResources> {
  return poll(
    {
      step: "negotiation",
      object: `offer of provider ${p.them.clusterName} through the tunnel, reported by the agent of consumer ${p.me.clusterName}`,
      endpoint: serverOf(p.consumer),
    },
    { timeoutMs: deadline.left(), intervalMs: 500, signal: deadline.signal },
    async () => {
      const peering = await getOutgoingPeering(p.consumer, p.them.clusterId);
      const status = peering?.status;
      const current = peering && status && status.observedGeneration === peering.metadata.generation;
      if (current && status.phase === "Negotiated" && status.offer) return { done: true, value: status.offer };
      if (current && status.phase === "Failed")
        return {
          failed: true,
          reason: `the agent of ${p.me.clusterName} reports: ${status.message ?? "no reason given"}`,
        };
      return {
        done: false,
        state: status
          ? `${status.phase ?? "no phase"}${status.message ? `: ${status.message}` : ""}`
          : "the agent has not reported yet",
      };
    },
  );
}

/** Creates (or converges) the in-band peering. */
export async function createInBandPeering(
  request: InBandPeeringRequest,
  progress: Progress,
): Promise<InBandPeeringRecord> {
  const p = await partiesOf(request.consumerKubeconfig, request.providerKubeconfig);
  const deadline = startDeadline(request.timeoutMs);
  await claimPeering(p.consumer, { clusterId: p.them.clusterId, clusterName: p.them.clusterName }, request.owner);

  progress.step(
    1,
    4,
    `network fabric: tunnel between the gateways of ${p.me.clusterName} and ${p.them.clusterName} (${request.tunnel.server} ` +
      `serves${request.tunnel.serverAddress === undefined ? "" : ` at ${joinHostPort(request.tunnel.serverAddress, request.tunnel.port)}`})`,
  );
  const apiPort = Number(new URL(p.them.apiServerUrl).port || "443");
  // The provider's gateway serves its API server and auth service on its tunnel address, at the
  // ports the consumer's agent dials, wherever in the provider's cluster they run.
  const sides: TunnelSides = {
    ...p.sides,
    provider: { ...p.sides.provider, inBandPorts: { apiServer: apiPort, auth: request.authPort } },
  };
  const tunnel = await ensureTunnel(sides, request.tunnel, deadline.left(), withinStep(progress, 1, 4));

  const ip = providerTunnelIp(p, request.tunnel);
  const authUrl = `https://${ip}:${request.authPort}`;
  progress.step(
    2,
    4,
    `authentication: the agent of ${p.me.clusterName} asks ${authUrl} (inside the tunnel) for an identity`,
  );
  const tokenId = await handOverToken(p);
  const virtualNodeName = request.virtualNodeName ?? defaultVirtualNodeName(p.them.clusterName);
  const spec = {
    providerClusterId: p.them.clusterId,
    providerClusterName: p.them.clusterName,
    identitySecret: identitySecretName(p.them.clusterId),
    tenantNamespace: tenantNamespace(p.me.clusterId),
    requestName: `from-${p.me.clusterId}`,
    virtualNodeName,
    inBand: {
      authUrl,
      authServerName: AUTH_SERVICE_TLS_NAME,
      authCaPem: await authCaOf(p.provider),
      apiServerUrl: `https://${ip}:${apiPort}`,
      apiServerName: API_SERVER_TLS_NAME,
      tokenSecret: inBandTokenSecretName(p.them.clusterId),
      resources: request.resources,
    },
  };
  await ensureOutgoingPeering(p.consumer, spec);
  await askAgainIfFailed(p);

  progress.step(3, 4, `negotiation: waiting for an offer from provider ${p.them.clusterName} through the tunnel`);
  const offer = await waitForInBandOffer(p, deadline);
  // The identity is issued: the one-time token has no further use.
  if (tokenId) await revokePeeringToken(p.provider, tokenId);

  progress.step(4, 4, `virtual node: creating Node ${virtualNodeName} in consumer ${p.me.clusterName}`);
  await ensureVirtualNode(p.consumer, {
    name: virtualNodeName,
    providerClusterId: p.them.clusterId,
    providerClusterName: p.them.clusterName,
    resources: offer,
    ...(request.labels ? { labels: request.labels } : {}),
    ...(request.taints ? { taints: request.taints } : {}),
  });
  await waitForNodeReady(p.consumer, virtualNodeName, deadline.left(), deadline.signal);
  return {
    consumerClusterId: p.me.clusterId,
    providerClusterId: p.them.clusterId,
    providerClusterName: p.them.clusterName,
    tenantNamespace: spec.tenantNamespace,
    requestName: spec.requestName,
    virtualNodeName,
    offer,
    providerApiServerUrl: spec.inBand.apiServerUrl,
    tunnel,
  };
}

/** What `readInBandPeering` finds. */
export interface InBandDrift {
  readonly problems: string[];
  readonly offer?: OfferedResources;
  /** Neither the virtual node nor the consumer's records exist any more. */
  readonly gone: boolean;
}

/** Reads the live in-band peering: the node, the agent's report and both gateways. */
export async function readInBandPeering(
  consumerKubeconfig: string,
  providerKubeconfig: string,
  record: PeeringRecord,
  tunnel: TunnelSettings,
): Promise<InBandDrift> {
  const p = await partiesOf(consumerKubeconfig, providerKubeconfig);
  const problems: string[] = [];
  const node = await readOptional(() =>
    p.consumer.makeApiClient(k8s.CoreV1Api).readNode({ name: record.virtualNodeName }),
  );
  const readiness = nodeReadiness(node);
  if (!readiness.ready) problems.push(`virtual node ${record.virtualNodeName}: ${readiness.state}`);
  const peering = await getOutgoingPeering(p.consumer, record.providerClusterId);
  if (!peering)
    return {
      problems: [...problems, `OutgoingPeering to ${record.providerClusterName} is gone`],
      gone: node === undefined,
    };
  if (peering.status?.phase !== "Negotiated")
    problems.push(
      `agent: ${peering.status?.phase ?? "no report"}${peering.status?.message ? `: ${peering.status.message}` : ""}`,
    );
  problems.push(...(await readTunnel(p.sides, tunnel)).problems.map((problem) => `tunnel: ${problem}`));
  return { problems, ...(peering.status?.offer ? { offer: peering.status.offer } : {}), gone: false };
}

/**
 * Unpeers: the provider's tenant (directly), the consumer's node and records, then the tunnel.
 * Needs no record: everything is found from the two clusters, so a create that failed half-way
 * is cleaned up as fully as a finished one.
 */
export async function deleteInBandPeering(
  consumerKubeconfig: string,
  providerKubeconfig: string,
  virtualNodeName: string | undefined,
  timeoutMs: number,
  progress: Progress,
): Promise<void> {
  const p = await partiesOf(consumerKubeconfig, providerKubeconfig);
  const record = {
    virtualNodeName: virtualNodeName ?? defaultVirtualNodeName(p.them.clusterName),
    providerClusterId: p.them.clusterId,
  };
  // The virtual node is drained first, while the agent can still remove its pods from the provider.
  progress.step(1, 4, `virtual node: draining Node ${record.virtualNodeName} of its offloaded pods`);
  await drainVirtualNode(p.consumer, record.virtualNodeName, { timeoutMs });
  progress.step(
    2,
    4,
    `authentication: removing consumer ${p.me.clusterName}'s tenant from provider ${p.them.clusterName} at ${serverOf(p.provider)}`,
  );
  await removeTenant(p.provider, p.me.clusterId, { timeoutMs });
  const tokenSecret = inBandTokenSecretName(p.them.clusterId);
  const core = p.consumer.makeApiClient(k8s.CoreV1Api);
  const leftover = await readOptional(() =>
    core.readNamespacedSecret({ name: tokenSecret, namespace: SYSTEM_NAMESPACE }),
  );
  const unused = parsePeeringToken(Buffer.from(leftover?.data?.["token"] ?? "", "base64").toString("utf8"));
  if (unused) await revokePeeringToken(p.provider, unused.tokenId);
  progress.step(3, 4, `virtual node: removing Node ${record.virtualNodeName} and the consumer's records`);
  await deleteVirtualNode(p.consumer, record.virtualNodeName);
  await deleteConsumerRecords(p.consumer, record.providerClusterId);
  await deleteOptional(() => core.deleteNamespacedSecret({ name: tokenSecret, namespace: SYSTEM_NAMESPACE })).catch(
    describeFailure(`cleanup: deleting Secret ${SYSTEM_NAMESPACE}/${tokenSecret}`, serverOf(p.consumer)),
  );
  progress.step(4, 4, `network fabric: removing the tunnel`);
  await deleteTunnel(p.sides, { force: false, timeoutMs }, withinStep(progress, 4, 4));
}
