/**
 * The two passes side by side: each selected spec's result on the plain cluster (the baseline) and
 * on the virtual node, and the yardstick's ratio. Pure.
 */
import type { SpecResult } from "./junit.js";

/** One spec's results on both passes; a pass that does not list it (not run, or not selected there) says `absent`. */
export interface ComparedSpec {
  readonly name: string;
  readonly baseline: string;
  readonly virtual: string;
  /** Why it failed on the virtual node, when it did. */
  readonly virtualReason?: string;
  /** Why it failed on the baseline, when it did. */
  readonly baselineReason?: string;
}

/** The comparison of the two passes. */
export interface Comparison {
  readonly specs: readonly ComparedSpec[];
  /** Specs passed on the baseline. */
  readonly baselinePassed: number;
  /** Specs passed on the virtual node. */
  readonly virtualPassed: number;
  /** Specs passed on both. */
  readonly bothPassed: number;
  /** The yardstick: `virtualPassed / baselinePassed`; undefined when the baseline passed none. */
  readonly ratio?: number;
  /**
   * Of the specs the real node passes, the share the virtual node passes too (`bothPassed /
   * baselinePassed`): the ratio without the specs that pass on the virtual node alone.
   */
  readonly sharedRatio?: number;
}

/** Each result by name. */
const byName = (results: readonly SpecResult[]): Map<string, SpecResult> => new Map(results.map((r) => [r.name, r]));

/**
 * Compares the two passes' specs, sorted by name: the `selected` ones (a spec a pass never reached
 * shows as it did there, `skipped`, or `absent` when the pass did not run), and any other a pass
 * ran. A spec neither selected nor run (skipped by both) is left out.
 */
export function compare(
  baseline: readonly SpecResult[],
  virtual: readonly SpecResult[],
  selected: readonly string[] = [],
): Comparison {
  const [b, v] = [byName(baseline), byName(virtual)];
  const ran = [...baseline, ...virtual].filter((r) => r.status !== "skipped").map((r) => r.name);
  const names = [...new Set([...selected, ...ran])].sort();
  const specs = names.map((name): ComparedSpec => {
    const [onBaseline, onVirtual] = [b.get(name), v.get(name)];
    return {
      name,
      baseline: onBaseline?.status ?? "absent",
      virtual: onVirtual?.status ?? "absent",
      ...(onBaseline?.reason ? { baselineReason: onBaseline.reason } : {}),
      ...(onVirtual?.reason ? { virtualReason: onVirtual.reason } : {}),
    };
  });
  const baselinePassed = specs.filter((s) => s.baseline === "passed").length;
  const virtualPassed = specs.filter((s) => s.virtual === "passed").length;
  const bothPassed = specs.filter((s) => s.baseline === "passed" && s.virtual === "passed").length;
  return {
    specs,
    baselinePassed,
    virtualPassed,
    bothPassed,
    ...(baselinePassed > 0 ? { ratio: virtualPassed / baselinePassed, sharedRatio: bothPassed / baselinePassed } : {}),
  };
}

/** The yardstick's target: the virtual node passes at least this share of what the real node passes. */
export const TARGET_RATIO = 0.98;

const MARK: Readonly<Record<string, string>> = { passed: "pass", failed: "FAIL", skipped: "skip", absent: "-" };
const mark = (status: string): string => MARK[status] ?? status;

/** `text` cut to `width` characters, with an ellipsis when cut. */
const cut = (text: string, width: number): string => (text.length > width ? `${text.slice(0, width - 1)}…` : text);

/**
 * The table the command prints: one line per spec (baseline, virtual, name), then the virtual
 * node's failures with their reasons, then the counts and the ratio against the target.
 */
export function formatComparison(comparison: Comparison, reasonWidth = 300): string {
  const lines = ["baseline  virtual   spec"];
  for (const spec of comparison.specs)
    lines.push(`${mark(spec.baseline).padEnd(10)}${mark(spec.virtual).padEnd(10)}${spec.name}`);
  const failures = comparison.specs.filter(
    (s) => s.virtual !== "passed" && s.virtual !== "absent" && s.virtual !== "skipped",
  );
  if (failures.length > 0) {
    lines.push("", "not passed on the virtual node:");
    for (const spec of failures)
      lines.push(
        `- ${spec.name}`,
        `    ${spec.virtual}: ${cut(spec.virtualReason ?? "(no reason in the report)", reasonWidth)}`,
      );
  }
  const { baselinePassed, virtualPassed, bothPassed, ratio, sharedRatio } = comparison;
  const percent = (share: number): string => `${(share * 100).toFixed(1)} %`;
  const ranOn = (pass: "baseline" | "virtual"): number =>
    comparison.specs.filter((s) => s[pass] !== "absent" && s[pass] !== "skipped").length;
  lines.push(
    "",
    `passed: baseline ${baselinePassed} of ${ranOn("baseline")}, virtual node ${virtualPassed} of ${ranOn("virtual")}, ` +
      `both ${bothPassed} (of ${comparison.specs.length} specs)`,
    ratio === undefined || sharedRatio === undefined
      ? "ratio: none (the baseline passed no spec)"
      : `ratio (virtual passes / baseline passes): ${virtualPassed}/${baselinePassed} = ${percent(ratio)} ` +
          `(target ≥ ${TARGET_RATIO * 100} %: ${ratio >= TARGET_RATIO ? "met" : "missed"}); ` +
          `of the baseline's passes, the virtual node passes ${bothPassed} = ${percent(sharedRatio)}`,
  );
  return lines.join("\n");
}
