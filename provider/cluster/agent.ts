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

/** How long the agent's lease holds without renewal. */
export const AGENT_LEASE_DURATION_SECONDS = 30;

/** Whether a lease read from the cluster shows a live agent at `now`. */
export function isAgentLeaseFresh(lease: k8s.V1Lease | undefined, now = new Date()): boolean {
  const renewed = lease?.spec?.renewTime ? new Date(lease.spec.renewTime as unknown as string).getTime() : 0;
  return now.getTime() - renewed < (lease?.spec?.leaseDurationSeconds ?? AGENT_LEASE_DURATION_SECONDS) * 1000;
}

/** Annotation of the agent's Lease: the SHA-256 fingerprint of the auth certificate it serves. */
export const SERVED_AUTH_CERTIFICATE_ANNOTATION = `${API_GROUP}/served-auth-certificate-sha256`;

/** SHA-256 of a PEM certificate's DER, in hex. */
export function certificateFingerprint(certificatePem: string): string {
  return new X509Certificate(certificatePem).fingerprint256.replaceAll(":", "").toLowerCase();
}

/**
 * Waits until the cluster's agent renews its lease and reports serving `servingCertificatePem`
 * (the auth service's current certificate). Read from the cluster's API: the auth service itself
 * may be reachable only from the peer (through the tunnel, in-band), not from where this runs.
 */
export async function waitForAgent(
  kc: k8s.KubeConfig,
  servingCertificatePem: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  const wanted = certificateFingerprint(servingCertificatePem);
  await poll(
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
      if (!lease) return { done: false, state: "no lease: is the agent running in this cluster?" };
      if (!isAgentLeaseFresh(lease)) return { done: false, state: `last renewed ${String(lease.spec?.renewTime)}` };
      const served = lease.metadata?.annotations?.[SERVED_AUTH_CERTIFICATE_ANNOTATION];
      return served === wanted
        ? { done: true, value: undefined }
        : { done: false, state: `agent serves auth certificate ${served?.slice(0, 16) ?? "(none reported)"}…` };
    },
  );
}
