import { detailedDiffOf } from "../../../plugin/diff.js";

describe("detailedDiffOf", () => {
  test("GIVEN changed inputs, one replacing, one a recorded status WHEN translated THEN one entry each, by schema path", () => {
    const found = {
      changed: ["consumerClusterId", "resources", "status"],
      replaces: ["consumerClusterId"],
      unknown: [],
    };
    const paths: Record<string, string> = { consumerClusterId: "consumer.clusterId" };
    expect(detailedDiffOf(found, (p) => paths[p] ?? p, new Set(["consumer", "resources"]))).toEqual([
      { path: "consumer.clusterId", kind: "update-replace", inputDiff: true },
      { path: "resources", kind: "update", inputDiff: true },
      { path: "status", kind: "update", inputDiff: false },
    ]);
  });
});
