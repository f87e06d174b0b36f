/**
 * The agent's own heartbeat: a Lease in the system namespace renewed every pass, so that the
 * `Cluster` resource can tell that an agent serves the cluster (in local clusters it is a process
 * already running; in real ones, the Deployment it installed). The lease also names the auth
 * certificate the agent serves, so that an install can tell the new one is served without
 * reaching the auth service from where `pulumi` runs (in-band, it is reachable only through the
 * tunnel), and the build the agent runs, which the `Cluster` shows.
 */
import * as k8s from "@kubernetes/client-node";
import { AGENT_LEASE, MANAGED_BY, MANAGED_BY_LABEL, SYSTEM_NAMESPACE } from "../core/api/index.js";
import { isNotFound } from "../core/kube/client.js";
import { renewLease } from "../core/kube/lease.js";
import { microTime } from "../core/kube/time.js";
import { agentBuild } from "./build.js";
import {
  AGENT_BUILD_ANNOTATION,
  AGENT_LEASE_DURATION_SECONDS,
  SERVED_AUTH_CERTIFICATE_ANNOTATION,
  certificateFingerprint,
} from "../core/cluster/agent.js";

/** Renews the agent's lease, naming the auth certificate it serves; does nothing while the system namespace does not exist yet. */
export async function renewAgentLease(
  kc: k8s.KubeConfig,
  holder: string,
  servedCertificatePem?: string,
  now = new Date(),
): Promise<void> {
  const spec: k8s.V1LeaseSpec = {
    holderIdentity: holder,
    leaseDurationSeconds: AGENT_LEASE_DURATION_SECONDS,
    renewTime: microTime(now) as unknown as k8s.V1MicroTime,
  };
  const annotations: Record<string, string> = {
    [AGENT_BUILD_ANNOTATION]: agentBuild(),
    ...(servedCertificatePem
      ? { [SERVED_AUTH_CERTIFICATE_ANNOTATION]: certificateFingerprint(servedCertificatePem) }
      : {}),
  };
  try {
    await renewLease(kc, {
      namespace: SYSTEM_NAMESPACE,
      name: AGENT_LEASE,
      renew: (lease) => ({
        ...lease,
        metadata: { ...lease.metadata, annotations: { ...lease.metadata?.annotations, ...annotations } },
        spec: { ...lease.spec, ...spec },
      }),
      create: async () => ({
        metadata: { name: AGENT_LEASE, labels: { [MANAGED_BY_LABEL]: MANAGED_BY }, annotations },
        spec,
      }),
    });
  } catch (error) {
    if (isNotFound(error)) return; // The namespace appears when a Cluster resource installs it.
    throw error;
  }
}
