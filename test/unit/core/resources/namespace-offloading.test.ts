/**
 * The NamespaceOffloading resource's `force`: checked, an in-place change that contacts no
 * cluster (alone or with the drift a refresh recorded), and only that.
 */
import { forgeKubeconfig } from "../../../../core/kube/kubeconfig.js";
import {
  namespaceOffloadingChanges,
  pulumiProvider as offloading,
  type NamespaceOffloadingInputs,
  type NamespaceOffloadingOutputs,
} from "../../../../core/resources/namespace-offloading.js";
import { recordsOnly } from "../../../../core/resources/diff-rules.js";

/** A consumer nothing listens at: any call to it would fail the update. */
const kubeconfig = forgeKubeconfig({
  name: "b",
  server: "https://127.0.0.1:1",
  caPem: "ca",
  certPem: "cert",
  keyPem: "key",
});
const inputs: NamespaceOffloadingInputs = {
  consumerKubeconfig: kubeconfig,
  consumerClusterId: "b1",
  namespace: "shop",
  virtualNodes: ["liqo-a"],
};
const gone = "provider a is unreachable: API server https://10.0.0.1:6443: connection refused (…)";
const olds: NamespaceOffloadingOutputs = {
  ...inputs,
  podOffloading: "local-and-remote",
  remoteNamespace: "shop-b1",
  remotes: [{ virtualNode: "liqo-a", remoteNamespace: "shop-b1", phase: "Unreachable", message: "…" }],
  status: gone,
};

describe("NamespaceOffloading force", () => {
  test("GIVEN force that is not a boolean WHEN checked THEN it is named", async () => {
    const { failures } = await offloading.check!(inputs, { ...inputs, force: "yes" as unknown as boolean });
    expect(failures?.map((f) => f.reason)).toEqual(['force: must be true or false, not "yes"']);
    expect((await offloading.check!(inputs, { ...inputs, force: true })).failures).toEqual([]);
  });

  test("GIVEN force turned on WHEN diffed THEN it updates in place, never replaces", async () => {
    const diff = await offloading.diff!("shop", { ...olds, status: "Ready" }, { ...inputs, force: true });
    expect(diff.changes).toBe(true);
    expect(diff.replaces ?? []).toEqual([]);
  });

  test("GIVEN force turned on with a refresh's drift WHEN updated THEN it only records, contacting no cluster, and keeps what was recorded", async () => {
    const news = { ...inputs, force: true };
    expect(recordsOnly(namespaceOffloadingChanges(olds, news), ["status"])).toBe(true);
    const { outs } = await offloading.update!("shop", olds, news);
    expect(outs).toEqual({ ...olds, force: true });
  });

  test("GIVEN force with another change, or drift alone WHEN updated THEN it is not only recorded", () => {
    expect(
      recordsOnly(namespaceOffloadingChanges(olds, { ...inputs, force: true, virtualNodes: ["liqo-c"] }), ["status"]),
    ).toBe(false);
    expect(recordsOnly(namespaceOffloadingChanges(olds, inputs), ["status"])).toBe(false);
    expect(
      recordsOnly(namespaceOffloadingChanges({ ...olds, force: true }, { ...inputs, force: false }), ["status"]),
    ).toBe(true);
  });
});

describe("NamespaceOffloading podOffloading", () => {
  test("GIVEN a policy that is not one of the three WHEN checked THEN it is named with the three", async () => {
    const { failures } = await offloading.check!(inputs, {
      ...inputs,
      podOffloading: "everywhere" as unknown as "remote",
    });
    expect(failures?.map((f) => f.reason)).toEqual([
      'podOffloading: must be "local-and-remote", "remote", "local", not "everywhere"',
    ]);
    for (const policy of ["local-and-remote", "remote", "local"] as const)
      expect((await offloading.check!(inputs, { ...inputs, podOffloading: policy })).failures).toEqual([]);
  });

  test("GIVEN a state made by a release that recorded no policy WHEN diffed with none given THEN the default is a change in place; once recorded, none", () => {
    const { podOffloading: _recorded, ...before } = olds;
    const upgraded = namespaceOffloadingChanges({ ...before, status: "Ready" }, inputs);
    expect(upgraded.changed).toEqual(["podOffloading"]);
    expect(upgraded.replaces).toEqual([]);
    expect(namespaceOffloadingChanges({ ...olds, status: "Ready" }, inputs).changed).toEqual([]);
    expect(
      namespaceOffloadingChanges({ ...olds, status: "Ready" }, { ...inputs, podOffloading: "local-and-remote" })
        .changed,
    ).toEqual([]);
  });

  test("GIVEN another policy THEN the change is in place and is not a record-only update", () => {
    const changes = namespaceOffloadingChanges({ ...olds, status: "Ready" }, { ...inputs, podOffloading: "remote" });
    expect(changes.changed).toEqual(["podOffloading"]);
    expect(changes.replaces).toEqual([]);
    expect(recordsOnly(changes, ["status"])).toBe(false);
  });
});

describe("NamespaceOffloading namespaceSelector", () => {
  const { namespace: _namespace, ...withoutNamespace } = inputs;
  test("GIVEN both namespace and namespaceSelector, or a selector that selects everything WHEN checked THEN each is named", async () => {
    const both = await offloading.check!(inputs, { ...inputs, namespaceSelector: { matchLabels: { team: "shop" } } });
    expect(both.failures?.map((f) => f.reason)).toEqual([
      "namespaceSelector: give either namespace (one namespace) or namespaceSelector (by label), not both",
    ]);
    const empty = await offloading.check!(inputs, { ...withoutNamespace, namespaceSelector: {} });
    expect(empty.failures?.map((f) => f.reason)).toEqual([
      "namespaceSelector: selects every namespace: give at least one label in matchLabels or matchExpressions",
    ]);
    const neither = await offloading.check!(inputs, withoutNamespace);
    expect(neither.failures?.map((f) => f.reason)).toEqual([
      "namespace: must name the consumer namespace to offload, or give namespaceSelector instead",
    ]);
    const good = await offloading.check!(inputs, {
      ...withoutNamespace,
      namespaceSelector: { matchLabels: { team: "shop" } },
    });
    expect(good.failures).toEqual([]);
  });

  test("GIVEN a selector offloading WHEN its labels change THEN it updates in place; WHEN it becomes one namespace THEN it is replaced", () => {
    const selected = { ...withoutNamespace, namespaceSelector: { matchLabels: { team: "shop" } } };
    const state = {
      ...selected,
      podOffloading: "local-and-remote" as const,
      remoteNamespace: "",
      remotes: [],
      selectorName: "teams-1",
      selectedNamespaces: [],
      status: "Ready",
    };
    const relabelled = namespaceOffloadingChanges(state, {
      ...selected,
      namespaceSelector: { matchLabels: { team: "web" } },
    });
    expect(relabelled.changed).toEqual(["namespaceSelector"]);
    expect(relabelled.replaces).toEqual([]);
    expect(namespaceOffloadingChanges(state, inputs).replaces).toEqual(["namespace"]);
  });
});
