import type { NamespaceOffloading, OutgoingPeering } from "../../../../core/api/index.js";
import { ABANDONED_VIRTUAL_NODES_ANNOTATION } from "../../../../core/api/index.js";
import { isDrained } from "../../../../agent/offloading/index.js";
import { failingReport, ProviderBackoffs } from "../../../../agent/offloading/provider-backoff.js";
import type { Reporter } from "../../../../agent/reporter.js";

const peering = (virtualNodeName: string, uid = `uid-${virtualNodeName}`): OutgoingPeering =>
  ({
    metadata: { uid },
    spec: {
      providerClusterId: `id-${virtualNodeName}`,
      providerClusterName: virtualNodeName.replace(/^liqo-/, ""),
      identitySecret: "",
      tenantNamespace: "pulumi-liqo-tenant-x",
      requestName: "r",
      virtualNodeName,
    },
  }) as unknown as OutgoingPeering;

function recording(): Reporter & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (line: string) => lines.push(`info ${line}`),
    warn: (line: string) => lines.push(`warn ${line}`),
  } as Reporter & { lines: string[] };
}

/** A failure as describeFailure shapes one that never reached the API server (no HTTP status). */
const refused = new Error(
  "offloading: listing offloadedpods in pulumi-liqo-tenant-x at https://10.0.0.1:6443: connection refused (ECONNREFUSED)",
);
/** A failure the provider answered (HTTP 500). */
const answered = Object.assign(
  new Error("offloading: applying RemoteNamespace at https://10.0.0.1:6443: HTTP 500: boom"),
  {
    httpStatus: 500,
  },
);

describe("the consumer's agent and a provider it cannot reach", () => {
  test(
    "GIVEN a provider that refuses connections pass after pass (2 s apart) WHEN the agent backs off " +
      "THEN it calls it only when due, warns while the pause grows, then is silent",
    () => {
      const backoffs = new ProviderBackoffs(undefined, () => 0);
      const reporter = recording();
      const a = peering("liqo-a");
      const calls: number[] = [];
      for (let now = 0; now <= 120_000; now += 2_000) {
        if (!backoffs.due(a, now)) continue;
        calls.push(now);
        backoffs.failed(a, refused, now, reporter);
      }
      // 1 s, 2 s, 4 s, 8 s, 16 s, then 30 s pauses, each rounded up to the next 2 s pass.
      expect(calls).toEqual([0, 2000, 4000, 8000, 16_000, 32_000, 62_000, 92_000]);
      expect(
        reporter.lines.every((l) => l.startsWith("warn offloading (consumer): provider a (virtual node liqo-a): ")),
      ).toBe(true);
      expect(reporter.lines).toHaveLength(6);
      expect(reporter.lines.at(-1)).toContain("(attempt 6, retry in 30 s)");
    },
  );

  test(
    "GIVEN a failing provider WHEN a namespace offloaded there is reported " +
      "THEN the report says Unreachable, where, why, and that the agent backs off; the same each pass",
    () => {
      const backoffs = new ProviderBackoffs(undefined, () => 0);
      const a = peering("liqo-a");
      expect(backoffs.reportOf(a, "shop-b")).toBeUndefined();
      backoffs.failed(a, refused, 0, recording());
      const first = backoffs.reportOf(a, "shop-b");
      backoffs.failed(a, refused, 5_000, recording());
      expect(backoffs.reportOf(a, "shop-b")).toEqual(first);
      expect(first).toEqual({
        phase: "Unreachable",
        message:
          `provider a cannot be reached: ${refused.message}; namespace shop-b there is left as it was and the consumer's agent ` +
          "tries again after a pause that grows to 30 s. If the provider is gone for good, set force: true on the NamespaceOffloading, then delete it",
      });
      expect(backoffs.reportOf(peering("liqo-c"), "shop-b")).toBeUndefined();
    },
  );

  test("GIVEN a provider that answers with a failure WHEN reported THEN it is an Error, not Unreachable", () => {
    expect(failingReport("a", answered.message, "failed", "shop-b").phase).toBe("Error");
    const backoffs = new ProviderBackoffs(undefined, () => 0);
    backoffs.failed(peering("liqo-a"), answered, 0, recording());
    expect(backoffs.reportOf(peering("liqo-a"), "shop-b")?.phase).toBe("Error");
  });

  test(
    "GIVEN a provider that refuses the peering's identity a right (HTTP 403) WHEN reported THEN it is Forbidden, " +
      "naming what was refused and the two ways out: the provider's Cluster, or force",
    () => {
      const forbidden = Object.assign(
        new Error(
          "offloading: listing ReflectedServices in pulumi-liqo-tenant-x at https://10.0.0.1:6443: HTTP 403: " +
            'reflectedservices.liqo.pulumi.io is forbidden: User "pulumi-liqo:consumer:bb" cannot list resource "reflectedservices"',
        ),
        { httpStatus: 403 },
      );
      const backoffs = new ProviderBackoffs(undefined, () => 0);
      backoffs.failed(peering("liqo-a"), forbidden, 0, recording());
      const report = backoffs.reportOf(peering("liqo-a"), "shop-b");
      expect(report?.phase).toBe("Forbidden");
      expect(report?.message).toContain(`provider a refuses this peering's identity: ${forbidden.message}`);
      expect(report?.message).toContain("Waiting does not change that");
      expect(report?.message).toContain("provider's Cluster");
      expect(report?.message).toContain("set force: true on the NamespaceOffloading");
    },
  );

  test("GIVEN a failing provider WHEN it answers again THEN the agent says it recovered once, and calls it at once from then on", () => {
    const backoffs = new ProviderBackoffs(undefined, () => 0);
    const reporter = recording();
    const a = peering("liqo-a");
    backoffs.failed(a, refused, 0, reporter);
    backoffs.failed(a, refused, 1_000, reporter);
    expect(backoffs.due(a, 2_000)).toBe(false);
    backoffs.succeeded(a, reporter);
    backoffs.succeeded(a, reporter);
    expect(reporter.lines.filter((l) => l.startsWith("info"))).toEqual([
      "info offloading (consumer): provider a (virtual node liqo-a): recovered after 2 failed attempts",
    ]);
    expect(backoffs.due(a, 2_000)).toBe(true);
    expect(backoffs.reportOf(a, "shop-b")).toBeUndefined();
  });

  test("GIVEN a failing peering WHEN it is deleted (not among the peerings) THEN it is forgotten", () => {
    const backoffs = new ProviderBackoffs(undefined, () => 0);
    const a = peering("liqo-a");
    backoffs.failed(a, refused, 0, recording());
    backoffs.keepOnly([peering("liqo-c")]);
    expect(backoffs.due(a, 0)).toBe(true);
    expect(backoffs.reportOf(a, "shop-b")).toBeUndefined();
  });
});

describe("whether a withdrawn namespace is drained", () => {
  const offloading = (annotations: Record<string, string> = {}): NamespaceOffloading => ({
    apiVersion: "v",
    kind: "NamespaceOffloading",
    metadata: { namespace: "shop", name: "offloading", annotations },
    spec: { remoteNamespace: "shop-b", virtualNodes: ["liqo-a", "liqo-c"] },
  });
  const peerings = new Set(["liqo-a", "liqo-c"]);

  test("GIVEN a provider not passed over (backing off) WHEN not given up THEN the namespace is not drained", () => {
    expect(isDrained(offloading(), peerings, new Map([["liqo-c", new Set<string>()]]))).toBe(false);
  });

  test("GIVEN that provider given up by a forced delete WHEN the others hold no pod of it THEN it is drained", () => {
    const given = offloading({ [ABANDONED_VIRTUAL_NODES_ANNOTATION]: "liqo-a" });
    expect(isDrained(given, peerings, new Map([["liqo-c", new Set<string>()]]))).toBe(true);
    expect(isDrained(given, peerings, new Map([["liqo-c", new Set(["shop"])]]))).toBe(false);
  });

  test("GIVEN a virtual node no peering has any more WHEN drained is asked THEN it counts as drained", () => {
    expect(isDrained(offloading(), new Set(["liqo-c"]), new Map([["liqo-c", new Set(["other"])]]))).toBe(true);
  });
});
