import { forgeKubeconfig } from "../../../core/kube/kubeconfig.js";
import { UNKNOWN } from "../../../core/resources/inputs.js";
import { partialFailure } from "../../../core/resources/partial.js";
import { KINDS, type Kind, type ResourceCode } from "../../../plugin/kinds.js";
import { check, create, diff, read, remove, update, type Target } from "../../../plugin/operations.js";
import { SECRET_SIG, SIG_KEY, type Properties } from "../../../plugin/values.js";

const envelope = (value: unknown) => ({ [SIG_KEY]: SECRET_SIG, value });
const kubeconfig = forgeKubeconfig({
  name: "b",
  server: "https://10.0.0.1:6443",
  caPem: "ca",
  certPem: "cert",
  keyPem: "key",
});
const URN = "urn:pulumi:test::plugin::liqo:index:Peering::b-to-a";
const peering: Target = { kind: KINDS["liqo:index:Peering"]!, type: "liqo:index:Peering", urn: URN };

/** A Peering's inputs as a program of any language sends them: the consumer's access, the handover secret. */
const news: Properties = {
  consumer: { clusterId: "c1", kubeconfig: envelope(kubeconfig) },
  provider: envelope({ clusterId: "p1", authUrl: "https://10.0.0.2:8443", authCaCert: "ca", token: "plt_1" }),
  resources: { cpu: "2", memory: "4Gi", pods: 10 },
  timeoutSeconds: 120,
};
/** Its state after a create, as the engine hands it back (secrets wrapped). */
const state: Properties = {
  consumerKubeconfig: envelope(kubeconfig),
  consumerClusterId: "c1",
  approach: "out-of-band",
  provider: envelope({ clusterId: "p1", authUrl: "https://10.0.0.2:8443", authCaCert: "ca" }),
  resources: { cpu: "2", memory: "4Gi", pods: 10 },
  timeoutSeconds: 120,
  providerClusterId: "p1",
  providerClusterName: "a",
  tenantNamespace: "tenant-c1",
  virtualNodeName: "liqo-a",
  status: "Ready",
};

/** The Peering kind with its code replaced by `code`'s methods, recording what each was called with. */
function withCode(code: Partial<ResourceCode>): Target {
  const kind: Kind = { ...peering.kind, code: { ...peering.kind.code, ...code } };
  return { ...peering, kind };
}

describe("check", () => {
  test(
    "GIVEN a broken kubeconfig in the consumer's access (secret) WHEN checked THEN the failure names consumer.kubeconfig, " +
      "no property, no value",
    async () => {
      const broken = { ...news, consumer: { clusterId: "c1", kubeconfig: envelope("not: a kubeconfig") } };
      const { failures } = await check(peering, {}, broken);
      expect(failures).toEqual([{ property: "", reason: expect.stringMatching(/^consumer\.kubeconfig: /) }]);
      expect(JSON.stringify(failures)).not.toContain("not: a kubeconfig");
    },
  );

  test("GIVEN a bad request of resources (not secret) WHEN checked THEN the failure's property is resources, its path in the reason", async () => {
    const { failures } = await check(peering, {}, { ...news, resources: { sharePercent: 300 } });
    expect(failures).toEqual([{ property: "resources", reason: expect.stringMatching(/^resources\.sharePercent: /) }]);
  });

  test("GIVEN a token pasted with its line's end WHEN checked THEN the inputs to store hold it trimmed, still secret", async () => {
    const pasted = {
      ...news,
      provider: envelope({ ...(news["provider"] as { value: object }).value, token: "plt_1\n" }),
    };
    const { inputs, failures } = await check(peering, {}, pasted);
    expect(failures).toEqual([]);
    expect(inputs["provider"]).toEqual(news["provider"]);
    expect(inputs["consumer"]).toEqual(news["consumer"]);
  });
});

describe("diff", () => {
  test("GIVEN another consumer cluster WHEN diffed THEN a replacement (delete first), by the schema's path", async () => {
    const answer = await diff(peering, "c1-to-p1", state, { ...news, consumer: { clusterId: "c2", kubeconfig } });
    expect(answer).toEqual({
      changes: true,
      replaces: ["consumer"],
      diffs: ["consumer"],
      detailedDiff: [{ path: "consumer.clusterId", kind: "update-replace", inputDiff: true }],
      deleteBeforeReplace: true,
    });
  });

  test("GIVEN a resized request WHEN diffed THEN an update in place of resources; the same inputs change nothing", async () => {
    const resized = await diff(peering, "c1-to-p1", state, {
      ...news,
      resources: { cpu: "1", memory: "4Gi", pods: 10 },
    });
    expect(resized).toMatchObject({ changes: true, replaces: [], diffs: ["resources"] });
    expect(resized.detailedDiff).toEqual([{ path: "resources", kind: "update", inputDiff: true }]);
    expect(await diff(peering, "c1-to-p1", state, news)).toMatchObject({ changes: false, detailedDiff: [] });
  });
});

describe("create", () => {
  test(
    "GIVEN customTimeouts create 5s WHEN created THEN the code's deadline is 5 s and its URN given; outputs keep the " +
      "program's timeout, secrets wrapped, access added (a secret as a whole)",
    async () => {
      const calls: Properties[] = [];
      const target = withCode({
        create: async (inputs) => {
          calls.push(inputs);
          const { token: _token, ...handover } = inputs["provider"] as Properties;
          return { id: "c1-to-p1", outs: { ...inputs, provider: handover, ...state, consumerKubeconfig: kubeconfig } };
        },
      });
      const made = await create(target, news, { timeoutSeconds: 5, preview: false }, []);
      expect(calls[0]).toMatchObject({
        timeoutSeconds: 5,
        __urn: URN,
        consumerClusterId: "c1",
        consumerKubeconfig: kubeconfig,
      });
      expect(made.id).toBe("c1-to-p1");
      expect(made.properties["timeoutSeconds"]).toBe(120);
      expect(made.properties["__urn"]).toBeUndefined();
      expect(made.properties["consumerKubeconfig"]).toEqual(envelope(kubeconfig));
      expect(made.properties["provider"]).toEqual(
        envelope({ clusterId: "p1", authUrl: "https://10.0.0.2:8443", authCaCert: "ca" }),
      );
      expect(made.properties["access"]).toEqual(
        envelope({
          consumer: { clusterId: "c1", kubeconfig },
          providerClusterId: "p1",
          providerClusterName: "a",
          tenantNamespace: "tenant-c1",
          virtualNodeName: "liqo-a",
        }),
      );
    },
  );

  test("GIVEN a preview WHEN created THEN the code is not called; outputs not known yet are marked unknown, secrets wrapped", async () => {
    const target = withCode({ create: () => Promise.reject(new Error("a preview must not create")) });
    const planned = await create(target, news, { timeoutSeconds: 0, preview: true }, ["virtualNodeName", "resources"]);
    expect(planned.id).toBe("");
    expect(planned.properties).toMatchObject({
      virtualNodeName: UNKNOWN,
      resources: news["resources"],
      consumerKubeconfig: envelope(kubeconfig),
    });
  });

  test("GIVEN a create that fails half-way WHEN it throws what it made THEN the error carries outputs for the engine: secrets wrapped, no URN", async () => {
    const target = withCode({
      create: (inputs) =>
        Promise.reject(
          partialFailure(new Error("negotiation: no offer"), "c1-to-p1", { ...inputs, status: "incomplete" }),
        ),
    });
    const failed = (await create(target, news, { timeoutSeconds: 0, preview: false }, []).catch((e: unknown) => e)) as {
      message: string;
      id: string;
      properties: Properties;
    };
    expect(failed.message).toBe("negotiation: no offer");
    expect(failed.id).toBe("c1-to-p1");
    expect(failed.properties["status"]).toBe("incomplete");
    expect(failed.properties["consumerKubeconfig"]).toEqual(envelope(kubeconfig));
    expect(failed.properties["__urn"]).toBeUndefined();
  });
});

describe("update, read and delete", () => {
  test("GIVEN a preview of an update WHEN run THEN the code is not called and the state's outputs carry over", async () => {
    const target = withCode({ update: () => Promise.reject(new Error("a preview must not update")) });
    const resized = { ...news, resources: { cpu: "1", memory: "4Gi", pods: 10 } };
    const { properties } = await update(target, "c1-to-p1", state, resized, { timeoutSeconds: 0, preview: true });
    expect(properties).toMatchObject({ virtualNodeName: "liqo-a", resources: resized["resources"], status: "Ready" });
  });

  test("GIVEN a refresh WHEN read THEN the code gets the revealed state with the URN; the stored inputs stay", async () => {
    const seen: Properties[] = [];
    const target = withCode({
      read: async (id, props) => {
        seen.push(props!);
        return { id, props: { ...props!, status: "identity revoked" } };
      },
    });
    const found = await read(target, "c1-to-p1", state, news);
    expect(seen[0]).toMatchObject({ consumerKubeconfig: kubeconfig, __urn: URN });
    expect(found.properties).toMatchObject({ status: "identity revoked", consumerKubeconfig: envelope(kubeconfig) });
    expect(found.inputs).toBe(news);
  });

  test("GIVEN no state (an import) of a Tunnel WHEN read by an ID without a kubeconfig file THEN it fails naming the ID and the form", async () => {
    const tunnel = { ...peering, kind: KINDS["liqo:index:Tunnel"]!, type: "liqo:index:Tunnel" };
    await expect(read(tunnel, "c1-to-p1", {}, {})).rejects.toThrow(
      'Tunnel import of ID "c1-to-p1": parsing the ID: it has no @; expected <consumerClusterId>-to-<providerClusterId>@',
    );
  });

  test("GIVEN customTimeouts delete 30s WHEN deleted THEN the code's deadline is 30 s", async () => {
    const seen: Properties[] = [];
    const target = withCode({ delete: async (_id, props) => void seen.push(props) });
    await remove(target, "c1-to-p1", state, { timeoutSeconds: 30, preview: false });
    expect(seen[0]).toMatchObject({ timeoutSeconds: 30, consumerKubeconfig: kubeconfig, __urn: URN });
  });
});
