/**
 * Which namespaces an `OffloadingSelector` offloads, decided from labels alone (pure): those whose
 * labels match its Kubernetes label selector, except the cluster's own (`kube-*`, the project's
 * system namespace) and the namespaces the project made itself (a provider's tenant and remote
 * namespaces): a label on one of those never offloads it. A namespace being deleted is not
 * selected either: its offloading is withdrawn as it goes.
 */
import type { V1Namespace } from "@kubernetes/client-node";
import { MANAGED_BY, MANAGED_BY_LABEL, SYSTEM_NAMESPACE } from "../api/names.js";
import type { LabelRequirement, NamespaceLabelSelector } from "../api/offloading.js";

/** Namespaces that are never offloaded, whatever their labels (besides `kube-*`). */
const NEVER_SELECTED = new Set([SYSTEM_NAMESPACE]);

const OPERATORS: readonly LabelRequirement["operator"][] = ["In", "NotIn", "Exists", "DoesNotExist"];

/** A label key: an optional DNS-subdomain prefix and a name of up to 63 characters. */
const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** A label value: empty, or up to 63 characters. */
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/**
 * What is wrong with `selector` as a namespace selector, one line per fault, each naming the field
 * (`matchLabels["team"]`, `matchExpressions[0].operator`); empty when it is valid. A selector that
 * selects every namespace (no requirement at all) is refused: offloading a whole cluster by accident
 * is not a default anyone wants.
 */
export function selectorFaults(selector: unknown): string[] {
  if (typeof selector !== "object" || selector === null || Array.isArray(selector))
    return ["must be an object with matchLabels and/or matchExpressions"];
  const { matchLabels, matchExpressions, ...rest } = selector as Record<string, unknown>;
  const faults = Object.keys(rest).map((key) => `${key}: not a field of a label selector`);
  let requirements = 0;
  if (matchLabels !== undefined) {
    if (typeof matchLabels !== "object" || matchLabels === null || Array.isArray(matchLabels)) {
      faults.push("matchLabels: must be a map of label keys to values");
    } else {
      for (const [key, value] of Object.entries(matchLabels)) {
        requirements++;
        if (!LABEL_KEY.test(key)) faults.push(`matchLabels[${JSON.stringify(key)}]: not a valid label key`);
        if (typeof value !== "string" || !LABEL_VALUE.test(value))
          faults.push(`matchLabels[${JSON.stringify(key)}]: ${JSON.stringify(value)} is not a valid label value`);
      }
    }
  }
  if (matchExpressions !== undefined) {
    if (!Array.isArray(matchExpressions)) {
      faults.push("matchExpressions: must be a list of {key, operator, values}");
    } else {
      matchExpressions.forEach((expression: unknown, index) => {
        requirements++;
        faults.push(...requirementFaults(expression).map((fault) => `matchExpressions[${index}]${fault}`));
      });
    }
  }
  if (requirements === 0 && faults.length === 0)
    faults.push("selects every namespace: give at least one label in matchLabels or matchExpressions");
  return faults;
}

/** The faults of one requirement, each starting with the field (`.operator: …`). */
function requirementFaults(expression: unknown): string[] {
  if (typeof expression !== "object" || expression === null) return [": must be {key, operator, values}"];
  const { key, operator, values } = expression as Record<string, unknown>;
  const faults: string[] = [];
  if (typeof key !== "string" || !LABEL_KEY.test(key))
    faults.push(`.key: ${JSON.stringify(key)} is not a valid label key`);
  if (!OPERATORS.includes(operator as LabelRequirement["operator"])) {
    faults.push(`.operator: must be ${OPERATORS.join(", ")}, not ${JSON.stringify(operator)}`);
    return faults;
  }
  const needsValues = operator === "In" || operator === "NotIn";
  if (needsValues) {
    if (!Array.isArray(values) || values.length === 0)
      faults.push(`.values: ${String(operator)} needs at least one value`);
    else if (values.some((v) => typeof v !== "string" || !LABEL_VALUE.test(v)))
      faults.push(`.values: each must be a valid label value`);
  } else if (values !== undefined && (!Array.isArray(values) || values.length > 0)) {
    faults.push(`.values: ${String(operator)} takes no values`);
  }
  return faults;
}

/** Whether `labels` satisfy `selector` (every matchLabels entry and every expression), as Kubernetes decides it. */
export function labelsMatch(labels: Readonly<Record<string, string>>, selector: NamespaceLabelSelector): boolean {
  const has = (key: string): boolean => Object.prototype.hasOwnProperty.call(labels, key);
  return (
    Object.entries(selector.matchLabels ?? {}).every(([key, value]) => has(key) && labels[key] === value) &&
    (selector.matchExpressions ?? []).every((r) => {
      switch (r.operator) {
        case "In":
          return has(r.key) && (r.values ?? []).includes(labels[r.key]!);
        case "NotIn":
          return !has(r.key) || !(r.values ?? []).includes(labels[r.key]!);
        case "Exists":
          return has(r.key);
        case "DoesNotExist":
          return !has(r.key);
      }
    })
  );
}

/** Whether namespace `namespace` may be offloaded at all by a selector (see the module's comment). */
export function selectable(namespace: V1Namespace): boolean {
  const name = namespace.metadata?.name ?? "";
  return (
    !NEVER_SELECTED.has(name) &&
    !name.startsWith("kube-") &&
    namespace.metadata?.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY &&
    !namespace.metadata?.deletionTimestamp &&
    namespace.status?.phase !== "Terminating"
  );
}

/** The names of the namespaces `selector` offloads, sorted. */
export function selectedNamespaces(namespaces: readonly V1Namespace[], selector: NamespaceLabelSelector): string[] {
  return namespaces
    .filter((ns) => selectable(ns) && labelsMatch(ns.metadata?.labels ?? {}, selector))
    .map((ns) => ns.metadata!.name!)
    .sort();
}
