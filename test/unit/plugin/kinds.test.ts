import { codeInputsOf, KINDS, kindOf, schemaPathOf } from "../../../plugin/kinds.js";
import { SECRET_SIG, SIG_KEY } from "../../../plugin/values.js";

const envelope = (value: unknown) => ({ [SIG_KEY]: SECRET_SIG, value });

describe("the served resources", () => {
  test("GIVEN the schema's resources WHEN looked up THEN each is served, and an unknown type is refused naming the served ones", () => {
    expect(Object.keys(KINDS).map((type) => kindOf(type).name)).toEqual([
      "Cluster",
      "PeeringToken",
      "Peering",
      "Tunnel",
      "NamespaceOffloading",
    ]);
    expect(() => kindOf("liqo:index:Nope")).toThrow(
      /no resource of type liqo:index:Nope; the plugin serves liqo:index:Cluster/,
    );
  });

  test("GIVEN a Tunnel's peering access WHEN drawn into the code's inputs THEN the flat fields, the kubeconfig still secret", () => {
    const peering = {
      consumer: { clusterId: "c1", kubeconfig: envelope("kc") },
      providerClusterId: "p1",
      providerClusterName: "a",
      tenantNamespace: "t",
      virtualNodeName: "liqo-a",
    };
    expect(codeInputsOf(kindOf("liqo:index:Tunnel"), { peering, serverAddress: "203.0.113.7", port: 51821 })).toEqual({
      serverAddress: "203.0.113.7",
      port: 51821,
      consumerKubeconfig: envelope("kc"),
      consumerClusterId: "c1",
      providerClusterId: "p1",
      providerClusterName: "a",
      tenantNamespace: "t",
    });
  });

  test("GIVEN a NamespaceOffloading's peerings WHEN drawn THEN their virtual nodes; an out-of-band Peering gets no provider cluster", () => {
    const offloading = codeInputsOf(kindOf("liqo:index:NamespaceOffloading"), {
      consumer: { clusterId: "c1", kubeconfig: "kc" },
      namespace: "shop",
      peerings: [{ virtualNodeName: "liqo-a" }, { virtualNodeName: "liqo-c" }],
    });
    expect(offloading).toEqual({
      namespace: "shop",
      consumerKubeconfig: "kc",
      consumerClusterId: "c1",
      virtualNodes: ["liqo-a", "liqo-c"],
    });
    const outOfBand = codeInputsOf(kindOf("liqo:index:Peering"), { consumer: { clusterId: "c1", kubeconfig: "kc" } });
    expect(Object.keys(outOfBand).sort()).toEqual(["consumerClusterId", "consumerKubeconfig"]);
  });

  test("GIVEN the code's input names WHEN named for the schema THEN the schema's paths", () => {
    const offloading = kindOf("liqo:index:NamespaceOffloading");
    expect(schemaPathOf(offloading, "virtualNodes")).toBe("peerings");
    expect(schemaPathOf(offloading, "consumerKubeconfig")).toBe("consumer.kubeconfig");
    expect(schemaPathOf(kindOf("liqo:index:Peering"), "resources.cpu")).toBe("resources.cpu");
  });
});
