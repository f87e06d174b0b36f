/**
 * `pulumi import` of a NamespaceOffloading, in pure parts: what the consumer's NamespaceOffloading
 * object and pod-placement policy give back as inputs and outputs, and the refusals.
 */
import type { OffloadingFound } from "../../../core/offloading/namespace-offloading.js";
import {
  importedNamespaceOffloading,
  type NamespaceOffloadingImport,
} from "../../../core/resources/namespace-offloading-import.js";
import { namespaceOffloadingChanges } from "../../../core/resources/namespace-offloading.js";
import { B, CONSUMER, CONSUMER_SERVER } from "../../support/import-fixtures.js";

const SERVER = CONSUMER_SERVER;
const URN = "urn:pulumi:dev::yaml::liqo:index:NamespaceOffloading::b-offloads";
const THEIRS = "urn:pulumi:dev::local-peering::pulumi-nodejs:dynamic:Resource::b-offloads";
const asked: NamespaceOffloadingImport = {
  namespace: "shop",
  consumerKubeconfig: "kubeconfig-text",
  urn: URN,
  label: 'NamespaceOffloading import of ID "shop@/k"',
};
const found: OffloadingFound = {
  server: SERVER,
  consumer: CONSUMER,
  offloading: {
    apiVersion: "liqo.pulumi.io/v1alpha1",
    kind: "NamespaceOffloading",
    metadata: { name: "offloading", namespace: "shop" },
    spec: { remoteNamespace: `shop-${B}`, virtualNodes: ["liqo-a"] },
    status: { remotes: [{ virtualNode: "liqo-a", phase: "Ready" } as never] },
  },
  podOffloading: "local-and-remote",
  problems: [],
  owner: URN,
};

describe("a NamespaceOffloading as its import finds it", () => {
  test("GIVEN a namespace offloaded with the defaults WHEN imported THEN the inputs reproduce it and the peerings are named to supply", () => {
    const imported = importedNamespaceOffloading(asked, found);
    expect(imported.id).toBe("shop");
    expect(imported.inputs).toEqual({ consumerClusterId: B, namespace: "shop", virtualNodes: ["liqo-a"] });
    // The policy applied is recorded as an up records it, so that the next preview shows no change.
    expect(imported.outputs).toMatchObject({
      remoteNamespace: `shop-${B}`,
      status: "Ready",
      podOffloading: "local-and-remote",
    });
    const program = {
      ...imported.inputs,
      consumerKubeconfig: asked.consumerKubeconfig,
      consumerClusterId: B,
      virtualNodes: ["liqo-a"],
    };
    expect(namespaceOffloadingChanges(imported.outputs, program).changed).toEqual([]);
    expect(imported.unrecovered.map((each) => each.input)).toEqual(["consumerKubeconfig", "virtualNodes"]);
    expect(imported.unrecovered[1]!.why).toContain("virtual nodes are liqo-a");
    expect(imported.takenFrom).toBeUndefined();
  });

  test("GIVEN naming same, pods remote and no tokens, written by another resource WHEN imported THEN each is an input, taken over", () => {
    const other: OffloadingFound = {
      ...found,
      offloading: {
        ...found.offloading!,
        spec: { remoteNamespace: "shop", virtualNodes: ["liqo-a"], serviceAccountTokens: "none" },
      },
      podOffloading: "remote",
      problems: ["virtual node liqo-a: Pending"],
      owner: THEIRS,
    };
    const imported = importedNamespaceOffloading(asked, other);
    expect(imported.inputs).toMatchObject({ naming: "same", podOffloading: "remote", serviceAccountTokens: "none" });
    expect(imported.outputs.status).toBe("virtual node liqo-a: Pending");
    expect(imported.takenFrom).toBe(THEIRS);
  });

  test.each<[string, OffloadingFound, string]>([
    ["no install", { server: SERVER }, "reading the consumer's identity at"],
    ["no offloading of the namespace", { server: SERVER, consumer: found.consumer! }, "there is none"],
    [
      "a remote namespace named otherwise",
      { ...found, offloading: { ...found.offloading!, spec: { remoteNamespace: "elsewhere", virtualNodes: [] } } },
      "named neither",
    ],
  ])("GIVEN %s WHEN imported THEN it is refused, naming the ID, the step and the endpoint", (_what, what, why) => {
    const attempt = () => importedNamespaceOffloading(asked, what);
    expect(attempt).toThrow(`${asked.label}: `);
    expect(attempt).toThrow(SERVER);
    expect(attempt).toThrow(why);
  });
});
