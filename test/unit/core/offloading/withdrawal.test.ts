import type * as k8s from "@kubernetes/client-node";
import { withdrawalState } from "../../../../core/offloading/namespace-offloading.js";

const pod = (name: string, nodeName: string, owner?: { kind: string; name: string }): k8s.V1Pod => ({
  metadata: {
    name,
    ...(owner
      ? { ownerReferences: [{ apiVersion: "apps/v1", kind: owner.kind, name: owner.name, uid: "u", controller: true }] }
      : {}),
  },
  spec: { nodeName, containers: [] },
});

describe("what a withdrawal waits for", () => {
  test("GIVEN pods on the virtual nodes THEN each is named with the controller that made it; pods elsewhere are not", () => {
    const pods = [
      pod("web-1", "liqo-a", { kind: "ReplicaSet", name: "web-5d8" }),
      pod("lone", "liqo-a"),
      pod("here", "b-n1", { kind: "ReplicaSet", name: "web-5d8" }),
    ];
    expect(withdrawalState(pods, ["liqo-a"], [])).toBe(
      "2 pod(s) still on the virtual nodes, being removed: web-1 on liqo-a (made by ReplicaSet web-5d8), lone on liqo-a",
    );
  });

  test("GIVEN no pod on the virtual nodes THEN the remote namespaces still there are named with their phase", () => {
    expect(
      withdrawalState(
        [pod("here", "b-n1")],
        ["liqo-a"],
        [{ virtualNode: "liqo-a", remoteNamespace: "shop-b", phase: "Ready" }],
      ),
    ).toBe("no pod on the virtual nodes; remote namespaces not removed yet: liqo-a: Ready");
    expect(withdrawalState([], ["liqo-a"], [])).toBe(
      "no pod on the virtual nodes; waiting for the consumer's agent to let it go",
    );
  });
});
