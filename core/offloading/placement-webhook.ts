/**
 * Pod placement where the API server serves no `MutatingAdmissionPolicy` (Kubernetes 1.35): a
 * mutating webhook that the consumer's agent serves gives the pods of an offloaded namespace the
 * same additions the policy would (pod-placement.ts): the virtual node's toleration, and under
 * `remote` the virtual nodes' selector. Pure: the configuration object, and the answer to one
 * admission review; the agent's listener (agent/offloading/placement-listener.ts) does the I/O.
 *
 * What it costs against the policy, and why it is still the same guarantee: the API server calls
 * the agent for every pod created in the namespace, so while the agent is down such pods are
 * refused (`failurePolicy: Fail`) and their controllers retry, instead of being admitted unplaced,
 * which under `remote` would run them where they must not.
 *
 * The listener answers whoever reaches it (the API server, or any pod of the cluster); an answer
 * only says what to add to the pod under review, so a forged review learns nothing and changes
 * nothing. Reviews are checked before anything is read from them.
 */
import type * as k8s from "@kubernetes/client-node";
import { API_GROUP, PLACEMENT_SERVICE, SYSTEM_NAMESPACE } from "../api/names.js";
import type { PodOffloading } from "../api/offloading.js";
import { VIRTUAL_NODE_LABEL, VIRTUAL_NODE_TAINT } from "../virtual-node/node.js";

/** Path prefix of the listener: one path per policy, so an answer needs nothing but the review. */
export const PLACEMENT_PATH = "/place-pods/";
/** The largest review the listener reads: a pod with every field at a generous size. */
export const PLACEMENT_REVIEW_LIMIT_BYTES = 3 * 1024 * 1024;

/** One JSON patch operation. */
export interface JsonPatchOperation {
  readonly op: "add";
  readonly path: string;
  readonly value: unknown;
}

/** The policies a webhook places under (`local` adds nothing, so it has none). */
export type WebhookPolicy = Exclude<PodOffloading, "local">;

/** The policy a listener path names, or undefined for any other path. */
export function policyOfPath(path: string): WebhookPolicy | undefined {
  const policy = path.startsWith(PLACEMENT_PATH) ? path.slice(PLACEMENT_PATH.length) : "";
  return policy === "remote" || policy === "local-and-remote" ? policy : undefined;
}

/** An RFC 6901 key: `~` and `/` escaped. */
const escapeKey = (key: string): string => key.replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * The JSON patch that places `spec` under `policy`, as the admission policy's CEL does: the
 * toleration unless the pod has one for the taint, and under `remote` the virtual nodes' selector.
 * A pod's own tolerations and selectors are kept: it only adds.
 */
export function placementPatch(spec: k8s.V1PodSpec, policy: WebhookPolicy): JsonPatchOperation[] {
  const patch: JsonPatchOperation[] = [];
  const toleration = { key: VIRTUAL_NODE_TAINT.key, operator: "Exists", effect: VIRTUAL_NODE_TAINT.effect };
  if (!(spec.tolerations ?? []).some((t) => t.key === VIRTUAL_NODE_TAINT.key))
    patch.push(
      spec.tolerations
        ? { op: "add", path: "/spec/tolerations/-", value: toleration }
        : { op: "add", path: "/spec/tolerations", value: [toleration] },
    );
  if (policy === "remote")
    patch.push(
      spec.nodeSelector
        ? { op: "add", path: `/spec/nodeSelector/${escapeKey(VIRTUAL_NODE_LABEL)}`, value: "true" }
        : { op: "add", path: "/spec/nodeSelector", value: { [VIRTUAL_NODE_LABEL]: "true" } },
    );
  return patch;
}

/** The listener's answer: an AdmissionReview to send back, or a refusal of what was sent. */
export type ReviewAnswer =
  { readonly ok: true; readonly review: Record<string, unknown> } | { readonly ok: false; readonly reason: string };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Answers one admission review (the parsed request body) for pods placed under `policy`: a pod
 * being created gets its patch; anything else is allowed as it is. What is not an
 * `admission.k8s.io/v1` review of a pod with a uid is refused, naming what is wrong.
 */
export function answerPlacementReview(body: unknown, policy: WebhookPolicy): ReviewAnswer {
  if (!isObject(body) || body["apiVersion"] !== "admission.k8s.io/v1" || body["kind"] !== "AdmissionReview")
    return { ok: false, reason: "not an admission.k8s.io/v1 AdmissionReview" };
  const request = body["request"];
  if (!isObject(request) || typeof request["uid"] !== "string" || request["uid"].length === 0)
    return { ok: false, reason: "the review has no request with a uid" };
  const uid = request["uid"];
  const resource = request["resource"];
  const object = request["object"];
  const isPod = isObject(resource) && resource["group"] === "" && resource["resource"] === "pods";
  const review = (response: Record<string, unknown>): ReviewAnswer => ({
    ok: true,
    review: {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid, allowed: true, ...response },
    },
  });
  if (!isPod || request["operation"] !== "CREATE" || request["subResource"] !== undefined) return review({});
  if (!isObject(object) || !isObject(object["spec"])) return { ok: false, reason: "the pod under review has no spec" };
  const spec = object["spec"];
  if (
    (spec["tolerations"] !== undefined && !Array.isArray(spec["tolerations"])) ||
    (spec["nodeSelector"] !== undefined && !isObject(spec["nodeSelector"]))
  )
    return { ok: false, reason: "the pod's tolerations or nodeSelector are malformed" };
  const patch = placementPatch(spec as unknown as k8s.V1PodSpec, policy);
  return review(
    patch.length === 0 ? {} : { patchType: "JSONPatch", patch: Buffer.from(JSON.stringify(patch)).toString("base64") },
  );
}

/** Annotation recording the policy a placement object places under (read back by readPodOffloading). */
export const POD_OFFLOADING_ANNOTATION = `${API_GROUP}/pod-offloading`;

/**
 * The MutatingWebhookConfiguration that places the pods `namespaceSelector` picks under `policy`,
 * through the agent's listener, whose certificate `caBundlePem` signed.
 */
export function forgePlacementWebhook(
  name: string,
  labels: Readonly<Record<string, string>>,
  namespaceSelector: k8s.V1LabelSelector,
  policy: WebhookPolicy,
  caBundlePem: string,
): k8s.V1MutatingWebhookConfiguration {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name, labels: { ...labels }, annotations: { [POD_OFFLOADING_ANNOTATION]: policy } },
    webhooks: [
      {
        name: `pods.${name}.${API_GROUP}`,
        admissionReviewVersions: ["v1"],
        clientConfig: {
          service: {
            namespace: SYSTEM_NAMESPACE,
            name: PLACEMENT_SERVICE,
            path: `${PLACEMENT_PATH}${policy}`,
            port: 443,
          },
          caBundle: Buffer.from(caBundlePem).toString("base64"),
        },
        rules: [
          { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"], scope: "Namespaced" },
        ],
        namespaceSelector,
        // A pod of a `remote` namespace placed nowhere would run where it must not: refused instead.
        failurePolicy: "Fail",
        sideEffects: "None",
        timeoutSeconds: 10,
        reinvocationPolicy: "Never",
      },
    ],
  };
}
