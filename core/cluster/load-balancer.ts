/**
 * The addresses a cluster's load balancers give the agent's Services, read back rather than
 * assumed (which Services, and what an ingress says: exposure-plan.ts). The wait reads each
 * Service with the one poll of core/wait, so a load balancer that never comes ends the install
 * naming the Service, what is missing, the cluster and the timeout.
 */
import * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE } from "../api/index.js";
import { readOptional, serverOf } from "../kube/client.js";
import type { Deadline } from "../wait/deadline.js";
import { poll } from "../wait/poll.js";
import { loadBalancerAddressOf, type AwaitedService } from "./exposure-plan.js";
import type { ExposedHosts } from "./install-plan.js";

/**
 * Waits, within `deadline`, until each of `services` has a load-balancer address, and hands them
 * back; a timeout names the Service, what is missing and the cluster (core/wait's error).
 */
export async function waitForExposedHosts(
  kc: k8s.KubeConfig,
  services: readonly AwaitedService[],
  deadline: Deadline,
): Promise<ExposedHosts> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const hosts: Record<string, string> = {};
  for (const service of services) {
    hosts[service.endpoint] = await poll(
      {
        step: "cluster",
        object: `a load-balancer address for Service ${SYSTEM_NAMESPACE}/${service.name}`,
        endpoint: serverOf(kc),
      },
      { timeoutMs: deadline.left(), intervalMs: 1000, signal: deadline.signal },
      async () => {
        const found = loadBalancerAddressOf(
          await readOptional(() => core.readNamespacedService({ name: service.name, namespace: SYSTEM_NAMESPACE })),
        );
        return "address" in found ? { done: true, value: found.address } : { done: false, state: found.missing };
      },
    );
  }
  return hosts;
}
