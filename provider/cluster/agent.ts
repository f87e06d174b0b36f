/**
 * Whether an agent serves a cluster: its liveness Lease is fresh and its auth service presents the
 * cluster's certificate. In local clusters the agent is a process already running; in real ones,
 * the Deployment that `Cluster` installs.
 */
import * as k8s from "@kubernetes/client-node";
import { AGENT_LEASE, SYSTEM_NAMESPACE } from "../api/index.js";
import { waitForAuthService } from "../authentication/identity.js";
import { readOptional, serverOf } from "../kube/client.js";
import { poll } from "../wait/poll.js";

/** How long the agent's lease holds without renewal. */
export const AGENT_LEASE_DURATION_SECONDS = 30;

/** Whether a lease read from the cluster shows a live agent at `now`. */
export function isAgentLeaseFresh(lease: k8s.V1Lease | undefined, now = new Date()): boolean {
  const renewed = lease?.spec?.renewTime ? new Date(lease.spec.renewTime as unknown as string).getTime() : 0;
  return now.getTime() - renewed < (lease?.spec?.leaseDurationSeconds ?? AGENT_LEASE_DURATION_SECONDS) * 1000;
}

/** Waits until the cluster's agent renews its lease and serves the auth certificate signed by `authCaPem`. */
export async function waitForAgent(kc: k8s.KubeConfig, authUrl: string, authCaPem: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  await poll(
    { step: "cluster", object: `agent Lease ${SYSTEM_NAMESPACE}/${AGENT_LEASE} renewed`, endpoint: serverOf(kc) },
    { timeoutMs, intervalMs: 500, ...(signal ? { signal } : {}) },
    async () => {
      const lease = await readOptional(() => coordination.readNamespacedLease({ name: AGENT_LEASE, namespace: SYSTEM_NAMESPACE }));
      return isAgentLeaseFresh(lease) ? { done: true, value: undefined } : { done: false, state: lease ? `last renewed ${String(lease.spec?.renewTime)}` : "no lease: is the agent running in this cluster?" };
    },
  );
  await waitForAuthService(authUrl, authCaPem, Math.max(1, deadline - Date.now()), signal);
}
