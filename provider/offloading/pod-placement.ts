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
 * 1.36 on (`admissionregistration.k8s.io/v1`).
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
import { API_GROUP, MANAGED_BY, MANAGED_BY_LABEL } from "../api/names.js";
import type { PodOffloading } from "../api/offloading.js";
import { deleteOptional, describeFailure, ensureObject, readOptional, serverOf } from "../kube/client.js";
import { poll } from "../wait/poll.js";
import { VIRTUAL_NODE_LABEL, VIRTUAL_NODE_TAINT } from "../virtual-node/node.js";

/** The API version the admission policy objects are written in. */
const ADMISSION_API = "admissionregistration.k8s.io/v1";

/** Label naming the namespace a policy object places pods for. */
export const PLACED_NAMESPACE_LABEL = `${API_GROUP}/placed-namespace`;

/** Name of the policy and of its binding for consumer namespace `namespace`. */
export function podPlacementName(namespace: string): string {
  return `pulumi-liqo-pods-of-${namespace}`;
}

/** A CEL string literal of `text` (the project's own constants: no quote or backslash in them). */
function celString(text: string): string {
  return JSON.stringify(text);
}

/** The CEL expression of the JSON patches that give a pod the virtual node's toleration, unless it has one. */
function tolerationPatch(): string {
  const key = celString(VIRTUAL_NODE_TAINT.key);
  const toleration = `Object.spec.tolerations{key: ${key}, operator: "Exists", effect: ${celString(VIRTUAL_NODE_TAINT.effect)}}`;
  return (
    `(has(object.spec.tolerations) && object.spec.tolerations.exists(t, has(t.key) && t.key == ${key})) ? [] : ` +
    `has(object.spec.tolerations) ? [JSONPatch{op: "add", path: "/spec/tolerations/-", value: ${toleration}}] : ` +
    `[JSONPatch{op: "add", path: "/spec/tolerations", value: [${toleration}]}]`
  );
}

/** The CEL expression of the JSON patches that keep a pod to virtual nodes. */
function virtualNodesOnlyPatch(): string {
  const label = celString(VIRTUAL_NODE_LABEL);
  return (
    `has(object.spec.nodeSelector) ? ` +
    `[JSONPatch{op: "add", path: "/spec/nodeSelector/" + jsonpatch.escapeKey(${label}), value: "true"}] : ` +
    `[JSONPatch{op: "add", path: "/spec/nodeSelector", value: {${label}: "true"}}]`
  );
}

/**
 * The MutatingAdmissionPolicy placing the pods of consumer namespace `namespace` under `policy`;
 * undefined for `local`, which adds nothing.
 */
export function forgePodPlacementPolicy(namespace: string, policy: PodOffloading): k8s.KubernetesObject | undefined {
  if (policy === "local") return undefined;
  const patches = policy === "remote" ? [tolerationPatch(), virtualNodesOnlyPatch()] : [tolerationPatch()];
  return {
    apiVersion: ADMISSION_API,
    kind: "MutatingAdmissionPolicy",
    metadata: {
      name: podPlacementName(namespace),
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [PLACED_NAMESPACE_LABEL]: namespace },
      annotations: { [`${API_GROUP}/pod-offloading`]: policy },
    },
    spec: {
      matchConstraints: {
        resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }],
      },
      // A pod of a `remote` namespace placed nowhere would run where it must not: refused instead.
      failurePolicy: "Fail",
      reinvocationPolicy: "Never",
      mutations: patches.map((expression) => ({ patchType: "JSONPatch", jsonPatch: { expression } })),
    },
  } as k8s.KubernetesObject;
}

/** The binding applying the policy of `namespace` to that namespace alone. */
export function forgePodPlacementBinding(namespace: string): k8s.KubernetesObject {
  return {
    apiVersion: ADMISSION_API,
    kind: "MutatingAdmissionPolicyBinding",
    metadata: {
      name: podPlacementName(namespace),
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [PLACED_NAMESPACE_LABEL]: namespace },
    },
    spec: {
      policyName: podPlacementName(namespace),
      matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } } },
    },
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
 * Makes the pods created in `namespace` from now on placed under `policy`: applies its policy and
 * binding (server-side apply, so a second run converges), or, for `local`, removes them. Resolves
 * once the API server applies it: it picks up a new policy a moment later, and a pod created
 * before then would go unplaced, so a pod created by dry run (never stored) shows when.
 */
export async function placePods(
  kc: k8s.KubeConfig,
  namespace: string,
  policy: PodOffloading,
  step: string,
  timeoutMs = 60_000,
): Promise<void> {
  const endpoint = serverOf(kc);
  const policyObject = forgePodPlacementPolicy(namespace, policy);
  if (policyObject) {
    for (const object of [policyObject, forgePodPlacementBinding(namespace)]) {
      await ensureObject(kc, object).catch(
        describeFailure(`${step}: applying ${object.kind} ${object.metadata!.name} (pods of ${namespace})`, endpoint),
      );
    }
  } else {
    await stopPlacingPods(kc, namespace, step);
  }
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

/** Stops placing the pods of `namespace` (binding first: from then on the policy applies to nothing). */
export async function stopPlacingPods(kc: k8s.KubeConfig, namespace: string, step: string): Promise<void> {
  const client = k8s.KubernetesObjectApi.makeApiClient(kc);
  const endpoint = serverOf(kc);
  for (const kind of PLACEMENT_KINDS) {
    const name = podPlacementName(namespace);
    await deleteOptional(() => client.delete({ apiVersion: ADMISSION_API, kind, metadata: { name } })).catch(
      describeFailure(`${step}: deleting ${kind} ${name} (pods of ${namespace})`, endpoint),
    );
  }
}

/** The kinds of the pod-placement objects, the binding first (the order to remove them in). */
const PLACEMENT_KINDS = ["MutatingAdmissionPolicyBinding", "MutatingAdmissionPolicy"] as const;

/**
 * Every pod-placement policy and binding of the project, whatever namespace they place; none on a
 * cluster without the API.
 */
export async function listPlacements(
  kc: k8s.KubeConfig,
  step: string,
): Promise<{ readonly kind: (typeof PLACEMENT_KINDS)[number]; readonly name: string }[]> {
  const client = k8s.KubernetesObjectApi.makeApiClient(kc);
  const found = [];
  for (const kind of PLACEMENT_KINDS) {
    // (namespace, pretty, exact, exportt, fieldSelector) unset: cluster-scoped, by label.
    const listed = await readOptional(() =>
      client.list(
        ADMISSION_API,
        kind,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
      ),
    ).catch(describeFailure(`${step}: listing the project's ${kind}s`, serverOf(kc)));
    found.push(...(listed?.items ?? []).map((object) => ({ kind, name: object.metadata!.name! })));
  }
  return found;
}

/**
 * Removes every pod-placement policy and binding of the project: the uninstall of a cluster whose
 * offloadings were not all withdrawn (under `remote`, a pod placed for virtual nodes that are gone
 * would stay Pending).
 */
export async function removeAllPlacements(kc: k8s.KubeConfig, step: string): Promise<void> {
  const client = k8s.KubernetesObjectApi.makeApiClient(kc);
  for (const { kind, name } of await listPlacements(kc, step)) {
    await deleteOptional(() => client.delete({ apiVersion: ADMISSION_API, kind, metadata: { name } })).catch(
      describeFailure(`${step}: deleting ${kind} ${name}`, serverOf(kc)),
    );
  }
}
