/**
 * Namespaces offloaded by their labels: for each `OffloadingSelector` (system namespace), the
 * consumer's agent writes a `NamespaceOffloading` into every namespace the selector picks
 * (core/offloading/namespace-selector.ts), with the RoleBinding that lets it read the
 * namespace's ConfigMaps and Secrets, and deletes it from a namespace that stops matching; the
 * pass of consumer-namespaces.ts then does the rest, as for any offloading (remote namespaces
 * made, pods drained before they go). So a namespace made later, by a CI system or a tenant
 * operator, is offloaded without anyone running `pulumi up`. A selector being deleted withdraws
 * every namespace it offloaded before its finalizer goes.
 *
 * It never touches an offloading it did not write (one made by a `NamespaceOffloading` resource, or
 * by another selector): such a namespace is reported `Conflict` and left as it is.
 */
import * as k8s from "@kubernetes/client-node";
import { isDeepStrictEqual } from "node:util";
import {
  API_GROUP,
  API_GROUP_VERSION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  NAMESPACE_OFFLOADING_NAME,
  SELECTED_BY_LABEL,
  SYSTEM_NAMESPACE,
  type NamespaceOffloading,
  type OffloadingSelector,
  type SelectedNamespaceReport,
} from "../../core/api/index.js";
import { forgeReflectorBinding, REFLECTOR_ROLE } from "../../core/cluster/agent-rbac.js";
import { deleteOptional, describeFailure, ensureObject, serverOf } from "../../core/kube/client.js";
import { selectedNamespaces } from "../../core/offloading/namespace-selector.js";
import {
  deleteOffloading,
  listOffloading,
  setOffloadingFinalizer,
  writeOffloadingStatus,
} from "../../core/offloading/objects.js";
import { remoteNamespaceName } from "../../core/offloading/reflection.js";
import type { Reporter } from "../reporter.js";

const STEP = "offloading (selector)";

/** Finalizer the consumer's agent keeps on an OffloadingSelector until every namespace it offloaded is withdrawn. */
export const SELECTOR_FINALIZER = `${API_GROUP}/offloading-selector`;

/** What one selector's pass sees of the cluster. */
interface ClusterView {
  readonly namespaces: readonly k8s.V1Namespace[];
  /** Every NamespaceOffloading, by namespace. */
  readonly offloadings: ReadonlyMap<string, NamespaceOffloading>;
  /** The reflector RoleBindings selectors made, by selector name: their namespaces. */
  readonly bindings: ReadonlyMap<string, readonly string[]>;
}

/** The NamespaceOffloading a selector writes into `namespace`. Pure. */
export function forgeSelectedOffloading(selector: OffloadingSelector, namespace: string): NamespaceOffloading {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: "NamespaceOffloading",
    metadata: {
      name: NAMESPACE_OFFLOADING_NAME,
      namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [SELECTED_BY_LABEL]: selector.metadata.name! },
    },
    spec: {
      remoteNamespace: remoteNamespaceName(namespace, selector.spec.consumerClusterId, selector.spec.naming),
      virtualNodes: [...selector.spec.virtualNodes],
      ...(selector.spec.serviceAccountTokens ? { serviceAccountTokens: selector.spec.serviceAccountTokens } : {}),
    },
  };
}

/** The report of a namespace whose offloading this selector wrote, from the offloading's own status. Pure. */
export function selectedReport(offloading: NamespaceOffloading): SelectedNamespaceReport {
  const base = { namespace: offloading.metadata.namespace!, remoteNamespace: offloading.spec.remoteNamespace };
  if (offloading.metadata.deletionTimestamp)
    return { ...base, phase: "Pending", message: "an earlier offloading of it is being withdrawn" };
  const remotes = offloading.status?.remotes ?? [];
  const refused = remotes.filter((r) => r.phase === "Refused");
  if (refused.length > 0)
    return {
      ...base,
      phase: "Refused",
      message: refused.map((r) => `${r.virtualNode}: ${r.message ?? ""}`).join("; "),
    };
  const ready = offloading.spec.virtualNodes.every((node) =>
    remotes.some((r) => r.virtualNode === node && r.phase === "Ready"),
  );
  if (ready && offloading.status?.observedGeneration === (offloading.metadata.generation ?? 1))
    return { ...base, phase: "Ready" };
  const waiting = remotes.filter((r) => r.phase !== "Ready").map((r) => `${r.virtualNode}: ${r.phase}`);
  return { ...base, phase: "Pending", ...(waiting.length > 0 ? { message: waiting.join("; ") } : {}) };
}

/** Writes the offloading and reflector binding of one selected namespace; resolves its report. */
async function offloadSelected(
  kc: k8s.KubeConfig,
  selector: OffloadingSelector,
  namespace: string,
  live: NamespaceOffloading | undefined,
  hasBinding: boolean,
): Promise<SelectedNamespaceReport> {
  const name = selector.metadata.name!;
  const writer = live?.metadata.labels?.[SELECTED_BY_LABEL];
  if (live && writer !== name) {
    const by = writer ? `OffloadingSelector ${writer}` : "a NamespaceOffloading resource";
    return {
      namespace,
      remoteNamespace: live.spec.remoteNamespace,
      phase: "Conflict",
      message: `offloaded by ${by} already: left as it is`,
    };
  }
  if (live?.metadata.deletionTimestamp) return selectedReport(live);
  let wanted: NamespaceOffloading;
  try {
    wanted = forgeSelectedOffloading(selector, namespace);
  } catch (error) {
    return { namespace, remoteNamespace: "", phase: "Refused", message: (error as Error).message };
  }
  const endpoint = serverOf(kc);
  if (!hasBinding) {
    const binding = forgeReflectorBinding(namespace);
    binding.metadata!.labels = { ...binding.metadata!.labels, [SELECTED_BY_LABEL]: name };
    await ensureObject(kc, binding).catch(
      describeFailure(`${STEP}: applying RoleBinding ${namespace}/${REFLECTOR_ROLE}`, endpoint),
    );
  }
  if (!live || !isDeepStrictEqual(live.spec, wanted.spec)) {
    const applied = await ensureObject(kc, wanted).catch(
      describeFailure(`${STEP}: applying NamespaceOffloading ${namespace}/${NAMESPACE_OFFLOADING_NAME}`, endpoint),
    );
    return selectedReport(applied);
  }
  return selectedReport(live);
}

/**
 * Advances one selector: offloads the namespaces it picks, withdraws those it offloaded that it no
 * longer picks (all of them once it is being deleted), removes the RoleBindings of namespaces no
 * longer offloaded, and, when it is being deleted and nothing of it is left, its finalizer.
 * Resolves whether something is still under way.
 */
async function advanceSelector(
  kc: k8s.KubeConfig,
  selector: OffloadingSelector,
  view: ClusterView,
  reporter: Reporter,
): Promise<boolean> {
  const name = selector.metadata.name!;
  const deleting = Boolean(selector.metadata.deletionTimestamp);
  if (deleting && !(selector.metadata.finalizers ?? []).includes(SELECTOR_FINALIZER)) return false;
  if (!deleting) await setOffloadingFinalizer(kc, "offloadingselectors", selector, SELECTOR_FINALIZER, true);
  const wanted = deleting ? [] : selectedNamespaces(view.namespaces, selector.spec.namespaceSelector);
  const reports: SelectedNamespaceReport[] = [];
  const bound = view.bindings.get(name) ?? [];
  for (const namespace of wanted)
    reports.push(
      await offloadSelected(kc, selector, namespace, view.offloadings.get(namespace), bound.includes(namespace)),
    );
  const mine = [...view.offloadings.values()].filter((o) => o.metadata.labels?.[SELECTED_BY_LABEL] === name);
  for (const offloading of mine.filter((o) => !wanted.includes(o.metadata.namespace!))) {
    const namespace = offloading.metadata.namespace!;
    if (!offloading.metadata.deletionTimestamp) {
      await deleteOffloading(kc, "namespaceoffloadings", namespace, NAMESPACE_OFFLOADING_NAME);
      reporter.info(`${STEP}: OffloadingSelector ${name}: withdrawing namespace ${namespace}`);
    }
    reports.push({
      namespace,
      remoteNamespace: offloading.spec.remoteNamespace,
      phase: "Withdrawing",
      message: "no longer selected: its pods and remote namespaces are being removed",
    });
  }
  // A namespace whose offloading is gone, and that is not selected, keeps no right of the agent.
  let bindingsLeft = 0;
  for (const namespace of bound) {
    if (wanted.includes(namespace) || view.offloadings.get(namespace)?.metadata.labels?.[SELECTED_BY_LABEL] === name) {
      bindingsLeft++;
      continue;
    }
    await deleteOptional(() =>
      kc.makeApiClient(k8s.RbacAuthorizationV1Api).deleteNamespacedRoleBinding({ name: REFLECTOR_ROLE, namespace }),
    ).catch(describeFailure(`${STEP}: deleting RoleBinding ${namespace}/${REFLECTOR_ROLE}`, serverOf(kc)));
  }
  if (deleting) {
    if (reports.length > 0 || bindingsLeft > 0) return true;
    await setOffloadingFinalizer(kc, "offloadingselectors", selector, SELECTOR_FINALIZER, false);
    reporter.info(`${STEP}: OffloadingSelector ${name}: every namespace it offloaded is withdrawn`);
    return false;
  }
  const status = { observedGeneration: selector.metadata.generation ?? 1, namespaces: reports };
  if (!isDeepStrictEqual(selector.status ?? {}, status))
    await writeOffloadingStatus(kc, "offloadingselectors", selector, status);
  return reports.some((r) => r.phase === "Pending" || r.phase === "Withdrawing");
}

/**
 * One pass over the consumer's OffloadingSelectors; also withdraws the offloadings of a selector
 * that is gone without having withdrawn them (its finalizer removed by hand). Resolves whether
 * something is still under way.
 */
export async function advanceOffloadingSelectors(kc: k8s.KubeConfig, reporter: Reporter): Promise<boolean> {
  const selectors = await listOffloading<OffloadingSelector>(kc, "offloadingselectors", SYSTEM_NAMESPACE);
  const offloadings = await listOffloading<NamespaceOffloading>(kc, "namespaceoffloadings");
  if (!selectors || !offloadings) return false;
  const selected = offloadings.filter((o) => o.metadata.labels?.[SELECTED_BY_LABEL]);
  if (selectors.length === 0 && selected.length === 0) return false;
  const endpoint = serverOf(kc);
  const namespaces = (
    await kc
      .makeApiClient(k8s.CoreV1Api)
      .listNamespace()
      .catch(describeFailure(`${STEP}: listing namespaces`, endpoint))
  ).items;
  const bindings = new Map<string, string[]>();
  const listed = await kc
    .makeApiClient(k8s.RbacAuthorizationV1Api)
    .listRoleBindingForAllNamespaces({ labelSelector: SELECTED_BY_LABEL })
    .catch(describeFailure(`${STEP}: listing the RoleBindings selectors made`, endpoint));
  for (const binding of listed.items) {
    const by = binding.metadata!.labels![SELECTED_BY_LABEL]!;
    bindings.set(by, [...(bindings.get(by) ?? []), binding.metadata!.namespace!]);
  }
  const view: ClusterView = {
    namespaces,
    offloadings: new Map(offloadings.map((o) => [o.metadata.namespace!, o])),
    bindings,
  };
  let pending = false;
  for (const selector of selectors) {
    try {
      pending = (await advanceSelector(kc, selector, view, reporter)) || pending;
    } catch (error) {
      reporter.warn(`${STEP}: OffloadingSelector ${selector.metadata.name}: ${(error as Error).message}`);
      pending = true;
    }
  }
  const names = new Set(selectors.map((s) => s.metadata.name));
  for (const orphan of selected.filter((o) => !names.has(o.metadata.labels![SELECTED_BY_LABEL]))) {
    if (orphan.metadata.deletionTimestamp) continue;
    await deleteOffloading(kc, "namespaceoffloadings", orphan.metadata.namespace!, NAMESPACE_OFFLOADING_NAME);
    reporter.info(`${STEP}: withdrawing namespace ${orphan.metadata.namespace}: its selector is gone`);
    pending = true;
  }
  return pending;
}
