/**
 * `pulumi import` of a Peering, in pure parts: the pair its ID names, what the consumer's records
 * give back as inputs and outputs, each refusal (a forged ID, no peering, an in-band one, a broken
 * one), the takeover of a claim another resource holds, and the schema's shape of the inputs.
 */
import type * as k8s from "@kubernetes/client-node";
import { mayTake } from "../../../core/api/names.js";
import { removalOf } from "../../../core/cluster/install-plan.js";
import type { PeeringFound } from "../../../core/peering/import-read.js";
import { importedPeering, pairOf, type PeeringImport } from "../../../core/resources/peering-import.js";
import { askedOfVirtualNode, forgeVirtualNode, VIRTUAL_NODE_TAINT } from "../../../core/virtual-node/node.js";
import { KINDS, schemaInputsOf } from "../../../plugin/kinds.js";
import { read, type Target } from "../../../plugin/operations.js";
import { A, B, CONSUMER, CONSUMER_SERVER, OUTGOING } from "../../support/import-fixtures.js";

const URN = "urn:pulumi:dev::yaml-peering::liqo:index:Peering::b-to-a";
const THEIRS = "urn:pulumi:dev::local-peering::pulumi-nodejs:dynamic:Resource::b-to-a";
const KUBECONFIG = "apiVersion: v1\nusers: [{name: b, user: {client-key-data: c2VjcmV0}}]\n";
const SERVER = CONSUMER_SERVER;
const PROVIDER_API = "https://172.29.1.10:6443";

const asked: PeeringImport = {
  pair: `${B}-to-${A}`,
  consumerKubeconfig: KUBECONFIG,
  urn: URN,
  label: `Peering import of ID "${B}-to-${A}@/k"`,
};
const offer = { cpu: "2", memory: "4Gi", pods: 20 };
const found: PeeringFound = {
  server: SERVER,
  consumer: CONSUMER,
  outgoing: OUTGOING,
  claimHolder: URN,
  negotiation: { providerApiServerUrl: PROVIDER_API, asked: { cpu: "2", memory: "4Gi", pods: 20 }, offer },
  identityExpiresAt: "2027-11-26T00:00:00.000Z",
  node: { labels: {}, taints: [], ready: true, readiness: "Ready=True (PeeringActive)" },
};

describe("the pair a Peering's import ID names", () => {
  test("GIVEN <consumer>-to-<provider> WHEN parsed THEN both cluster IDs come out", () => {
    expect(pairOf(`${B}-to-${A}`)).toEqual({ consumerClusterId: B, providerClusterId: A });
  });

  test.each([["b-to-a"], [B], [`${B}-to-${A}-to-${B}`], [`${B}-to-`]])(
    "GIVEN %s WHEN parsed THEN it is no pair",
    (id) => {
      expect(pairOf(id)).toBeUndefined();
    },
  );
});

describe("a Peering as its import finds it", () => {
  test("GIVEN an out-of-band peering that stands WHEN imported THEN the inputs reproduce it and the outputs are a create's", () => {
    const imported = importedPeering(asked, found);
    expect(imported.id).toBe(`${B}-to-${A}`);
    expect(imported.inputs).toEqual({
      consumerClusterId: B,
      provider: { clusterId: A, authUrl: "https://172.29.1.10:8443", authCaCert: "auth-ca" },
      resources: { cpu: "2", memory: "4Gi", pods: 20 },
    });
    expect(imported.outputs).toMatchObject({
      consumerKubeconfig: KUBECONFIG,
      providerClusterId: A,
      providerClusterName: "a",
      tenantNamespace: `tenant-${B}`,
      requestName: `from-${B}`,
      virtualNodeName: "liqo-a",
      offer,
      providerApiServerUrl: PROVIDER_API,
      identityExpiresAt: "2027-11-26T00:00:00.000Z",
      status: "Ready",
    });
    expect(imported.unrecovered.map((each) => each.input)).toEqual(["consumerKubeconfig", "provider.token"]);
    expect(JSON.stringify(imported.inputs)).not.toContain("c2VjcmV0");
    expect(imported.takenFrom).toBeUndefined();
  });

  test("GIVEN a node named otherwise and labels and taints asked WHEN imported THEN they are inputs", () => {
    const taint = { key: "team", value: "x", effect: "NoSchedule" };
    const named = {
      ...found,
      outgoing: { ...found.outgoing!, spec: { ...found.outgoing!.spec, virtualNodeName: "eu-west" } },
      node: { ...found.node!, labels: { zone: "eu" }, taints: [taint] },
    };
    expect(importedPeering(asked, named).inputs).toMatchObject({
      virtualNodeName: "eu-west",
      labels: { zone: "eu" },
      taints: [taint],
    });
  });

  test("GIVEN a node that is not Ready WHEN imported THEN its status says so (the next up repairs it)", () => {
    const down = { ...found, node: { ...found.node!, ready: false, readiness: "Ready=False (ProviderUnreachable)" } };
    expect(importedPeering(asked, down).outputs.status).toBe("virtual node liqo-a: Ready=False (ProviderUnreachable)");
  });

  test("GIVEN a claim another resource holds (a TypeScript stack's) WHEN imported THEN it is taken over from it", () => {
    expect(importedPeering(asked, { ...found, claimHolder: THEIRS }).takenFrom).toBe(THEIRS);
  });

  test.each<[string, PeeringImport, PeeringFound, string]>([
    [
      "an ID that is no pair",
      { ...asked, pair: "b-to-a" },
      found,
      `"b-to-a" is not <consumerClusterId>-to-<providerClusterId>`,
    ],
    [
      "no install on the consumer",
      asked,
      { server: SERVER },
      `reading the consumer's identity at ${SERVER}: pulumi-liqo is not installed there: nothing to import`,
    ],
    [
      "a forged ID naming another consumer than the kubeconfig reaches",
      { ...asked, pair: `${A}-to-${B}` },
      found,
      `reading the consumer's identity at ${SERVER}: the kubeconfig reaches cluster ${B}, not ${A}: refused`,
    ],
    [
      "no peering with that provider",
      asked,
      { server: SERVER, consumer: found.consumer! },
      `reading the OutgoingPeering of provider ${A} at ${SERVER}: there is none: the consumer does not peer with it`,
    ],
    [
      "an in-band peering",
      asked,
      {
        ...found,
        outgoing: {
          ...found.outgoing!,
          spec: { ...found.outgoing!.spec, auth: undefined, inBand: {} as never },
        },
      },
      "an in-band peering is not importable yet",
    ],
    [
      "no identity held",
      asked,
      { ...found, negotiation: undefined },
      `reading the identity Secret at ${SERVER}: the consumer holds no identity for a: the peering is broken`,
    ],
    [
      "a provider that refuses the identity",
      asked,
      { ...found, negotiation: { providerApiServerUrl: PROVIDER_API, unreadable: "Unauthorized" } },
      `reading the negotiation at ${PROVIDER_API}: Unauthorized: the peering is broken`,
    ],
    [
      "no offer",
      asked,
      { ...found, negotiation: { providerApiServerUrl: PROVIDER_API, asked: offer } },
      `at ${PROVIDER_API}: the provider made no offer: the peering is broken`,
    ],
    [
      "no virtual node",
      asked,
      { ...found, node: undefined },
      `reading Node liqo-a at ${SERVER}: the virtual node is gone: the peering is broken`,
    ],
  ])("GIVEN %s WHEN imported THEN it is refused, naming the ID, the step and the endpoint", (_what, how, what, why) => {
    const attempt = () => importedPeering(how, what);
    expect(attempt).toThrow(how.label);
    expect(attempt).toThrow(why);
  });

  test("GIVEN a Peering ID without a kubeconfig file WHEN imported through the plugin THEN it fails at parsing, before any cluster", async () => {
    const target: Target = { kind: KINDS["liqo:index:Peering"]!, type: "liqo:index:Peering", urn: URN };
    await expect(read(target, `${B}-to-${A}`, {}, {})).rejects.toThrow(
      `Peering import of ID "${B}-to-${A}": parsing the ID: it has no @; expected <consumerClusterId>-to-<providerClusterId>@`,
    );
  });
});

describe("the schema's inputs of an import", () => {
  test("GIVEN a Peering's code inputs WHEN put in the schema's shape THEN the consumer's fields go under consumer", () => {
    const code = importedPeering(asked, found).inputs as Record<string, unknown>;
    expect(schemaInputsOf(KINDS["liqo:index:Peering"]!, code)).toEqual({
      consumer: { clusterId: B },
      provider: { clusterId: A, authUrl: "https://172.29.1.10:8443", authCaCert: "auth-ca" },
      resources: { cpu: "2", memory: "4Gi", pods: 20 },
    });
  });

  test("GIVEN inputs drawn from each element of a list WHEN put back THEN they are left out", () => {
    expect(
      schemaInputsOf(KINDS["liqo:index:NamespaceOffloading"]!, { namespace: "shop", virtualNodes: ["liqo-a"] }),
    ).toEqual({
      namespace: "shop",
    });
  });
});

describe("what a resource imported from another may take", () => {
  test.each<[string | undefined, string | undefined, string | undefined, boolean]>([
    [undefined, URN, undefined, true],
    [URN, URN, undefined, true],
    [THEIRS, URN, THEIRS, true],
    [THEIRS, URN, undefined, false],
    ["urn:pulumi:prod::other::liqo:index:Peering::x", URN, THEIRS, false],
    [THEIRS, undefined, undefined, true],
  ])("GIVEN holder %s, owner %s, taken from %s THEN it may take: %s", (holder, owner, takenFrom, may) => {
    expect(mayTake(holder, owner, takenFrom)).toBe(may);
  });

  test("GIVEN an install taken over by an import WHEN its Cluster is deleted THEN it uninstalls, where another's is only forgotten", () => {
    const facts = { holder: THEIRS, owner: URN, users: [], force: false };
    expect(removalOf({ ...facts, takenFrom: THEIRS })).toEqual({ kind: "uninstall" });
    expect(removalOf(facts)).toEqual({ kind: "forget", holder: THEIRS });
  });
});

describe("the labels and taints a virtual node was asked for", () => {
  test("GIVEN a node made with extra labels and taints, and tainted by Kubernetes WHEN read back THEN only the asked ones come out", () => {
    const taint: k8s.V1Taint = { key: "team", value: "x", effect: "NoSchedule" };
    const node = forgeVirtualNode(
      {
        name: "liqo-a",
        providerClusterId: A,
        providerClusterName: "a",
        resources: offer,
        labels: { zone: "eu" },
        taints: [taint],
      },
      new Date(),
    );
    node.spec!.taints!.push({ key: "node.kubernetes.io/unreachable", effect: "NoExecute", timeAdded: new Date() });
    expect(askedOfVirtualNode(node)).toEqual({ labels: { zone: "eu" }, taints: [taint] });
    expect(node.spec!.taints!.some((t) => t.key === VIRTUAL_NODE_TAINT.key)).toBe(true);
  });
});
