/**
 * The steps of the `NamespaceOffloading` resource, on the consumer cluster: write the namespace's
 * NamespaceOffloading object and wait until every provider made its remote namespace; delete it
 * and wait until the consumer's agent drained its pods and the remote namespaces are gone; read
 * what the agent last reported. The consumer's agent does the talking to providers
 * (agent/offloading), with the identities the peerings issued.
 */
import * as k8s from "@kubernetes/client-node";
import { API_GROUP, API_GROUP_VERSION, API_VERSION, MANAGED_BY, MANAGED_BY_LABEL } from "../api/names.js";
import {
  ABANDONED_VIRTUAL_NODES_ANNOTATION,
  DEFAULT_POD_OFFLOADING,
  NAMESPACE_OFFLOADING_NAME,
  type NamespaceOffloading,
  type PodOffloading,
  type ServiceAccountTokens,
  type RemoteNamespaceReport,
} from "../api/offloading.js";
import { forgeReflectorBinding, REFLECTOR_ROLE } from "../cluster/agent-rbac.js";
import { getClusterIdentity, type ClusterIdentity } from "../cluster/install.js";
import { deleteOptional, describeFailure, ensureObject, isNotFound, readOptional, serverOf } from "../kube/client.js";
import type { Progress } from "../operation/progress.js";
import { describeUnreachable, providerUnreachableError } from "../operation/unreachable.js";
import { refusingProviders, rightsRefusedError } from "./provider-rights.js";
import { poll, WaitTimeoutError } from "../wait/poll.js";
import { placePods, readPodOffloading, stopPlacingPods } from "./pod-placement.js";
import {
  findUnreachableProviders,
  answeringNodes,
  offloadingLeftOnProvider,
  offloadingLeftRemedy,
  type UnreachableOffloadingProvider,
} from "./provider-reach.js";

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
  /** Where the namespace's pods may run (pod-placement.ts). @default "local-and-remote" */
  readonly podOffloading?: PodOffloading;
  /** The token offloaded pods that mount one get. @default "consumer" */
  readonly serviceAccountTokens?: ServiceAccountTokens;
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
 * The status of an offloading as refresh records it: `Ready`, or one line per provider that is
 * not: those found out of reach first (`provider a is unreachable: API server …: connection
 * refused (…)`), then what the consumer's agent reported of the others. Pure.
 */
export function offloadingStatus(
  reports: readonly RemoteNamespaceReport[],
  virtualNodes: readonly string[],
  unreachable: readonly UnreachableOffloadingProvider[],
): string {
  const gone = new Set(unreachable.map((u) => u.virtualNode));
  const problems = [
    ...unreachable.map(describeUnreachable),
    ...remoteProblems(
      reports,
      virtualNodes.filter((node) => !gone.has(node)),
    ),
  ];
  return problems.length > 0 ? problems.join("; ") : "Ready";
}

/** What refresh finds of a namespace's offloading: the agent's reports and the status; undefined when it is gone. */
export async function readOffloadingState(
  kc: k8s.KubeConfig,
  namespace: string,
): Promise<{ readonly remotes: RemoteNamespaceReport[]; readonly status: string } | undefined> {
  const live = await readNamespaceOffloading(kc, namespace);
  if (!live) return undefined;
  const remotes = live.status?.remotes ?? [];
  const unreachable = await findUnreachableProviders(kc, live.spec.virtualNodes, remotes, "refresh").catch(
    describeFailure(
      `${STEP}: reading the peerings of NamespaceOffloading ${namespace}/${NAMESPACE_OFFLOADING_NAME}`,
      serverOf(kc),
    ),
  );
  const refusing = await refusingProviders(
    kc,
    answeringNodes(live.spec.virtualNodes, unreachable),
    `NamespaceOffloading ${namespace}`,
  );
  return { remotes, status: offloadingStatus(remotes, live.spec.virtualNodes, [...unreachable, ...refusing]) };
}

/** What an import finds of a namespace's offloading on the consumer (each part undefined when absent). */
export interface OffloadingFound {
  /** The consumer's API server (the endpoint of every read). */
  readonly server: string;
  readonly consumer?: ClusterIdentity;
  readonly offloading?: NamespaceOffloading;
  /** The policy its pods are placed by. */
  readonly podOffloading?: PodOffloading;
  /** What the consumer's agent last reported wrong of each provider (none: Ready). */
  readonly problems?: readonly string[];
  /** The URN of the resource that wrote the object, when recorded. */
  readonly owner?: string;
}

/** Everything an import reads of the offloading of `namespace` (nothing is written). */
export async function readOffloadingForImport(kc: k8s.KubeConfig, namespace: string): Promise<OffloadingFound> {
  const server = serverOf(kc);
  const consumer = await getClusterIdentity(kc);
  if (!consumer) return { server };
  const offloading = await readNamespaceOffloading(kc, namespace);
  if (!offloading) return { server, consumer };
  const owner = offloading.metadata.annotations?.[OFFLOADING_OWNER_ANNOTATION];
  return {
    server,
    consumer,
    offloading,
    podOffloading: await readPodOffloading(kc, { namespace }, STEP),
    problems: remoteProblems(offloading.status?.remotes ?? [], offloading.spec.virtualNodes),
    ...(owner ? { owner } : {}),
  };
}

/**
 * Writes the NamespaceOffloading and waits until each provider made the remote namespace. A short
 * look at every provider it needs (those it names, and those it named before, whose namespace goes)
 * comes first: one out of reach fails it at once, changing nothing. A provider that refuses the
 * namespace fails the wait at once, with its reason. Then the namespace's pods are placed by its
 * policy (pod-placement.ts), from then on. Resolves the reports.
 */
export async function offloadNamespace(
  kc: k8s.KubeConfig,
  request: OffloadingRequest,
  timeoutMs: number,
  progress: Progress,
): Promise<RemoteNamespaceReport[]> {
  const endpoint = serverOf(kc);
  const where = `NamespaceOffloading ${request.namespace}/${NAMESPACE_OFFLOADING_NAME}`;
  progress.step(
    1,
    2,
    `${STEP}: looking at the providers of ${request.virtualNodes.join(", ")}, then writing ${where} on ${endpoint}`,
  );
  const before = await readNamespaceOffloading(kc, request.namespace);
  const unreachable = await findUnreachableProviders(
    kc,
    [...new Set([...request.virtualNodes, ...(before?.spec.virtualNodes ?? [])])],
    before?.status?.remotes ?? [],
    STEP,
  ).catch(describeFailure(`${STEP}: reading the peerings of ${where}`, endpoint));
  if (isNonEmpty(unreachable)) throw providerUnreachableError(unreachable, "NamespaceOffloading");
  const refusing = await refusingProviders(kc, request.virtualNodes, where);
  if (refusing.length > 0) throw rightsRefusedError(STEP, refusing);
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
    spec: {
      remoteNamespace: request.remoteNamespace,
      virtualNodes: [...request.virtualNodes],
      ...(request.serviceAccountTokens ? { serviceAccountTokens: request.serviceAccountTokens } : {}),
    },
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
  const made = await poll(
    { step: STEP, object: `${where}: remote namespaces made`, endpoint },
    { timeoutMs, intervalMs: 500 },
    async () => {
      const live = await readNamespaceOffloading(kc, request.namespace);
      if (!live) return { failed: true, reason: `${where} was deleted meanwhile` };
      const reports = live.status?.observedGeneration === generation ? (live.status.remotes ?? []) : [];
      // A refusal, or a provider refusing the peering's identity a right (in-band, where this is
      // the only look): no wait changes either.
      const refused = reports.filter((r) => r.phase === "Refused" || r.phase === "Forbidden");
      if (refused.length > 0) return { failed: true, reason: remoteProblems(refused, request.virtualNodes).join("; ") };
      const problems = remoteProblems(reports, request.virtualNodes);
      return problems.length === 0 ? { done: true, value: reports } : { done: false, state: problems.join("; ") };
    },
  );
  await placePods(kc, { namespace: request.namespace }, request.podOffloading ?? DEFAULT_POD_OFFLOADING, STEP);
  return made;
}

/**
 * What a withdrawal still waits for, for its deadline's message: the pods on the offloading's
 * virtual nodes, with what owns each (a controller that keeps making pods the virtual nodes take
 * is what blocks), else the remote namespaces not gone yet. Pure.
 */
export function withdrawalState(
  pods: readonly k8s.V1Pod[],
  virtualNodes: readonly string[],
  reports: readonly RemoteNamespaceReport[],
): string {
  const offloaded = pods.filter((p) => p.spec?.nodeName && virtualNodes.includes(p.spec.nodeName));
  if (offloaded.length > 0) {
    const named = offloaded.map((p) => {
      const owner = p.metadata?.ownerReferences?.find((o) => o.controller) ?? p.metadata?.ownerReferences?.[0];
      return `${p.metadata?.name} on ${p.spec!.nodeName}${owner ? ` (made by ${owner.kind} ${owner.name})` : ""}`;
    });
    return `${offloaded.length} pod(s) still on the virtual nodes, being removed: ${named.join(", ")}`;
  }
  const left = reports.map((r) => `${r.virtualNode}: ${r.phase}${r.message ? ` (${r.message})` : ""}`);
  return left.length > 0
    ? `no pod on the virtual nodes; remote namespaces not removed yet: ${left.join("; ")}`
    : "no pod on the virtual nodes; waiting for the consumer's agent to let it go";
}

const isNonEmpty = <T>(list: readonly T[]): list is readonly [T, ...T[]] => list.length > 0;

/** How a withdrawal treats providers that cannot be reached. */
export interface WithdrawOptions {
  /** Withdraw from the consumer even when a provider cannot be reached, leaving its side there. */
  readonly force: boolean;
  readonly timeoutMs: number;
}

/** A provider a forced withdrawal could not reach, and what it left there. */
export interface LeftOnProvider {
  readonly provider: UnreachableOffloadingProvider;
  /** One line per thing left, for the user. */
  readonly left: readonly string[];
  /** How they go once the provider is back. */
  readonly remedy: string;
}

/**
 * Removes the consumer's pods of `namespace` bound to `virtualNode` at once (grace 0), as the
 * kubelet of a node whose provider is gone never will; resolves their names.
 */
async function removePodsHere(kc: k8s.KubeConfig, namespace: string, virtualNode: string): Promise<string[]> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const endpoint = serverOf(kc);
  const pods = (
    await core
      .listNamespacedPod({ namespace, fieldSelector: `spec.nodeName=${virtualNode}` })
      .catch(describeFailure(`${STEP}: listing the pods of ${namespace} on virtual node ${virtualNode}`, endpoint))
  ).items;
  for (const pod of pods) {
    const { name, uid } = pod.metadata!;
    await core
      .deleteNamespacedPod({ name: name!, namespace, body: { gracePeriodSeconds: 0, preconditions: { uid } } })
      .catch((error: unknown) => {
        if (!isNotFound(error) && (error as { code?: number }).code !== 409)
          describeFailure(`${STEP}: removing Pod ${namespace}/${name}`, endpoint)(error);
      });
  }
  return pods.map((p) => `${namespace}/${p.metadata!.name}`);
}

/**
 * Deletes the namespace's NamespaceOffloading and waits until it is gone: the consumer's agent
 * removes its pods from the virtual nodes (and so from the providers) and the remote namespaces
 * first. A short look at each provider it names comes first: one out of reach fails it at once,
 * changing nothing, unless `force`: then those providers are marked given up on the object (the
 * agent leaves them be), the namespace's pods on their virtual nodes are removed here, and what
 * stays on each is resolved (nothing when every provider answered).
 */
export async function withdrawNamespace(
  kc: k8s.KubeConfig,
  namespace: string,
  options: WithdrawOptions,
  progress: Progress,
): Promise<LeftOnProvider[]> {
  const endpoint = serverOf(kc);
  const where = `NamespaceOffloading ${namespace}/${NAMESPACE_OFFLOADING_NAME}`;
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const live = await readNamespaceOffloading(kc, namespace);
  progress.step(1, 2, `${STEP}: looking at the providers of ${where}`);
  const unreachable = live
    ? await findUnreachableProviders(kc, live.spec.virtualNodes, live.status?.remotes ?? [], STEP).catch(
        describeFailure(`${STEP}: reading the peerings of ${where}`, endpoint),
      )
    : [];
  if (isNonEmpty(unreachable) && !options.force) throw providerUnreachableError(unreachable, "NamespaceOffloading");
  // A provider that refuses the consumer's identity what the withdrawal needs is as out of reach.
  const refusing = live ? await refusingProviders(kc, answeringNodes(live.spec.virtualNodes, unreachable), where) : [];
  if (refusing.length > 0 && !options.force) throw rightsRefusedError(STEP, refusing);
  unreachable.push(...refusing);
  // First, so that the pods a controller makes while the rest goes stay on the consumer. Not
  // confirmed by a dry-run pod: the namespace may be going already, and then refuses any pod.
  await stopPlacingPods(kc, { namespace }, STEP);
  const abandoned: LeftOnProvider[] = [];
  if (live && isNonEmpty(unreachable)) {
    progress.step(
      2,
      2,
      `${STEP}: ${unreachable.map(describeUnreachable).join("; ")}; deleting ${where} on ${endpoint} and leaving ` +
        `${unreachable.length === 1 ? "that provider's" : "those providers'"} side (force)`,
    );
    await api
      .patchNamespacedCustomObject(
        {
          ...group,
          namespace,
          name: NAMESPACE_OFFLOADING_NAME,
          body: {
            metadata: {
              annotations: { [ABANDONED_VIRTUAL_NODES_ANNOTATION]: unreachable.map((u) => u.virtualNode).join(",") },
            },
          },
        },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      )
      .catch(describeFailure(`${STEP}: marking the unreachable providers on ${where}`, endpoint));
    for (const provider of unreachable) {
      const pods = await removePodsHere(kc, namespace, provider.virtualNode);
      abandoned.push({
        provider,
        left: offloadingLeftOnProvider(provider, live.spec.remoteNamespace, pods),
        remedy: offloadingLeftRemedy(provider, live.spec.remoteNamespace),
      });
    }
  } else {
    progress.step(2, 2, `${STEP}: deleting ${where} on ${endpoint}; its pods and remote namespaces go first`);
  }
  const existed = await readOptional(() =>
    api.deleteNamespacedCustomObject({ ...group, namespace, name: NAMESPACE_OFFLOADING_NAME }),
  ).catch(describeFailure(`${STEP}: deleting ${where}`, endpoint));
  if (existed !== undefined) {
    const context = { step: STEP, object: `${where} deleted`, endpoint };
    await poll(context, { timeoutMs: options.timeoutMs, intervalMs: 500 }, async () =>
      (await readNamespaceOffloading(kc, namespace))
        ? { done: false, state: "the consumer's agent has not let it go yet" }
        : { done: true, value: undefined },
    ).catch(async (error: unknown) => {
      // What blocks is looked up once, when the wait is over, not on every look of it.
      const still = (error as Partial<WaitTimeoutError>).isWaitTimeoutError
        ? await readNamespaceOffloading(kc, namespace)
        : undefined;
      if (!still) throw error;
      const state =
        abandoned.length > 0
          ? "the consumer's agent has not let it go yet (it leaves the unreachable providers' side be)"
          : withdrawalState(
              (await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace })).items,
              still.spec.virtualNodes,
              still.status?.remotes ?? [],
            );
      throw new WaitTimeoutError(context, options.timeoutMs, state);
    });
  }
  await deleteOptional(() =>
    kc.makeApiClient(k8s.RbacAuthorizationV1Api).deleteNamespacedRoleBinding({ name: REFLECTOR_ROLE, namespace }),
  ).catch(describeFailure(`${STEP}: deleting RoleBinding ${namespace}/${REFLECTOR_ROLE}`, endpoint));
  return abandoned;
}
