/** Diff rules: how a table finds changes, and the lines a preview prints about them. */
import { changesOf, explainChanges, labelOf, urnOf, type DiffRules } from "../../../../core/resources/diff-rules.js";
import { URN_INPUT } from "../../../../core/resources/hidden-inputs.js";
import { UNKNOWN } from "../../../../core/resources/inputs.js";

interface Thing {
  readonly clusterId?: string;
  readonly port?: number;
  readonly nested?: { readonly id?: string };
  readonly status?: string;
}

const RULES = {
  clusterId: { effect: "replaces", reason: "things are named after it" },
  port: { effect: "updates in place", reason: "the gateway moves" },
  "nested.id": { effect: "replaces", reason: "nested", changed: (olds, news) => olds.nested?.id !== news.nested?.id },
  status: { effect: "updates in place", reason: "refresh found drift", changed: (olds) => olds.status === "broken" },
} as const satisfies DiffRules<Thing, Thing>;

const reasons = {
  port: { reason: "both gateways move to the new port and keep their keys" },
  "provider.clusterId": { reason: "the identity is the provider's" },
};

describe("changesOf", () => {
  test("GIVEN top-level, nested and recorded changes WHEN diffed THEN each is found by its rule, replacing ones listed apart, in the rules' order", () => {
    const olds: Thing = { clusterId: "c1", port: 1, nested: { id: "n1" }, status: "broken" };
    expect(changesOf(RULES, olds, { clusterId: "c2", port: 2, nested: { id: "n2" } })).toEqual({
      changed: ["clusterId", "port", "nested.id", "status"],
      replaces: ["clusterId", "nested.id"],
      unknown: [],
    });
    expect(changesOf(RULES, { clusterId: "c1", port: 1 }, { clusterId: "c1", port: 1 })).toEqual({
      changed: [],
      replaces: [],
      unknown: [],
    });
  });

  test("GIVEN values not known yet WHEN diffed THEN they are changes marked unknown, or no change with unknownIsUnchanged", () => {
    const olds: Thing = { clusterId: "c1", port: 1, nested: { id: "n1" } };
    const news = { clusterId: UNKNOWN, port: 1, nested: UNKNOWN } as unknown as Thing;
    expect(changesOf(RULES, olds, news)).toEqual({
      changed: ["clusterId", "nested.id"],
      replaces: ["clusterId", "nested.id"],
      unknown: ["clusterId", "nested.id"],
    });
    expect(changesOf(RULES, olds, news, { unknownIsUnchanged: true }).changed).toEqual(["nested.id"]);
  });
});

describe("explainChanges", () => {
  test("GIVEN a change in place WHEN explained THEN one line names the resource, the input, the effect and the reason", () => {
    expect(
      explainChanges({
        kind: "Tunnel",
        label: "b-to-a-tunnel",
        changed: ["port"],
        replaces: [],
        deleteBeforeReplace: true,
        reasons,
      }),
    ).toEqual([
      `Tunnel "b-to-a-tunnel": port changes → updates in place: both gateways move to the new port and keep their keys`,
    ]);
  });

  test(
    "GIVEN a replacing change beside one in place WHEN explained THEN the replacement comes first with its order, and the " +
      "other says the replacement takes it along",
    () => {
      const lines = explainChanges({
        kind: "Peering",
        label: "b-to-a",
        changed: ["port", "provider.clusterId"],
        replaces: ["provider.clusterId"],
        deleteBeforeReplace: true,
        reasons,
      });
      expect(lines).toEqual([
        `Peering "b-to-a": provider.clusterId changes → replaces (delete, then create): the identity is the provider's`,
        `Peering "b-to-a": port changes → taken along by the replacement; alone it would update in place: ` +
          `both gateways move to the new port and keep their keys`,
      ]);
      expect(
        explainChanges({
          kind: "PeeringToken",
          label: "t",
          changed: ["port"],
          replaces: ["port"],
          deleteBeforeReplace: false,
          reasons,
        })[0],
      ).toContain("replaces (create, then delete)");
    },
  );

  test("GIVEN values not known yet WHEN explained THEN the lines say the effect holds only if they differ", () => {
    const lines = explainChanges({
      kind: "Peering",
      label: "b-to-a",
      changed: ["provider.clusterId", "port"],
      replaces: ["provider.clusterId"],
      unknown: ["provider.clusterId", "port"],
      deleteBeforeReplace: true,
      reasons,
    });
    expect(lines[0]).toBe(
      `Peering "b-to-a": provider.clusterId is not known yet (it comes from a resource that changes first) → replaces if it ` +
        `differs (delete, then create): the identity is the provider's`,
    );
    expect(
      explainChanges({
        kind: "Tunnel",
        label: "x",
        changed: ["port"],
        replaces: [],
        unknown: ["port"],
        deleteBeforeReplace: true,
        reasons,
      })[0],
    ).toContain(
      "port is not known yet (it comes from a resource that changes first) → updates in place if it differs:",
    );
  });

  test("GIVEN an input without a reason WHEN explained THEN the line still says what happens, with no dangling colon", () => {
    expect(
      explainChanges({
        kind: "Cluster",
        label: "a",
        changed: ["name"],
        replaces: [],
        deleteBeforeReplace: false,
        reasons,
      }),
    ).toEqual([`Cluster "a": name changes → updates in place`]);
  });
});

describe("the resource's URN and label", () => {
  test("GIVEN the URN the SDK passed WHEN labelled THEN the label is the resource's name; without one (or unknown), the id", () => {
    const news = { [URN_INPUT]: "urn:pulumi:dev::proj::pulumi-nodejs:dynamic/liqo:Tunnel::b-to-a-tunnel" };
    expect([urnOf(news), labelOf(news, "c1-to-p1")]).toEqual([news[URN_INPUT], "b-to-a-tunnel"]);
    expect([urnOf({}), labelOf({}, "c1-to-p1")]).toEqual(["", "c1-to-p1"]);
    expect(urnOf({ [URN_INPUT]: UNKNOWN })).toBe("");
  });
});
