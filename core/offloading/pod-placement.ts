/**
 * Where the pods of an offloaded namespace may go, applied without touching workloads: a
 * `MutatingAdmissionPolicy` of the consumer's API server adds, to each pod created in the namespace,
 * the virtual node's toleration (and, under `remote`, a node selector of virtual nodes). A chart's
 * Deployment lands on the provider as it ships.
 *
 * Why a policy the API server evaluates (CEL) rather than a webhook the consumer's agent serves:
 * it holds while the agent is down or restarting (a webhook down would either refuse every pod of
 * the namespace or let them through unplaced), it needs no serving certificate nor a path from the
 * API server to a pod, and what it does is readable in the object itself. Kubernetes serves it from
 * 1.36 on (`admissionregistration.k8s.io/v1`); on 1.35 the same additions come from a webhook the
 * agent serves (placement-webhook.ts), chosen by the API server's release (placementMechanismOf, ../cluster/leftover-placements.ts).
 *
 * The policies:
 * - `local-and-remote` (default): the toleration; the scheduler picks real or virtual nodes;
 * - `remote`: the toleration and `nodeSelector: {<virtual node label>: "true"}`: only virtual nodes;
 * - `local`: nothing is added, so the virtual node's taint keeps the pods on the consumer (the
 *   namespace is still made on the providers).
 * A pod's own tolerations and selectors are kept: the policy only adds. Forgers are pure;
 * {@link placePods} and {@link stopPlacingPods} write them.
 */
import * as k8s from "@kubernetes/client-node";
import { API_GROUP, MANAGED_BY, MANAGED_BY_LABEL, PLACEMENT_TLS_SECRET, SYSTEM_NAMESPACE } from "../api/names.js";
import { SELECTED_BY_LABEL, type NamespaceLabelSelector, type PodOffloading } from "../api/offloading.js";
import { deleteOptional, describeFailure, ensureObject, objectClient, readOptional, serverOf } from "../kube/client.js";
import { poll } from "../wait/poll.js";
import type { PlacementMechanism } from "../cluster/kubernetes-release.js";
import { placementKindsOf, placementMechanismOf, type PlacementKind } from "../cluster/leftover-placements.js";
import { forgePlacementWebhook, POD_OFFLOADING_ANNOTATION } from "./placement-webhook.js";
import { VIRTUAL_NODE_LABEL, VIRTUAL_NODE_TAINT } from "../virtual-node/node.js";

/** The API version the admission policy objects are written in. */
const ADMISSION_API = "admissionregistration.k8s.io/v1";

/** Label naming the namespace a policy object places pods for. */
export const PLACED_NAMESPACE_LABEL = `${API_GROUP}/placed-namespace`;

/**
 * Whose pods a placement places: one namespace (a `NamespaceOffloading` resource's), or every
 * namespace an `OffloadingSelector` picks, those made later included (the API server matches the
 * selector at each pod's admission, so a new namespace's pods are placed from its first).
 */
export type PlacementScope =
  { readonly namespace: string } | { readonly selector: string; readonly namespaceSelector: NamespaceLabelSelector };

/** Namespaces a selector's placement never applies to, as the agent never offloads them (namespace-selector.ts). */
const NEVER_PLACED: NamespaceLabelSelector["matchExpressions"] = [
  { key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", "kube-public", "kube-node-lease"] },
  { key: MANAGED_BY_LABEL, operator: "NotIn", values: [MANAGED_BY] },
];

/** Name of the policy and of its binding for `scope`. */
export function podPlacementName(scope: PlacementScope): string {
  return "namespace" in scope
    ? `pulumi-liqo-pods-of-${scope.namespace}`
    : `pulumi-liqo-pods-selected-by-${scope.selector}`;
}

/** The labels of the policy and binding for `scope`: which namespace, or which selector, they place pods for. */
function placementLabels(scope: PlacementScope): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY,
    ...("namespace" in scope ? { [PLACED_NAMESPACE_LABEL]: scope.namespace } : { [SELECTED_BY_LABEL]: scope.selector }),
  };
}

/** What `scope` reads as in a step's message. */
function describeScope(scope: PlacementScope): string {
  return "namespace" in scope
    ? `pods of ${scope.namespace}`
    : `pods of the namespaces OffloadingSelector ${scope.selector} picks`;
}

/** A CEL string literal of `text` (the project's own constants: no quote or backslash in them). */
function celString(text: string): string {
  return JSON.stringify(text);
}

/**
 * The CEL expression of the JSON patches that give a pod the virtual node's toleration, unless it
 * has one. On an update, only to a pod that had it: an update that replaces a pod's tolerations
 * (which may only add to them) keeps the one its admission gave, as Kubernetes' own default
 * tolerations are kept; a pod admitted without it is left as it is.
 */
function tolerationPatch(): string {
  const key = celString(VIRTUAL_NODE_TAINT.key);
  const toleration = `Object.spec.tolerations{key: ${key}, operator: "Exists", effect: ${celString(VIRTUAL_NODE_TAINT.effect)}}`;
  const tolerates = (pod: string) =>
    `(has(${pod}.spec.tolerations) && ${pod}.spec.tolerations.exists(t, has(t.key) && t.key == ${key}))`;
  return (
    `(${tolerates("object")} || (request.operation == "UPDATE" && !${tolerates("oldObject")})) ? [] : ` +
    `has(object.spec.tolerations) ? [JSONPatch{op: "add", path: "/spec/tolerations/-", value: ${toleration}}] : ` +
    `[JSONPatch{op: "add", path: "/spec/tolerations", value: [${toleration}]}]`
  );
}

/** The CEL expression of the JSON patches that keep a pod to virtual nodes: at its creation only (a node selector never changes after). */
function virtualNodesOnlyPatch(): string {
  const label = celString(VIRTUAL_NODE_LABEL);
  return (
    `request.operation == "UPDATE" ? [] : has(object.spec.nodeSelector) ? ` +
    `[JSONPatch{op: "add", path: "/spec/nodeSelector/" + jsonpatch.escapeKey(${label}), value: "true"}] : ` +
    `[JSONPatch{op: "add", path: "/spec/nodeSelector", value: {${label}: "true"}}]`
  );
}

/**
 * The MutatingAdmissionPolicy placing the pods of `scope` under `policy`; undefined for `local`,
 * which adds nothing.
 */
export function forgePodPlacementPolicy(
  scope: PlacementScope,
  policy: PodOffloading,
): k8s.KubernetesObject | undefined {
  if (policy === "local") return undefined;
  const patches = policy === "remote" ? [tolerationPatch(), virtualNodesOnlyPatch()] : [tolerationPatch()];
  return {
    apiVersion: ADMISSION_API,
    kind: "MutatingAdmissionPolicy",
    metadata: {
      name: podPlacementName(scope),
      labels: placementLabels(scope),
      annotations: { [POD_OFFLOADING_ANNOTATION]: policy },
    },
    spec: {
      matchConstraints: {
        resourceRules: [
          { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["pods"] },
        ],
      },
      // A pod of a `remote` namespace placed nowhere would run where it must not: refused instead.
      failurePolicy: "Fail",
      reinvocationPolicy: "Never",
      mutations: patches.map((expression) => ({ patchType: "JSONPatch", jsonPatch: { expression } })),
    },
  } as k8s.KubernetesObject;
}

/** The namespaces whose pods `scope` places: its namespace alone, or those its selector picks. */
function placedNamespaces(scope: PlacementScope): k8s.V1LabelSelector {
  return "namespace" in scope
    ? { matchLabels: { "kubernetes.io/metadata.name": scope.namespace } }
    : {
        ...(scope.namespaceSelector.matchLabels ? { matchLabels: scope.namespaceSelector.matchLabels } : {}),
        matchExpressions: [...(scope.namespaceSelector.matchExpressions ?? []), ...NEVER_PLACED!],
      };
}

/** The binding applying the policy of `scope` to its namespace alone, or to the namespaces its selector picks. */
export function forgePodPlacementBinding(scope: PlacementScope): k8s.KubernetesObject {
  const namespaceSelector = placedNamespaces(scope);
  return {
    apiVersion: ADMISSION_API,
    kind: "MutatingAdmissionPolicyBinding",
    metadata: { name: podPlacementName(scope), labels: placementLabels(scope) },
    spec: { policyName: podPlacementName(scope), matchResources: { namespaceSelector } },
  } as k8s.KubernetesObject;
}

/** The policy a pod's spec shows it was placed under (what {@link forgePodPlacementPolicy} adds). Pure. */
export function placementOf(spec: k8s.V1PodSpec): PodOffloading {
  const tolerated = (spec.tolerations ?? []).some((t) => t.key === VIRTUAL_NODE_TAINT.key);
  if (!tolerated) return "local";
  return spec.nodeSelector?.[VIRTUAL_NODE_LABEL] === "true" ? "remote" : "local-and-remote";
}

/** A pod that any namespace's admission lets through (Pod Security `restricted` included), never stored. */
function probePod(): k8s.V1Pod {
  return {
    metadata: { name: "pulumi-liqo-placement-probe" },
    spec: {
      securityContext: { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: "RuntimeDefault" } },
      containers: [
        {
          name: "probe",
          image: "pulumi-liqo.local/placement-probe",
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
        },
      ],
    },
  };
}

/**
 * Makes the pods of `scope` created from now on placed under `policy`: applies its policy and
 * binding (server-side apply, so a second run converges), or, for `local`, removes them. Resolves
 * once the API server applies it: it picks up a new policy a moment later, and a pod created
 * before then would go unplaced, so a pod created by dry run (never stored) in `probeNamespace`
 * (the scope's namespace by default; none for a selector that picks no namespace yet) shows when.
 */
export async function placePods(
  kc: k8s.KubeConfig,
  scope: PlacementScope,
  policy: PodOffloading,
  step: string,
  timeoutMs = 60_000,
  probeNamespace = "namespace" in scope ? scope.namespace : undefined,
): Promise<void> {
  const endpoint = serverOf(kc);
  const mechanism = await placementMechanismOf(kc, step);
  const policyObject = mechanism === "MutatingAdmissionPolicy" ? forgePodPlacementPolicy(scope, policy) : undefined;
  if (mechanism === "MutatingWebhook" && policy !== "local") {
    const webhook = forgePlacementWebhook(
      podPlacementName(scope),
      placementLabels(scope),
      placedNamespaces(scope),
      policy,
      await readPlacementCa(kc, step),
    );
    await ensureObject(kc, webhook).catch(
      describeFailure(
        `${step}: applying MutatingWebhookConfiguration ${podPlacementName(scope)} (${describeScope(scope)})`,
        endpoint,
      ),
    );
  } else if (policyObject) {
    for (const object of [policyObject, forgePodPlacementBinding(scope)]) {
      await ensureObject(kc, object).catch(
        describeFailure(
          `${step}: applying ${object.kind} ${object.metadata!.name} (${describeScope(scope)})`,
          endpoint,
        ),
      );
    }
    // A cluster upgraded from 1.35 may still call its agent for the same pods: the policy replaces that.
    await deletePlacementObject(kc, scope, "MutatingWebhookConfiguration", step);
  } else {
    await stopPlacingPods(kc, scope, step, mechanism);
  }
  if (probeNamespace === undefined) return;
  const namespace = probeNamespace;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await poll(
    { step, object: `pods of ${namespace} placed ${policy} by the API server (a dry-run pod)`, endpoint },
    { timeoutMs, intervalMs: 250 },
    async () => {
      const probe = await core.createNamespacedPod({ namespace, body: probePod(), dryRun: "All" });
      const placed = placementOf(probe.spec!);
      return placed === policy ? { done: true, value: undefined } : { done: false, state: `a pod is placed ${placed}` };
    },
  );
}

/** The policy the pods of `scope` are placed by, as its MutatingAdmissionPolicy records it (none: `local`). */
export async function readPodOffloading(
  kc: k8s.KubeConfig,
  scope: PlacementScope,
  step: string,
): Promise<PodOffloading> {
  const client = objectClient(kc);
  const name = podPlacementName(scope);
  const kind =
    (await placementMechanismOf(kc, step)) === "MutatingAdmissionPolicy"
      ? "MutatingAdmissionPolicy"
      : "MutatingWebhookConfiguration";
  const policy = await readOptional(() => client.read({ apiVersion: ADMISSION_API, kind, metadata: { name } })).catch(
    describeFailure(`${step}: reading ${kind} ${name} (${describeScope(scope)})`, serverOf(kc)),
  );
  const recorded = policy?.metadata?.annotations?.[POD_OFFLOADING_ANNOTATION];
  return recorded === "remote" || recorded === "local-and-remote" ? recorded : "local";
}

/** The CA the agent's placement listener is checked with, from the Secret the Cluster's install made. */
async function readPlacementCa(kc: k8s.KubeConfig, step: string): Promise<string> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const secret = await readOptional(() =>
    core.readNamespacedSecret({ name: PLACEMENT_TLS_SECRET, namespace: SYSTEM_NAMESPACE }),
  ).catch(describeFailure(`${step}: reading Secret ${SYSTEM_NAMESPACE}/${PLACEMENT_TLS_SECRET}`, serverOf(kc)));
  const ca = Buffer.from(secret?.data?.["ca.crt"] ?? "", "base64").toString("utf8");
  if (!ca)
    throw new Error(
      `${step}: no Secret ${SYSTEM_NAMESPACE}/${PLACEMENT_TLS_SECRET} at ${serverOf(kc)}: this cluster's API server serves ` +
        "no MutatingAdmissionPolicy, so its agent places offloaded pods by a webhook, which the Cluster's install sets up; " +
        "run `pulumi up` for its Cluster with this release of pulumi-liqo first",
    );
  return ca;
}

/**
 * Stops placing the pods of `scope` (binding first: from then on the policy applies to nothing),
 * under `mechanism` when the caller read it already.
 */
export async function stopPlacingPods(
  kc: k8s.KubeConfig,
  scope: PlacementScope,
  step: string,
  mechanism?: PlacementMechanism,
): Promise<void> {
  for (const kind of placementKindsOf(mechanism ?? (await placementMechanismOf(kc, step))))
    await deletePlacementObject(kc, scope, kind, step);
}

/** Deletes the placement object of `kind` that places the pods of `scope`, if there is one. */
async function deletePlacementObject(
  kc: k8s.KubeConfig,
  scope: PlacementScope,
  kind: PlacementKind,
  step: string,
): Promise<void> {
  const name = podPlacementName(scope);
  await deleteOptional(() => objectClient(kc).delete({ apiVersion: ADMISSION_API, kind, metadata: { name } })).catch(
    describeFailure(`${step}: deleting ${kind} ${name} (${describeScope(scope)})`, serverOf(kc)),
  );
}
