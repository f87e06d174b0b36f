/**
 * The compatibility matrix's combinations and its table: which combinations a run covers, and how
 * their outcomes read, in the form docs/compatibility.md holds. Pure.
 */
import type { Combination, Outcome } from "./scenario.js";
import type { CniKind, KubeProxyMode } from "../../local-cluster/plan.js";

/**
 * Every pair of `releases` (consumer × provider), each once, with the kube-proxy modes taking
 * turns pair by pair and the CNIs every second pair, so that every mode meets every CNI and both
 * meet every release; `everyMode` runs each pair in every mode and CNI instead.
 */
export function combinations(
  releases: readonly string[],
  modes: readonly KubeProxyMode[],
  cnis: readonly CniKind[],
  everyMode: boolean,
): Combination[] {
  const pairs = releases.flatMap((consumer) => releases.map((provider) => ({ consumer, provider })));
  return pairs.flatMap((pair, i) => {
    const settings = everyMode
      ? modes.flatMap((kubeProxy) => cnis.map((cni) => ({ kubeProxy, cni })))
      : [{ kubeProxy: modes[i % modes.length]!, cni: cnis[Math.floor(i / modes.length) % cnis.length]! }];
    return settings.map((setting) => ({ ...pair, ...setting }));
  });
}

/** A combination as the table names it: `b 1.35 → a 1.37, nftables, bridge`. */
export function describeCombination(c: Combination): string {
  return `b ${c.consumer} → a ${c.provider}, ${c.kubeProxy}, ${c.cni}`;
}

/** The table of `outcomes`: one row each (combination, result, time, placement, the failed step and why). */
export function formatMatrix(outcomes: readonly Outcome[]): string {
  const rows = outcomes.map((o) => [
    describeCombination(o.combination),
    o.passed ? "passed" : "FAILED",
    `${Math.round(o.seconds)} s`,
    o.podPlacement ?? "-",
    o.failed ? `${o.failed.step}: ${o.failed.error}` : "",
  ]);
  const header = [
    "combination (consumer → provider, kube-proxy, CNI)",
    "result",
    "time",
    "b places pods by",
    "failed step",
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`.replace(/\s+\|$/, " |");
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
