import {
  forgePodPlacementBinding,
  forgePodPlacementPolicy,
  podPlacementName,
} from "../../../../core/offloading/pod-placement.js";

interface PolicySpec {
  matchConstraints: { resourceRules: { resources: string[]; operations: string[] }[] };
  failurePolicy: string;
  mutations: { patchType: string; jsonPatch: { expression: string } }[];
}

describe("pod placement", () => {
  test("GIVEN local THEN nothing is added: no policy", () => {
    expect(forgePodPlacementPolicy({ namespace: "shop" }, "local")).toBeUndefined();
  });

  test("GIVEN local-and-remote THEN pods created in the namespace get the virtual nodes' toleration, and nothing else", () => {
    const policy = forgePodPlacementPolicy({ namespace: "shop" }, "local-and-remote") as unknown as {
      kind: string;
      metadata: { name: string };
      spec: PolicySpec;
    };
    expect(policy.kind).toBe("MutatingAdmissionPolicy");
    expect(policy.metadata.name).toBe(podPlacementName({ namespace: "shop" }));
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["pods"] },
    ]);
    expect(policy.spec.failurePolicy).toBe("Fail");
    expect(policy.spec.mutations).toHaveLength(1);
    const [toleration] = policy.spec.mutations.map((m) => m.jsonPatch.expression);
    expect(toleration).toContain('"virtual-node.peering.pulumi-liqo.dev/not-allowed"');
    // A pod that already tolerates the taint is left as it is; one with other tolerations keeps them.
    expect(toleration).toMatch(
      /^\(\(has\(object.spec.tolerations\) && object.spec.tolerations.exists\(t, .*\) \? \[\]/,
    );
    expect(toleration).toContain('object.spec.tolerations.exists(t, has(t.key) && t.key == "virtual-node.');
    expect(toleration).toContain('path: "/spec/tolerations/-"');
    // An update gives it back only to a pod that had it.
    expect(toleration).toContain('(request.operation == "UPDATE" && !(has(oldObject.spec.tolerations)');
  });

  test("GIVEN remote THEN pods also get a node selector of virtual nodes, added to their own", () => {
    const policy = forgePodPlacementPolicy({ namespace: "shop" }, "remote") as unknown as { spec: PolicySpec };
    const expressions = policy.spec.mutations.map((m) => m.jsonPatch.expression);
    expect(expressions).toHaveLength(2);
    expect(expressions[1]).toContain('jsonpatch.escapeKey("peering.pulumi-liqo.dev/virtual-node")');
    expect(expressions[1]).toContain('{"peering.pulumi-liqo.dev/virtual-node": "true"}');
    expect(expressions[1]).toMatch(/^request.operation == "UPDATE" \? \[\] : /);
  });

  test("GIVEN a namespace THEN the binding applies its policy to that namespace alone", () => {
    expect(forgePodPlacementBinding({ namespace: "shop" })).toMatchObject({
      kind: "MutatingAdmissionPolicyBinding",
      metadata: { name: podPlacementName({ namespace: "shop" }) },
      spec: {
        policyName: podPlacementName({ namespace: "shop" }),
        matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "shop" } } },
      },
    });
  });
});
