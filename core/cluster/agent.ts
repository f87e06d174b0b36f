/**
 * Whether an agent serves a cluster: its liveness Lease is fresh and reports that its auth service
 * presents the cluster's current certificate. In local clusters the agent is a process already running; in real ones,
 * the Deployment that `Cluster` installs.
 */
import * as k8s from "@kubernetes/client-node";
import { X509Certificate } from "node:crypto";
import { AGENT_LEASE, API_GROUP, SYSTEM_NAMESPACE } from "../api/index.js";
import { readOptional, serverOf } from "../kube/client.js";
import { poll } from "../wait/poll.js";
import { AGENT_CONTAINER, AGENT_NAME } from "./agent-components.js";

/** How long the agent's lease holds without renewal. */
export const AGENT_LEASE_DURATION_SECONDS = 30;

/** When `lease` was last renewed, if ever (the client hands the micro-time over as a string). */
function renewedAt(lease: k8s.V1Lease | undefined): Date | undefined {
  return lease?.spec?.renewTime ? new Date(lease.spec.renewTime as unknown as string) : undefined;
}

/** Whether a lease read from the cluster shows a live agent at `now`. */
export function isAgentLeaseFresh(lease: k8s.V1Lease | undefined, now = new Date()): boolean {
  const renewed = renewedAt(lease)?.getTime() ?? 0;
  return now.getTime() - renewed < (lease?.spec?.leaseDurationSeconds ?? AGENT_LEASE_DURATION_SECONDS) * 1000;
}

/**
 * How long an install with no `agent.image` waits for an agent that shows no sign of running (no
 * Deployment, and no fresh Lease) before it gives up. An agent already running renews its Lease
 * every 10 s, and only once the system namespace exists (the install may have just made it): one
 * and a half of its passes is the longest such an agent can take to show itself.
 */
export const AGENT_APPEARANCE_GRACE_MS = 15_000;

/** What the cluster shows of an agent, in one look. */
export interface AgentSigns {
  /** The agent's Lease, if the cluster has one. */
  readonly lease: k8s.V1Lease | undefined;
  /** Whether the cluster has the agent's control Deployment (any image, rolled out or not). */
  readonly deploymentFound: boolean;
  /** When the look was taken. */
  readonly now: Date;
  /** How long the install has been waiting for the agent so far. */
  readonly waitedMs: number;
}

/**
 * Why an install that deploys no agent (no `agent.image`) must stop now, or undefined while an
 * agent may still show itself: a Deployment of the agent is there (it may be rolling out), its
 * Lease is fresh, or the grace an already-running agent needs has not passed yet. What the cluster
 * showed is named, so that a user can tell a missing input from an agent that stopped.
 */
export function missingAgent(signs: AgentSigns): string | undefined {
  if (signs.deploymentFound || isAgentLeaseFresh(signs.lease, signs.now)) return undefined;
  if (signs.waitedMs < AGENT_APPEARANCE_GRACE_MS) return undefined;
  const deployment = `no Deployment ${SYSTEM_NAMESPACE}/${AGENT_NAME}`;
  const renewed = renewedAt(signs.lease)?.toISOString() ?? "never";
  const lease = signs.lease
    ? `a stale agent Lease ${SYSTEM_NAMESPACE}/${AGENT_LEASE} (last renewed ${renewed}: the agent that held it stopped)`
    : `no agent Lease ${SYSTEM_NAMESPACE}/${AGENT_LEASE}`;
  return (
    `agent.image is not set, so this install deploys no agent, and none runs in this cluster: it has ${deployment} and ${lease} ` +
    `after ${Math.round(signs.waitedMs / 1000)} s. Set agent.image to the agent image (the archive \`npm run image\` builds, ` +
    "pushed where the cluster pulls from) and run `pulumi up` again: the install goes on from what it made."
  );
}

/** Annotation of the agent's Lease: the SHA-256 fingerprint of the auth certificate it serves. */
export const SERVED_AUTH_CERTIFICATE_ANNOTATION = `${API_GROUP}/served-auth-certificate-sha256`;

/** Annotation on the agent's Lease: the build the agent runs, `<version>-<build>` (agent/build.ts). */
export const AGENT_BUILD_ANNOTATION = `${API_GROUP}/agent-build`;

/** SHA-256 of a PEM certificate's DER, in hex. */
export function certificateFingerprint(certificatePem: string): string {
  return new X509Certificate(certificatePem).fingerprint256.replaceAll(":", "").toLowerCase();
}

/** How {@link waitForAgent} waits. */
export interface AgentWait {
  readonly timeoutMs: number;
  /**
   * Whether an agent must already run because the install deploys none (no `agent.image`): the
   * wait then ends within {@link AGENT_APPEARANCE_GRACE_MS} when the cluster shows none (see
   * {@link missingAgent}), instead of at its timeout. @default false
   */
  readonly mustAlreadyRun?: boolean;
  /**
   * The agent's pods a rollout left: the wait then also waits for one of them to renew the lease,
   * so that the build it resolves is the new agent's, not that of an old one still shutting down.
   */
  readonly holders?: readonly string[];
  readonly signal?: AbortSignal;
}

/**
 * Waits until the cluster's agent renews its lease and reports serving `servingCertificatePem`
 * (the auth service's current certificate); resolves the build that agent says it runs (`unknown`
 * from an agent of a release that did not say). Read from the cluster's API: the auth service itself
 * may be reachable only from the peer (through the tunnel, in-band), not from where this runs.
 */
export async function waitForAgent(
  kc: k8s.KubeConfig,
  servingCertificatePem: string,
  { timeoutMs, mustAlreadyRun = false, holders, signal }: AgentWait,
): Promise<string> {
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const wanted = certificateFingerprint(servingCertificatePem);
  const started = Date.now();
  /** Whether the install must stop for want of an agent (only when it deploys none). */
  const missing = async (lease: k8s.V1Lease | undefined): Promise<string | undefined> => {
    if (!mustAlreadyRun || isAgentLeaseFresh(lease)) return undefined;
    const deployment = await readOptional(() =>
      apps.readNamespacedDeployment({ name: AGENT_NAME, namespace: SYSTEM_NAMESPACE }),
    );
    return missingAgent({
      lease,
      deploymentFound: deployment !== undefined,
      now: new Date(),
      waitedMs: Date.now() - started,
    });
  };
  return poll(
    {
      step: "cluster",
      object: `agent Lease ${SYSTEM_NAMESPACE}/${AGENT_LEASE} renewed, serving the auth certificate ${wanted.slice(0, 16)}…`,
      endpoint: serverOf(kc),
    },
    { timeoutMs, intervalMs: 500, ...(signal ? { signal } : {}) },
    async () => {
      const lease = await readOptional(() =>
        coordination.readNamespacedLease({ name: AGENT_LEASE, namespace: SYSTEM_NAMESPACE }),
      );
      const stop = await missing(lease);
      if (stop) return { failed: true, reason: stop };
      if (!lease) return { done: false, state: "no lease: is the agent running in this cluster?" };
      if (!isAgentLeaseFresh(lease)) return { done: false, state: `last renewed ${String(lease.spec?.renewTime)}` };
      const holder = lease.spec?.holderIdentity ?? "";
      if (holders && holders.length > 0 && !holders.includes(holder))
        return {
          done: false,
          state: `renewed by ${holder || "no one named"}, not yet by the new pod ${holders.join(" or ")}`,
        };
      const served = lease.metadata?.annotations?.[SERVED_AUTH_CERTIFICATE_ANNOTATION];
      return served === wanted
        ? { done: true, value: agentBuildOf(lease) }
        : { done: false, state: `agent serves auth certificate ${served?.slice(0, 16) ?? "(none reported)"}…` };
    },
  );
}

/** The build the agent of `lease` says it runs, or `unknown` (an agent of a release that did not say; no lease). Pure. */
export const agentBuildOf = (lease: k8s.V1Lease | undefined): string =>
  lease?.metadata?.annotations?.[AGENT_BUILD_ANNOTATION] ?? "unknown";

/** What the cluster's agent runs: the build it says, and the image digest its node's runtime resolved its tag to. */
export interface RunningAgent {
  /** `<version>-<build>`, `unknown` when the agent says none (see {@link agentBuildOf}). */
  readonly build: string;
  /** `sha256:<64 hex>` of the agent pod that holds the Lease, `unknown` when none is found or the runtime gives none. */
  readonly imageDigest: string;
}

/** The `sha256:…` digest in a container status's `imageID` (`sha256:…` or `<repository>@sha256:…`), or undefined. Pure. */
export const imageDigestOf = (imageId: string | undefined): string | undefined =>
  /(?:^|@)(sha256:[0-9a-f]{64})$/.exec(imageId ?? "")?.[1];

/** What the cluster's agent runs now, from its Lease and the pod that holds it. */
export async function readRunningAgent(kc: k8s.KubeConfig): Promise<RunningAgent> {
  const lease = await readOptional(() =>
    kc.makeApiClient(k8s.CoordinationV1Api).readNamespacedLease({ name: AGENT_LEASE, namespace: SYSTEM_NAMESPACE }),
  );
  const holder = lease?.spec?.holderIdentity;
  const pod = holder
    ? await readOptional(() =>
        kc.makeApiClient(k8s.CoreV1Api).readNamespacedPod({ name: holder, namespace: SYSTEM_NAMESPACE }),
      )
    : undefined;
  const imageId = pod?.status?.containerStatuses?.find((status) => status.name === AGENT_CONTAINER)?.imageID;
  return { build: agentBuildOf(lease), imageDigest: imageDigestOf(imageId) ?? "unknown" };
}
