/**
 * The steps of a `NamespaceOffloading` resource that selects its namespaces by label, on the
 * consumer cluster: write the `OffloadingSelector` and the pod placement of the namespaces it
 * picks, and wait until every namespace it picks is offloaded; delete it and wait until every
 * namespace it offloaded is withdrawn; read what the agent last reported. The consumer's agent
 * writes and deletes each namespace's `NamespaceOffloading` (agent/offloading/selected-namespaces.ts),
 * so a namespace made or labelled later is offloaded without another `pulumi up`.
 */
import { createHash } from "node:crypto";
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  SYSTEM_NAMESPACE,
} from "../api/names.js";
import {
  DEFAULT_POD_OFFLOADING,
  SELECTED_BY_LABEL,
  type NamespaceLabelSelector,
  type NamespaceOffloading,
  type OffloadingSelector,
  type PodOffloading,
  type ServiceAccountTokens,
  type SelectedNamespaceReport,
} from "../api/offloading.js";
import { describeFailure, ensureObject, readOptional, serverOf } from "../kube/client.js";
import type { Progress } from "../operation/progress.js";
import { describeUnreachable, providerUnreachableError } from "../operation/unreachable.js";
import { poll, WaitTimeoutError } from "../wait/poll.js";
import { withdrawNamespace, type LeftOnProvider, type WithdrawOptions } from "./namespace-offloading.js";
import { placePods, stopPlacingPods, type PlacementScope } from "./pod-placement.js";
import { answeringNodes, findUnreachableProviders } from "./provider-reach.js";
import { refusingProviders, rightsRefusedError } from "./provider-rights.js";
import { listOffloading } from "./objects.js";

const STEP = "offloading";

/** What to offload by label, and where. */
export interface SelectorRequest {
  /** The OffloadingSelector's name ({@link selectorObjectName}). */
  readonly name: string;
  readonly namespaceSelector: NamespaceLabelSelector;
  /** The virtual nodes of the peerings the selected namespaces may use. */
  readonly virtualNodes: readonly string[];
  readonly naming: "suffixed" | "same";
  readonly consumerClusterId: string;
  /** @default "local-and-remote" */
  readonly podOffloading?: PodOffloading;
  /** The token offloaded pods that mount one get. @default "consumer" */
  readonly serviceAccountTokens?: ServiceAccountTokens;
}

/**
 * The OffloadingSelector's name for the resource of URN `urn`: its Pulumi name as a DNS label, and
 * a digest of the whole URN, so that two stacks' resources of one name never share one. Pure.
 */
export function selectorObjectName(urn: string): string {
  const resourceName = urn.slice(urn.lastIndexOf("::") + 2);
  const readable = resourceName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  const digest = createHash("sha256").update(urn).digest("hex").slice(0, 8);
  return readable ? `${readable}-${digest}` : `selector-${digest}`;
}

const group = { group: API_GROUP, version: API_VERSION, plural: "offloadingselectors", namespace: SYSTEM_NAMESPACE };

const scopeOf = (name: string, namespaceSelector: NamespaceLabelSelector): PlacementScope => ({
  selector: name,
  namespaceSelector,
});

/** Reads OffloadingSelector `name`; undefined when there is none. */
export async function readOffloadingSelector(
  kc: k8s.KubeConfig,
  name: string,
): Promise<OffloadingSelector | undefined> {
  return (await readOptional(() =>
    kc.makeApiClient(k8s.CustomObjectsApi).getNamespacedCustomObject({ ...group, name }),
  ).catch(describeFailure(`${STEP}: reading OffloadingSelector ${SYSTEM_NAMESPACE}/${name}`, serverOf(kc)))) as
    OffloadingSelector | undefined;
}

/** One line per selected namespace that is not Ready (`shop: Pending: …`); empty when all are. Pure. */
export function selectedProblems(reports: readonly SelectedNamespaceReport[]): string[] {
  return reports
    .filter((r) => r.phase !== "Ready")
    .map((r) => `namespace ${r.namespace}: ${r.phase}${r.message ? `: ${r.message}` : ""}`);
}

/**
 * Writes the OffloadingSelector and the placement of its namespaces' pods, and waits until the
 * agent offloaded every namespace it picks (none picked yet is done: later ones follow without
 * pulumi). A provider out of reach fails it at once, changing nothing; a namespace refused by a
 * provider, or offloaded by something else already, fails the wait at once with its reason.
 * Resolves the agent's reports.
 */
export async function offloadSelectedNamespaces(
  kc: k8s.KubeConfig,
  request: SelectorRequest,
  timeoutMs: number,
  progress: Progress,
): Promise<SelectedNamespaceReport[]> {
  const endpoint = serverOf(kc);
  const where = `OffloadingSelector ${SYSTEM_NAMESPACE}/${request.name}`;
  progress.step(1, 2, `${STEP}: looking at the providers of ${request.virtualNodes.join(", ")}, then writing ${where}`);
  const before = await readOffloadingSelector(kc, request.name);
  const unreachable = await findUnreachableProviders(
    kc,
    [...new Set([...request.virtualNodes, ...(before?.spec.virtualNodes ?? [])])],
    [],
    STEP,
  ).catch(describeFailure(`${STEP}: reading the peerings of ${where}`, endpoint));
  const [first, ...more] = unreachable;
  if (first) throw providerUnreachableError([first, ...more], "NamespaceOffloading");
  const refusing = await refusingProviders(kc, request.virtualNodes, where);
  if (refusing.length > 0) throw rightsRefusedError(STEP, refusing);
  const object: OffloadingSelector = {
    apiVersion: API_GROUP_VERSION,
    kind: "OffloadingSelector",
    metadata: { name: request.name, namespace: SYSTEM_NAMESPACE, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
    spec: {
      namespaceSelector: request.namespaceSelector,
      virtualNodes: [...request.virtualNodes],
      naming: request.naming,
      consumerClusterId: request.consumerClusterId,
      ...(request.serviceAccountTokens ? { serviceAccountTokens: request.serviceAccountTokens } : {}),
    },
  };
  // Placement first: a namespace the agent offloads has its pods placed from its first.
  await placePods(
    kc,
    scopeOf(request.name, request.namespaceSelector),
    request.podOffloading ?? DEFAULT_POD_OFFLOADING,
    STEP,
  );
  const applied = await ensureObject(kc, object).catch(describeFailure(`${STEP}: applying ${where}`, endpoint));
  const generation = applied.metadata?.generation ?? 1;
  progress.step(2, 2, `${STEP}: waiting for the consumer's agent to offload the namespaces ${where} picks`);
  return poll(
    { step: STEP, object: `${where}: namespaces offloaded`, endpoint },
    { timeoutMs, intervalMs: 500 },
    async () => {
      const live = await readOffloadingSelector(kc, request.name);
      if (!live) return { failed: true, reason: `${where} was deleted meanwhile` };
      if (live.status?.observedGeneration !== generation)
        return { done: false, state: "the consumer's agent has not answered this version yet" };
      const reports = live.status.namespaces ?? [];
      const final = reports.filter((r) => r.phase === "Refused" || r.phase === "Conflict");
      if (final.length > 0) return { failed: true, reason: selectedProblems(final).join("; ") };
      const problems = selectedProblems(reports);
      return problems.length === 0 ? { done: true, value: reports } : { done: false, state: problems.join("; ") };
    },
  );
}

/** What refresh finds of a selector: the agent's reports and the status (`Ready`, or what is not); undefined when it is gone. */
export async function readSelectorState(
  kc: k8s.KubeConfig,
  name: string,
): Promise<{ readonly namespaces: SelectedNamespaceReport[]; readonly status: string } | undefined> {
  const live = await readOffloadingSelector(kc, name);
  if (!live) return undefined;
  const namespaces = live.status?.namespaces ?? [];
  const unreachable = await findUnreachableProviders(kc, live.spec.virtualNodes, [], "refresh").catch(
    describeFailure(`${STEP}: reading the peerings of OffloadingSelector ${SYSTEM_NAMESPACE}/${name}`, serverOf(kc)),
  );
  const refusing = await refusingProviders(
    kc,
    answeringNodes(live.spec.virtualNodes, unreachable),
    `OffloadingSelector ${SYSTEM_NAMESPACE}/${name}`,
  );
  const problems = [...[...unreachable, ...refusing].map(describeUnreachable), ...selectedProblems(namespaces)];
  return { namespaces, status: problems.length > 0 ? problems.join("; ") : "Ready" };
}

/**
 * Withdraws every namespace selector `name` offloaded, then the selector: its pod placement goes
 * first (pods made from then on stay here), then the selector is deleted (its agent writes no new
 * offloading from then on), then each namespace is withdrawn as a `NamespaceOffloading` resource's
 * is (with `force`, a provider out of reach is left, and said so); last, the selector is let go by
 * the agent. Resolves what a forced withdrawal left on providers.
 */
export async function withdrawSelectedNamespaces(
  kc: k8s.KubeConfig,
  name: string,
  options: WithdrawOptions,
  progress: Progress,
): Promise<LeftOnProvider[]> {
  const endpoint = serverOf(kc);
  const where = `OffloadingSelector ${SYSTEM_NAMESPACE}/${name}`;
  const live = await readOffloadingSelector(kc, name);
  if (!live) return [];
  if (!options.force) {
    const unreachable = await findUnreachableProviders(kc, live.spec.virtualNodes, [], STEP).catch(
      describeFailure(`${STEP}: reading the peerings of ${where}`, endpoint),
    );
    const [first, ...more] = unreachable;
    if (first) throw providerUnreachableError([first, ...more], "NamespaceOffloading");
    const refusing = await refusingProviders(kc, live.spec.virtualNodes, where);
    if (refusing.length > 0) throw rightsRefusedError(STEP, refusing);
  }
  await stopPlacingPods(kc, scopeOf(name, live.spec.namespaceSelector), STEP);
  await readOptional(() =>
    kc.makeApiClient(k8s.CustomObjectsApi).deleteNamespacedCustomObject({ ...group, name }),
  ).catch(describeFailure(`${STEP}: deleting ${where}`, endpoint));
  const selected = ((await listOffloading<NamespaceOffloading>(kc, "namespaceoffloadings")) ?? []).filter(
    (o) => o.metadata.labels?.[SELECTED_BY_LABEL] === name,
  );
  const left: LeftOnProvider[] = [];
  for (const offloading of selected) {
    left.push(...(await withdrawNamespace(kc, offloading.metadata.namespace!, options, progress)));
  }
  const context = { step: STEP, object: `${where} deleted`, endpoint };
  await poll(context, { timeoutMs: options.timeoutMs, intervalMs: 500 }, async () =>
    (await readOffloadingSelector(kc, name))
      ? { done: false, state: "the consumer's agent has not let it go yet" }
      : { done: true, value: undefined },
  ).catch(async (error: unknown) => {
    const still = (error as Partial<WaitTimeoutError>).isWaitTimeoutError
      ? await readOffloadingSelector(kc, name)
      : undefined;
    if (!still) throw error;
    const problems = selectedProblems(still.status?.namespaces ?? []);
    throw new WaitTimeoutError(
      context,
      options.timeoutMs,
      problems.length > 0 ? problems.join("; ") : "the consumer's agent has not let it go yet",
    );
  });
  return left;
}
