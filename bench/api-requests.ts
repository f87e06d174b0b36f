/**
 * How many requests the project's agents make of an API server, counted by the API server itself:
 * a FlowSchema of the bench puts every request of the agent's service account (and, on a provider,
 * of its consumers' identities) in one flow, and the server's API Priority and Fairness metrics
 * count the requests it dispatched for it. Nothing in the agent is changed to be counted.
 */
import * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE } from "../core/api/index.js";
import { AGENT_NAME } from "../core/cluster/agent-components.js";
import type { ClusterState } from "../local-cluster/lab.js";
import { kubectl } from "../local-cluster/pods.js";

/** The bench's FlowSchema. */
export const COUNTING_FLOW_SCHEMA = "pulumi-liqo-bench-agents";

/**
 * The FlowSchema that gathers the agent's requests (and those of `users`, a provider's consumers),
 * ahead of the built-in schemas that would otherwise take them (`service-accounts`,
 * `global-default`), at the priority level those give service accounts. Pure.
 */
export function forgeCountingFlowSchema(users: readonly string[]): k8s.V1FlowSchema {
  return {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "FlowSchema",
    metadata: { name: COUNTING_FLOW_SCHEMA },
    spec: {
      matchingPrecedence: 90,
      priorityLevelConfiguration: { name: "workload-low" },
      distinguisherMethod: { type: "ByUser" },
      rules: [
        {
          subjects: [
            { kind: "ServiceAccount", serviceAccount: { name: AGENT_NAME, namespace: SYSTEM_NAMESPACE } },
            ...users.map((name) => ({ kind: "User", user: { name } })),
          ],
          resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"], clusterScope: true, namespaces: ["*"] }],
          nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
        },
      ],
    },
  };
}

/** The requests the API server dispatched for `flowSchema`, summed over priority levels, from its `/metrics` text. Pure. */
export function dispatchedRequests(metrics: string, flowSchema: string): number {
  let total = 0;
  for (const line of metrics.split("\n")) {
    if (!line.startsWith("apiserver_flowcontrol_dispatched_requests_total{")) continue;
    if (!line.includes(`flow_schema="${flowSchema}"`)) continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (Number.isFinite(value)) total += value;
  }
  return total;
}

/** Makes (or remakes) the counting FlowSchema in `kc`'s cluster. */
export async function startCountingRequests(kc: k8s.KubeConfig, users: readonly string[]): Promise<void> {
  const api = kc.makeApiClient(k8s.FlowcontrolApiserverV1Api);
  await api.deleteFlowSchema({ name: COUNTING_FLOW_SCHEMA }).catch(() => undefined);
  await api.createFlowSchema({ body: forgeCountingFlowSchema(users) });
}

/** The requests counted so far in `cluster`. */
export async function countedRequests(cluster: ClusterState): Promise<number> {
  return dispatchedRequests(await kubectl(cluster, ["get", "--raw", "/metrics"]), COUNTING_FLOW_SCHEMA);
}

/** Removes the counting FlowSchema. */
export async function stopCountingRequests(kc: k8s.KubeConfig): Promise<void> {
  await kc
    .makeApiClient(k8s.FlowcontrolApiserverV1Api)
    .deleteFlowSchema({ name: COUNTING_FLOW_SCHEMA })
    .catch(() => undefined);
}
