/**
 * The agent's own heartbeat: a Lease in the system namespace renewed every pass, so that the
 * `Cluster` resource can tell that an agent serves the cluster (in local clusters it is a process
 * already running; in real ones, the Deployment it installed).
 */
import * as k8s from "@kubernetes/client-node";
import { AGENT_LEASE, MANAGED_BY, MANAGED_BY_LABEL, SYSTEM_NAMESPACE } from "../provider/api/index.js";
import { isNotFound, readOptional } from "../provider/kube/client.js";
import { microTime } from "../provider/kube/time.js";

/** How long the agent's lease holds without renewal. */
export const AGENT_LEASE_DURATION_SECONDS = 30;

/** Renews the agent's lease; does nothing while the system namespace does not exist yet. */
export async function renewAgentLease(kc: k8s.KubeConfig, holder: string, now = new Date()): Promise<void> {
  const api = kc.makeApiClient(k8s.CoordinationV1Api);
  const spec: k8s.V1LeaseSpec = { holderIdentity: holder, leaseDurationSeconds: AGENT_LEASE_DURATION_SECONDS, renewTime: microTime(now) as unknown as k8s.V1MicroTime };
  try {
    const lease = await readOptional(() => api.readNamespacedLease({ name: AGENT_LEASE, namespace: SYSTEM_NAMESPACE }));
    if (lease) {
      await api.replaceNamespacedLease({ name: AGENT_LEASE, namespace: SYSTEM_NAMESPACE, body: { ...lease, spec: { ...lease.spec, ...spec } } });
    } else {
      await api.createNamespacedLease({ namespace: SYSTEM_NAMESPACE, body: { metadata: { name: AGENT_LEASE, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } }, spec } });
    }
  } catch (error) {
    if (isNotFound(error)) return; // The namespace appears when a Cluster resource installs it.
    throw error;
  }
}

/** Whether a lease read from the cluster shows a live agent at `now`. */
export function isAgentLeaseFresh(lease: k8s.V1Lease | undefined, now = new Date()): boolean {
  const renewed = lease?.spec?.renewTime ? new Date(lease.spec.renewTime as unknown as string).getTime() : 0;
  return now.getTime() - renewed < (lease?.spec?.leaseDurationSeconds ?? AGENT_LEASE_DURATION_SECONDS) * 1000;
}
