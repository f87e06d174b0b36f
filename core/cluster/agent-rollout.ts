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
 * A workload whose pods the cluster refuses at admission (a Pod Security level, a policy) would
 * never roll out: the wait stops early, with the refusal the API server gave (it names the pod and
 * the policy), once the refusal has stood for {@link REFUSAL_STANDS_MS}: a Deployment's condition
 * `ReplicaFailure`, a DaemonSet's latest `FailedCreate` event. Every workload is looked at for
 * that while any is awaited (all were applied at once), so a refused gateway is said even while the
 * control agent is still starting.
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

/**
 * How long a refusal must stand before the wait gives up on it: one seen at once may be from before
 * the install labelled the namespace, and the controller's next try then succeeds.
 */
export const REFUSAL_STANDS_MS = 20_000;

/** How often a wait looks for refusals (a few reads each time), less often than at the rollout itself. */
const REFUSAL_LOOK_EVERY_MS = 5_000;

/** How recent a DaemonSet's FailedCreate event must be to count as a refusal that stands. */
const RECENT_EVENT_MS = 60_000;

/** The admission refusal a Deployment's ReplicaSet reports, or undefined. */
export function deploymentRefusal(deployment: k8s.V1Deployment): string | undefined {
  const failure = deployment.status?.conditions?.find((c) => c.type === "ReplicaFailure" && c.status === "True");
  return failure?.message;
}

/** The latest of a workload's `FailedCreate` events newer than `now - RECENT_EVENT_MS`, or undefined. */
export function latestRefusal(events: readonly k8s.CoreV1Event[], now: number): string | undefined {
  const timeOf = (event: k8s.CoreV1Event): number =>
    new Date(event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp ?? 0).getTime();
  const recent = events
    .filter((event) => event.reason === "FailedCreate" && now - timeOf(event) <= RECENT_EVENT_MS)
    .sort((x, y) => timeOf(y) - timeOf(x));
  return recent[0]?.message;
}

/** What a refused workload's wait says: the API server's own words, and what the project asked for. */
export function describeRefusal(refusal: string): string {
  return (
    `the cluster refuses its pods: ${refusal} (the project's namespace ${SYSTEM_NAMESPACE} asks Pod Security ` +
    "level privileged, since the gateway and the route agent use the node's network and NET_ADMIN; a policy of " +
    "the cluster does not allow what they need)"
  );
}

/** What to wait for: each workload of the agent, how to read it, and how to judge it. */
const WORKLOADS = [
  {
    object: `Deployment ${SYSTEM_NAMESPACE}/${AGENT_NAME}`,
    read: (apps: k8s.AppsV1Api) => apps.readNamespacedDeployment({ name: AGENT_NAME, namespace: SYSTEM_NAMESPACE }),
    judge: deploymentRollout,
    refusal: async (_core: k8s.CoreV1Api, object: k8s.V1Deployment) => deploymentRefusal(object),
  },
  {
    object: `Deployment ${SYSTEM_NAMESPACE}/${GATEWAY_NAME}`,
    read: (apps: k8s.AppsV1Api) => apps.readNamespacedDeployment({ name: GATEWAY_NAME, namespace: SYSTEM_NAMESPACE }),
    judge: deploymentRollout,
    refusal: async (_core: k8s.CoreV1Api, object: k8s.V1Deployment) => deploymentRefusal(object),
  },
  {
    object: `DaemonSet ${SYSTEM_NAMESPACE}/${ROUTE_NAME}`,
    read: (apps: k8s.AppsV1Api) => apps.readNamespacedDaemonSet({ name: ROUTE_NAME, namespace: SYSTEM_NAMESPACE }),
    judge: daemonSetRollout,
    refusal: async (core: k8s.CoreV1Api) => {
      const events = await core.listNamespacedEvent({
        namespace: SYSTEM_NAMESPACE,
        fieldSelector: `involvedObject.kind=DaemonSet,involvedObject.name=${ROUTE_NAME},reason=FailedCreate`,
      });
      return latestRefusal(events.items, Date.now());
    },
  },
] as const;

/**
 * Waits until the control Deployment, the gateway Deployment and the route DaemonSet are rolled
 * out, one after the other, within one deadline of `timeoutMs`.
 */
export async function waitForAgentRollout(kc: k8s.KubeConfig, timeoutMs: number): Promise<void> {
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const deadline = startDeadline(timeoutMs);
  const refusedSince = new Map<string, number>();
  let lookedAt = Date.now();
  /** The refusal of any workload not rolled out yet that has stood long enough, as the wait's failure. */
  const standingRefusal = async (): Promise<string | undefined> => {
    for (const workload of WORKLOADS) {
      const object = await readOptional(() => workload.read(apps));
      const refusal =
        object && !workload.judge(object as never).done ? await workload.refusal(core, object as never) : undefined;
      if (refusal === undefined) {
        refusedSince.delete(workload.object);
        continue;
      }
      const since = refusedSince.get(workload.object) ?? Date.now();
      refusedSince.set(workload.object, since);
      if (Date.now() - since >= REFUSAL_STANDS_MS) return `${workload.object}: ${describeRefusal(refusal)}`;
    }
    return undefined;
  };
  for (const workload of WORKLOADS) {
    await poll(
      { step: "cluster", object: `${workload.object} rolled out`, endpoint: serverOf(kc) },
      { timeoutMs: deadline.left(), intervalMs: 500, signal: deadline.signal },
      async () => {
        const object = await readOptional(() => workload.read(apps));
        const rollout: RolloutState = object ? workload.judge(object as never) : { done: false, state: "not found" };
        if (rollout.done) return { done: true, value: undefined };
        if (Date.now() - lookedAt < REFUSAL_LOOK_EVERY_MS) return rollout;
        lookedAt = Date.now();
        const refused = await standingRefusal();
        return refused === undefined ? rollout : { failed: true, reason: refused };
      },
    );
  }
}

/**
 * The control agent's pods a finished rollout left (those not being deleted), by name: the names
 * they renew the agent's Lease under. An old pod still shutting down renews it too, for a moment.
 */
export async function rolledOutAgentPods(kc: k8s.KubeConfig): Promise<string[]> {
  const deployment = await readOptional(() =>
    kc.makeApiClient(k8s.AppsV1Api).readNamespacedDeployment({ name: AGENT_NAME, namespace: SYSTEM_NAMESPACE }),
  );
  const selector = Object.entries(deployment?.spec?.selector?.matchLabels ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
  if (!selector) return [];
  const pods = await kc
    .makeApiClient(k8s.CoreV1Api)
    .listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: selector });
  return pods.items.filter((pod) => !pod.metadata?.deletionTimestamp).map((pod) => pod.metadata!.name!);
}
