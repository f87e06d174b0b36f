/** The two passes side by side: statuses per spec, counts, the ratio and the table printed. */
import type { SpecResult } from "../../../../bench/conformance/junit.js";
import { compare, formatComparison } from "../../../../bench/conformance/table.js";

const spec = (name: string, status: string, reason?: string): SpecResult => ({
  name,
  status,
  seconds: 1,
  ...(reason ? { reason } : {}),
});

describe("compare", () => {
  test("GIVEN both passes WHEN compared THEN each spec shows both results, and the ratio is virtual passes over baseline passes", () => {
    const baseline = [spec("b", "passed"), spec("a", "passed"), spec("c", "failed", "no DNS"), spec("d", "passed")];
    const virtual = [spec("a", "passed"), spec("b", "failed", "no host IP"), spec("c", "passed"), spec("d", "passed")];

    const comparison = compare(baseline, virtual);

    expect(comparison.specs.map((s) => [s.name, s.baseline, s.virtual])).toEqual([
      ["a", "passed", "passed"],
      ["b", "passed", "failed"],
      ["c", "failed", "passed"],
      ["d", "passed", "passed"],
    ]);
    expect(comparison.specs[1]!.virtualReason).toBe("no host IP");
    expect(comparison).toMatchObject({
      baselinePassed: 3,
      virtualPassed: 3,
      bothPassed: 2,
      ratio: 1,
      sharedRatio: 2 / 3,
    });
  });

  test("GIVEN one pass only and skipped specs WHEN compared THEN the other pass is absent, specs skipped by all are left out", () => {
    const comparison = compare([spec("a", "passed"), spec("z", "skipped")], []);

    expect(comparison.specs).toEqual([{ name: "a", baseline: "passed", virtual: "absent" }]);
    expect(comparison).toMatchObject({ baselinePassed: 1, virtualPassed: 0, ratio: 0 });
  });

  test("GIVEN the selected specs and a pass cut short WHEN compared THEN every selected spec has a row, the unreached ones skipped", () => {
    const comparison = compare(
      [spec("a", "passed"), spec("b", "passed")],
      [spec("a", "passed"), spec("b", "skipped")],
      ["a", "b", "c"],
    );

    expect(comparison.specs.map((s) => [s.name, s.baseline, s.virtual])).toEqual([
      ["a", "passed", "passed"],
      ["b", "passed", "skipped"],
      ["c", "absent", "absent"],
    ]);
    expect(formatComparison(comparison)).toContain("passed: baseline 2 of 2, virtual node 1 of 1, both 1 (of 3 specs)");
  });

  test("GIVEN a baseline that passed nothing WHEN compared THEN there is no ratio", () => {
    expect(compare([spec("a", "failed")], [spec("a", "passed")]).ratio).toBeUndefined();
  });
});

describe("formatComparison", () => {
  test("GIVEN a comparison WHEN printed THEN one line per spec, the virtual node's failures with reasons, counts and the ratio against 98 %", () => {
    const text = formatComparison(
      compare(
        [spec("[sig-node] Pods a", "passed"), spec("[sig-node] Pods b", "passed")],
        [spec("[sig-node] Pods a", "passed"), spec("[sig-node] Pods b", "failed", "Timed out after 300 s")],
      ),
    );

    expect(text).toBe(
      [
        "baseline  virtual   spec",
        "pass      pass      [sig-node] Pods a",
        "pass      FAIL      [sig-node] Pods b",
        "",
        "not passed on the virtual node:",
        "- [sig-node] Pods b",
        "    failed: Timed out after 300 s",
        "",
        "passed: baseline 2 of 2, virtual node 1 of 2, both 1 (of 2 specs)",
        "ratio (virtual passes / baseline passes): 1/2 = 50.0 % (target ≥ 98 %: missed); of the baseline's passes, the virtual node passes 1 = 50.0 %",
      ].join("\n"),
    );
  });

  test("GIVEN a long reason WHEN printed THEN it is cut to the width with an ellipsis", () => {
    const text = formatComparison(compare([spec("a", "passed")], [spec("a", "timedout", "x".repeat(50))]), 10);

    expect(text).toContain("    timedout: xxxxxxxxx…");
  });
});
