/** What an OffloadingSelector writes into a namespace it picks, and how that namespace's report reads. */
import type { NamespaceOffloading, OffloadingSelector } from "../../../../core/api/index.js";
import { forgeSelectedOffloading, selectedReport } from "../../../../agent/offloading/selected-namespaces.js";

const selector: OffloadingSelector = {
  apiVersion: "peering.pulumi-liqo.dev/v1alpha1",
  kind: "OffloadingSelector",
  metadata: { name: "teams-1", namespace: "pulumi-liqo-system" },
  spec: {
    namespaceSelector: { matchLabels: { team: "shop" } },
    virtualNodes: ["liqo-a", "liqo-c"],
    naming: "suffixed",
    consumerClusterId: "b1",
  },
};

describe("a selector's offloading of one namespace", () => {
  test("GIVEN a picked namespace WHEN its offloading is forged THEN it is labelled with the selector and named as the resource would", () => {
    const offloading = forgeSelectedOffloading(selector, "shop-1");
    expect(offloading.metadata).toMatchObject({
      name: "offloading",
      namespace: "shop-1",
      labels: { "peering.pulumi-liqo.dev/selected-by": "teams-1" },
    });
    expect(offloading.spec).toEqual({ remoteNamespace: "shop-1-b1", virtualNodes: ["liqo-a", "liqo-c"] });
    expect(() => forgeSelectedOffloading(selector, "x".repeat(62))).toThrow(/at most 63/);
  });

  test("GIVEN the offloading's status WHEN reported THEN Ready needs every virtual node Ready at the current generation; a refusal is named", () => {
    const offloading = forgeSelectedOffloading(selector, "shop-1") as NamespaceOffloading;
    offloading.metadata.generation = 2;
    const ready = { virtualNode: "liqo-a", remoteNamespace: "shop-1-b1", phase: "Ready" as const };
    const readyC = { ...ready, virtualNode: "liqo-c" };
    expect(selectedReport(offloading).phase).toBe("Pending");
    offloading.status = { observedGeneration: 1, remotes: [ready, readyC] };
    expect(selectedReport(offloading).phase).toBe("Pending");
    offloading.status = { observedGeneration: 2, remotes: [ready] };
    expect(selectedReport(offloading)).toMatchObject({ phase: "Pending" });
    offloading.status = { observedGeneration: 2, remotes: [ready, readyC] };
    expect(selectedReport(offloading)).toEqual({ namespace: "shop-1", remoteNamespace: "shop-1-b1", phase: "Ready" });
    offloading.status = {
      observedGeneration: 2,
      remotes: [ready, { ...readyC, phase: "Refused", message: "NameTaken: taken" }],
    };
    expect(selectedReport(offloading)).toMatchObject({ phase: "Refused", message: "liqo-c: NameTaken: taken" });
  });
});
