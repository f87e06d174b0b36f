/**
 * Readiness of the agent's workloads, as pulumi-kubernetes' await logic judges a rollout: the
 * controller has seen the current spec (`observedGeneration` is the object's `generation`), every
 * replica runs the current template (no old pod left), and every one is available.
 *
 *   Deployment  status.observedGeneration >= metadata.generation, updatedReplicas == replicas,
 *               status.replicas == replicas (no old pod), availableReplicas == replicas
 *   DaemonSet   status.observedGeneration >= metadata.generation, updatedNumberScheduled ==
 *               desiredNumberScheduled, numberAvailable == desiredNumberScheduled
 *
 * The judgement is pure (unit-tested on literal objects); the wait reads the object with the one
 * poll of core/wait, so its timeout names the step, the object, the endpoint and what it saw.
 */
import * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE } from "../api/index.js";
import { readOptional, serverOf } from "../kube/client.js";
import { startDeadline } from "../wait/deadline.js";
import { poll } from "../wait/poll.js";
import { AGENT_NAME, GATEWAY_NAME, ROUTE_NAME } from "./agent-components.js";

/** How far a rollout is: done, or what is still missing. */
export type RolloutState = { readonly done: true } | { readonly done: false; readonly state: string };

/** The rollout of a Deployment. */
export function deploymentRollout(deployment: k8s.V1Deployment): RolloutState {
  const generation = deployment.metadata?.generation ?? 0;
  const status = deployment.status ?? {};
  const wanted = deployment.spec?.replicas ?? 1;
  if ((status.observedGeneration ?? 0) < generation)
    return { done: false, state: `generation ${generation} not observed yet (at ${status.observedGeneration ?? 0})` };
  const updated = status.updatedReplicas ?? 0;
  const total = status.replicas ?? 0;
  const available = status.availableReplicas ?? 0;
  if (updated === wanted && total === wanted && available === wanted) return { done: true };
  return {
    done: false,
    state: `${updated}/${wanted} replicas updated, ${available}/${wanted} available, ${total - updated} old left`,
  };
}

/** The rollout of a DaemonSet. */
export function daemonSetRollout(daemonSet: k8s.V1DaemonSet): RolloutState {
  const generation = daemonSet.metadata?.generation ?? 0;
  const status = daemonSet.status;
  if (!status || (status.observedGeneration ?? 0) < generation)
    return { done: false, state: `generation ${generation} not observed yet (at ${status?.observedGeneration ?? 0})` };
  const desired = status.desiredNumberScheduled;
  const updated = status.updatedNumberScheduled ?? 0;
  const available = status.numberAvailable ?? 0;
  if (updated === desired && available === desired) return { done: true };
  return { done: false, state: `${updated}/${desired} nodes updated, ${available}/${desired} available` };
}

/** What to wait for: each workload of the agent, how to read it, and how to judge it. */
const WORKLOADS = [
  {
    object: `Deployment ${SYSTEM_NAMESPACE}/${AGENT_NAME}`,
    read: (apps: k8s.AppsV1Api) => apps.readNamespacedDeployment({ name: AGENT_NAME, namespace: SYSTEM_NAMESPACE }),
    judge: deploymentRollout,
  },
  {
    object: `Deployment ${SYSTEM_NAMESPACE}/${GATEWAY_NAME}`,
    read: (apps: k8s.AppsV1Api) => apps.readNamespacedDeployment({ name: GATEWAY_NAME, namespace: SYSTEM_NAMESPACE }),
    judge: deploymentRollout,
  },
  {
    object: `DaemonSet ${SYSTEM_NAMESPACE}/${ROUTE_NAME}`,
    read: (apps: k8s.AppsV1Api) => apps.readNamespacedDaemonSet({ name: ROUTE_NAME, namespace: SYSTEM_NAMESPACE }),
    judge: daemonSetRollout,
  },
] as const;

/**
 * Waits until the control Deployment, the gateway Deployment and the route DaemonSet are rolled
 * out, one after the other, within one deadline of `timeoutMs`.
 */
export async function waitForAgentRollout(kc: k8s.KubeConfig, timeoutMs: number): Promise<void> {
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const deadline = startDeadline(timeoutMs);
  for (const workload of WORKLOADS) {
    await poll(
      { step: "cluster", object: `${workload.object} rolled out`, endpoint: serverOf(kc) },
      { timeoutMs: deadline.left(), intervalMs: 500, signal: deadline.signal },
      async () => {
        const object = await readOptional(() => workload.read(apps));
        if (!object) return { done: false, state: "not found" };
        const rollout = workload.judge(object as never);
        return rollout.done ? { done: true, value: undefined } : rollout;
      },
    );
  }
}
