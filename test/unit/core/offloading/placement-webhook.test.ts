/**
 * The placement webhook of clusters whose API server serves no MutatingAdmissionPolicy
 * (core/offloading/placement-webhook.ts): the same additions as the policy, and the answers to
 * reviews a stranger forges, which are refused or allowed unchanged.
 */
import {
  answerPlacementReview,
  forgePlacementWebhook,
  placementPatch,
  policyOfPath,
} from "../../../../core/offloading/placement-webhook.js";
import { placementMechanismFor } from "../../../../core/cluster/kubernetes-release.js";
import { placementKindsOf } from "../../../../core/cluster/leftover-placements.js";

const TOLERATION = { key: "virtual-node.peering.pulumi-liqo.dev/not-allowed", operator: "Exists", effect: "NoExecute" };

/** A review of a pod being created in `namespace`, as the API server sends it. */
function review(spec: object, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "0a1b",
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      namespace: "shop",
      operation: "CREATE",
      object: { apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec },
      ...overrides,
    },
  };
}

/** The JSON patch an answer carries, decoded. */
function patchOf(answer: ReturnType<typeof answerPlacementReview>): unknown {
  if (!answer.ok) throw new Error(answer.reason);
  const response = answer.review["response"] as { patch?: string; allowed: boolean; uid: string };
  expect(response).toMatchObject({ allowed: true, uid: "0a1b" });
  return response.patch === undefined ? undefined : JSON.parse(Buffer.from(response.patch, "base64").toString());
}

describe("the placement webhook", () => {
  test("GIVEN the releases WHEN the mechanism is chosen THEN 1.35 gets the webhook, 1.36 on the admission policy", () => {
    expect(placementMechanismFor({ major: 1, minor: 35, text: "v1.35.4" })).toBe("MutatingWebhook");
    expect(placementMechanismFor({ major: 1, minor: 36, text: "v1.36.3" })).toBe("MutatingAdmissionPolicy");
    expect(placementMechanismFor({ major: 1, minor: 37, text: "v1.37.2" })).toBe("MutatingAdmissionPolicy");
    // What each removes: a 1.36 cluster upgraded from 1.35 may still hold webhook configurations.
    expect(placementKindsOf("MutatingWebhook")).toEqual(["MutatingWebhookConfiguration"]);
    expect(placementKindsOf("MutatingAdmissionPolicy")).toEqual([
      "MutatingAdmissionPolicyBinding",
      "MutatingAdmissionPolicy",
      "MutatingWebhookConfiguration",
    ]);
  });

  test("GIVEN pods with and without tolerations WHEN placed local-and-remote THEN the toleration is added once, theirs kept", () => {
    expect(placementPatch({ containers: [] }, "local-and-remote")).toEqual([
      { op: "add", path: "/spec/tolerations", value: [TOLERATION] },
    ]);
    expect(placementPatch({ containers: [], tolerations: [{ key: "other" }] }, "local-and-remote")).toEqual([
      { op: "add", path: "/spec/tolerations/-", value: TOLERATION },
    ]);
    expect(placementPatch({ containers: [], tolerations: [{ key: TOLERATION.key }] }, "local-and-remote")).toEqual([]);
  });

  test("GIVEN remote THEN the virtual nodes' selector is added too, beside a pod's own, its key escaped", () => {
    expect(placementPatch({ containers: [] }, "remote")[1]).toEqual({
      op: "add",
      path: "/spec/nodeSelector",
      value: { "peering.pulumi-liqo.dev/virtual-node": "true" },
    });
    expect(placementPatch({ containers: [], nodeSelector: { disk: "ssd" } }, "remote")[1]).toEqual({
      op: "add",
      path: "/spec/nodeSelector/peering.pulumi-liqo.dev~1virtual-node",
      value: "true",
    });
  });

  test("GIVEN the API server's review of a pod created WHEN answered THEN it is allowed with the patch, under the same uid", () => {
    expect(patchOf(answerPlacementReview(review({ containers: [{ name: "web" }] }), "remote"))).toEqual([
      { op: "add", path: "/spec/tolerations", value: [TOLERATION] },
      { op: "add", path: "/spec/nodeSelector", value: { "peering.pulumi-liqo.dev/virtual-node": "true" } },
    ]);
  });

  test("GIVEN reviews of what the webhook does not place WHEN answered THEN each is allowed unchanged", () => {
    const spec = { containers: [] };
    expect(patchOf(answerPlacementReview(review(spec, { operation: "UPDATE" }), "remote"))).toBeUndefined();
    expect(patchOf(answerPlacementReview(review(spec, { subResource: "status" }), "remote"))).toBeUndefined();
    expect(
      patchOf(
        answerPlacementReview(review(spec, { resource: { group: "", version: "v1", resource: "services" } }), "remote"),
      ),
    ).toBeUndefined();
  });

  test("GIVEN forged bodies WHEN answered THEN each is refused, naming what is wrong", () => {
    const refusal = (body: unknown) => {
      const answer = answerPlacementReview(body, "remote");
      return answer.ok ? "allowed" : answer.reason;
    };
    expect(refusal("not an object")).toBe("not an admission.k8s.io/v1 AdmissionReview");
    expect(refusal({ ...review({}), apiVersion: "admission.k8s.io/v1beta1" })).toBe(
      "not an admission.k8s.io/v1 AdmissionReview",
    );
    expect(refusal({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: { uid: "" } })).toBe(
      "the review has no request with a uid",
    );
    expect(refusal(review({}, { object: { spec: "x" } }))).toBe("the pod under review has no spec");
    expect(refusal(review({ tolerations: "all" }))).toBe("the pod's tolerations or nodeSelector are malformed");
    expect(refusal(review({ nodeSelector: ["a"] }))).toBe("the pod's tolerations or nodeSelector are malformed");
  });

  test("GIVEN the listener's paths THEN only a placing policy's path names one", () => {
    expect(policyOfPath("/place-pods/remote")).toBe("remote");
    expect(policyOfPath("/place-pods/local-and-remote")).toBe("local-and-remote");
    expect(policyOfPath("/place-pods/local")).toBeUndefined();
    expect(policyOfPath("/other")).toBeUndefined();
  });

  test("GIVEN a namespace's placement WHEN its webhook is forged THEN pods' creation in it calls the agent's Service, failing closed", () => {
    const webhook = forgePlacementWebhook(
      "pulumi-liqo-pods-of-shop",
      { "app.kubernetes.io/managed-by": "pulumi-liqo" },
      { matchLabels: { "kubernetes.io/metadata.name": "shop" } },
      "remote",
      "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n",
    );
    expect(webhook.metadata?.annotations).toEqual({ "peering.pulumi-liqo.dev/pod-offloading": "remote" });
    expect(webhook.webhooks).toEqual([
      expect.objectContaining({
        name: "pods.pulumi-liqo-pods-of-shop.peering.pulumi-liqo.dev",
        clientConfig: {
          service: {
            namespace: "pulumi-liqo-system",
            name: "pulumi-liqo-placement",
            path: "/place-pods/remote",
            port: 443,
          },
          caBundle: Buffer.from("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n").toString("base64"),
        },
        rules: [
          { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"], scope: "Namespaced" },
        ],
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "shop" } },
        failurePolicy: "Fail",
        sideEffects: "None",
      }),
    ]);
  });
});
