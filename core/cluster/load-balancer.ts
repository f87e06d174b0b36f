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
import { loadBalancerAddressOf, nodeAddressOf, nodePortOf, type AwaitedService } from "./exposure-plan.js";
import type { ExposedHosts } from "./install-plan.js";

/**
 * Waits, within `deadline`, until each of `services` has what is read of it (its load balancer's
 * address, or its node port and, for its host, a node's external address), and hands them back; a
 * timeout names the Service, what is missing and the cluster (core/wait's error).
 */
export async function waitForExposedHosts(
  kc: k8s.KubeConfig,
  services: readonly AwaitedService[],
  deadline: Deadline,
): Promise<ExposedHosts> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const exposed: Partial<Record<keyof ExposedHosts, string | number>> = {};
  const read = (name: string) => readOptional(() => core.readNamespacedService({ name, namespace: SYSTEM_NAMESPACE }));
  // Read once, and only when a node port is read back: both Services' ports are on the same nodes.
  let nodeAddress: Promise<string | undefined> | undefined;
  for (const service of services) {
    const what = service.reads === "nodePort" ? "a node port" : "a load-balancer address";
    const found = await poll(
      { step: "cluster", object: `${what} for Service ${SYSTEM_NAMESPACE}/${service.name}`, endpoint: serverOf(kc) },
      { timeoutMs: deadline.left(), intervalMs: 1000, signal: deadline.signal },
      async () => {
        const held = await read(service.name);
        const seen = service.reads === "nodePort" ? nodePortOf(held) : loadBalancerAddressOf(held);
        return "missing" in seen ? { done: false, state: seen.missing } : { done: true, value: seen };
      },
    );
    if ("port" in found) {
      exposed[`${service.endpoint}Port`] = found.port;
      nodeAddress ??= core.listNode().then((nodes) => nodeAddressOf(nodes.items));
      const node = await nodeAddress;
      if (node) exposed[service.endpoint] = node;
    } else exposed[service.endpoint] = found.address;
  }
  return exposed as ExposedHosts;
}
