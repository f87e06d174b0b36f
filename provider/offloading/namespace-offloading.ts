/**
 * The steps of the `NamespaceOffloading` resource, on the consumer cluster: write the namespace's
 * NamespaceOffloading object and wait until every provider made its remote namespace; delete it
 * and wait until the consumer's agent drained its pods and the remote namespaces are gone; read
 * what the agent last reported. The consumer's agent does the talking to providers
 * (agent/offloading), with the identities the peerings issued.
 */
import * as k8s from "@kubernetes/client-node";
import { API_GROUP, API_GROUP_VERSION, API_VERSION, MANAGED_BY, MANAGED_BY_LABEL } from "../api/names.js";
import { NAMESPACE_OFFLOADING_NAME, type NamespaceOffloading, type RemoteNamespaceReport } from "../api/offloading.js";
import { forgeReflectorBinding, REFLECTOR_ROLE } from "../cluster/agent-rbac.js";
import { deleteOptional, describeFailure, ensureObject, readOptional, serverOf } from "../kube/client.js";
import type { Progress } from "../peering/progress.js";
import { poll } from "../wait/poll.js";

const STEP = "offloading";

/** Annotation naming the Pulumi resource that owns a NamespaceOffloading. */
export const OFFLOADING_OWNER_ANNOTATION = `${API_GROUP}/owner`;

/** What to offload, and where. */
export interface OffloadingRequest {
  /** The consumer namespace. */
  readonly namespace: string;
  /** Its name on every provider. */
  readonly remoteNamespace: string;
  /** The virtual nodes of the peerings it may use. */
  readonly virtualNodes: readonly string[];
  /** The owning resource's URN, recorded on the object. */
  readonly owner?: string;
}

const group = { group: API_GROUP, version: API_VERSION, plural: "namespaceoffloadings" };

/** Reads the namespace's NamespaceOffloading; undefined when there is none. */
export async function readNamespaceOffloading(
  kc: k8s.KubeConfig,
  namespace: string,
): Promise<NamespaceOffloading | undefined> {
  return (await readOptional(() =>
    kc
      .makeApiClient(k8s.CustomObjectsApi)
      .getNamespacedCustomObject({ ...group, namespace, name: NAMESPACE_OFFLOADING_NAME }),
  ).catch(
    describeFailure(`${STEP}: reading NamespaceOffloading ${namespace}/${NAMESPACE_OFFLOADING_NAME}`, serverOf(kc)),
  )) as NamespaceOffloading | undefined;
}

/** One line per provider that is not Ready: `liqo-a (provider 1234…): Refused: NameTaken: …`. */
export function remoteProblems(reports: readonly RemoteNamespaceReport[], virtualNodes: readonly string[]): string[] {
  return virtualNodes.flatMap((node) => {
    const report = reports.find((r) => r.virtualNode === node);
    if (!report) return [`virtual node ${node}: no report from the consumer's agent yet`];
    if (report.phase === "Ready") return [];
    const provider = report.providerClusterId ? ` (provider ${report.providerClusterId})` : "";
    return [`virtual node ${node}${provider}: ${report.phase}${report.message ? `: ${report.message}` : ""}`];
  });
}

/**
 * Writes the NamespaceOffloading and waits until each provider made the remote namespace. A
 * provider that refuses it fails the wait at once, with its reason. Resolves the reports.
 */
export async function offloadNamespace(
  kc: k8s.KubeConfig,
  request: OffloadingRequest,
  timeoutMs: number,
  progress: Progress,
): Promise<RemoteNamespaceReport[]> {
  const endpoint = serverOf(kc);
  const where = `NamespaceOffloading ${request.namespace}/${NAMESPACE_OFFLOADING_NAME}`;
  progress.step(1, 2, `${STEP}: writing ${where} on ${endpoint}`);
  const namespace = await readOptional(() =>
    kc.makeApiClient(k8s.CoreV1Api).readNamespace({ name: request.namespace }),
  ).catch(describeFailure(`${STEP}: reading Namespace ${request.namespace}`, endpoint));
  if (!namespace) {
    throw new Error(
      `${STEP}: namespace "${request.namespace}" does not exist on ${endpoint}: create it first (the offloading does not own it)`,
    );
  }
  const object: NamespaceOffloading = {
    apiVersion: API_GROUP_VERSION,
    kind: "NamespaceOffloading",
    metadata: {
      name: NAMESPACE_OFFLOADING_NAME,
      namespace: request.namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
      ...(request.owner ? { annotations: { [OFFLOADING_OWNER_ANNOTATION]: request.owner } } : {}),
    },
    spec: { remoteNamespace: request.remoteNamespace, virtualNodes: [...request.virtualNodes] },
  };
  // The agent reads the ConfigMaps and Secrets of this namespace's offloaded pods, and no other namespace's.
  await ensureObject(kc, forgeReflectorBinding(request.namespace)).catch(
    describeFailure(`${STEP}: applying RoleBinding ${request.namespace}/${REFLECTOR_ROLE}`, endpoint),
  );
  const applied = await ensureObject(kc, object).catch(describeFailure(`${STEP}: applying ${where}`, endpoint));
  const generation = applied.metadata?.generation ?? 1;
  progress.step(
    2,
    2,
    `${STEP}: waiting for the providers of ${request.virtualNodes.join(", ")} to make namespace ${request.remoteNamespace}`,
  );
  return poll(
    { step: STEP, object: `${where}: remote namespaces made`, endpoint },
    { timeoutMs, intervalMs: 500 },
    async () => {
      const live = await readNamespaceOffloading(kc, request.namespace);
      if (!live) return { failed: true, reason: `${where} was deleted meanwhile` };
      const reports = live.status?.observedGeneration === generation ? (live.status.remotes ?? []) : [];
      const refused = reports.filter((r) => r.phase === "Refused");
      if (refused.length > 0) return { failed: true, reason: remoteProblems(refused, request.virtualNodes).join("; ") };
      const problems = remoteProblems(reports, request.virtualNodes);
      return problems.length === 0 ? { done: true, value: reports } : { done: false, state: problems.join("; ") };
    },
  );
}

/**
 * Deletes the namespace's NamespaceOffloading and waits until it is gone: the consumer's agent
 * removes its pods from the virtual nodes (and so from the providers) and the remote namespaces
 * first. Resolves whether there was one.
 */
export async function withdrawNamespace(
  kc: k8s.KubeConfig,
  namespace: string,
  timeoutMs: number,
  progress: Progress,
): Promise<boolean> {
  const endpoint = serverOf(kc);
  const where = `NamespaceOffloading ${namespace}/${NAMESPACE_OFFLOADING_NAME}`;
  progress.step(1, 1, `${STEP}: deleting ${where} on ${endpoint}; its pods and remote namespaces go first`);
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const existed = await readOptional(() =>
    api.deleteNamespacedCustomObject({ ...group, namespace, name: NAMESPACE_OFFLOADING_NAME }),
  ).catch(describeFailure(`${STEP}: deleting ${where}`, endpoint));
  if (existed !== undefined) {
    await poll({ step: STEP, object: `${where} deleted`, endpoint }, { timeoutMs, intervalMs: 500 }, async () => {
      const live = await readNamespaceOffloading(kc, namespace);
      return live
        ? { done: false, state: "its pods or remote namespaces are still being removed" }
        : { done: true, value: undefined };
    });
  }
  await deleteOptional(() =>
    kc.makeApiClient(k8s.RbacAuthorizationV1Api).deleteNamespacedRoleBinding({ name: REFLECTOR_ROLE, namespace }),
  ).catch(describeFailure(`${STEP}: deleting RoleBinding ${namespace}/${REFLECTOR_ROLE}`, endpoint));
  return existed !== undefined;
}
