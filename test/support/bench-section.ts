/**
 * One section of `npm run bench` run through its real entry point (dist/bench/main.js, as
 * scripts/bench.sh runs it) with its smallest sizes, and the check that it produced its figures
 * (finite samples, targets with a value, the comparison with the figures of record), never their
 * values: those belong to a quiet machine, not to CI. The suite's smoke run (test/integration/bench-smoke) runs most sections on the shared lab;
 * a file that holds a lab of a section's own shape runs that section on it (`--lab NAME`).
 */
import { execa } from "execa";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const REPO = dirname(require.resolve("pulumi-liqo/package.json"));

/** The smallest sizes of every figure. */
export const SMALLEST_SIZES = [
  ...["--runs", "1", "--rounds", "1", "--seconds", "1", "--idle", "5"],
  ...["--refusals", "3", "--pods", "1", "--mesh", "2", "--scale-pods", "3", "--consumers", "1"],
];

/** A figure as the JSON holds it. */
interface Figures {
  results: Record<
    string,
    {
      series: { label: string; samples: number[]; median: number }[];
      targets: { label: string; value: number; limit: number }[];
    }
  >;
}

/**
 * Runs bench `section` with the smallest sizes and `labArgs` (`--shared-lab`, or `--lab NAME`),
 * within `deadlineMs`, and expects every figure and target it prints and writes; throws naming the
 * section and its last lines when it fails or runs out of time.
 */
export async function expectBenchSectionFigures(
  section: string,
  labArgs: readonly string[],
  deadlineMs: number,
): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "pulumi-liqo-bench-smoke-"));
  try {
    const out = join(work, `${section}.json`);
    const run = await execa(
      process.execPath,
      // Without the programs' type check: the smoke run checks that figures come, and `npm run
      // typecheck` checks the programs once.
      [join(REPO, "dist", "bench", "main.js"), section, ...SMALLEST_SIZES, "--no-type-check", ...labArgs, "--out", out],
      { cwd: REPO, reject: false, stdin: "ignore", timeout: deadlineMs, killSignal: "SIGTERM" },
    );
    if (run.timedOut)
      throw new Error(
        `bench ${section}: no result within its deadline of ${deadlineMs / 1000} s; its last lines:\n` +
          String(run.stderr).split("\n").slice(-15).join("\n"),
      );
    if (run.exitCode !== 0)
      throw new Error(`bench ${section} exited ${run.exitCode}:\n${String(run.stderr).slice(-3000)}`);
    const figures = (JSON.parse(readFileSync(out, "utf8")) as Figures).results[section];
    expect(figures?.series.length).toBeGreaterThan(0);
    expect(figures?.targets.length).toBeGreaterThan(0);
    for (const s of figures!.series) {
      expect({ [s.label]: s.samples.length > 0 && s.samples.every(Number.isFinite) }).toEqual({ [s.label]: true });
      expect(stdoutLine(String(run.stdout), s.label)).toBeDefined();
    }
    for (const t of figures!.targets) {
      expect({ [t.label]: Number.isFinite(t.value) }).toEqual({ [t.label]: true });
      expect(stdoutLine(String(run.stdout), t.label)).toMatch(/^(met {3}|MISSED) /);
    }
    // Compared with the figures of record, every slip printed with the record it slipped from.
    const slipped = /^slipped since the figures of record \(.*performance\.md\): (none|\d+)$/m.exec(String(run.stdout));
    expect(slipped).not.toBeNull();
    const slips = String(run.stdout)
      .split("\n")
      .filter((line) => line.startsWith("SLIPPED "));
    expect(slips.length).toBe(slipped![1] === "none" ? 0 : Number(slipped![1]));
    for (const line of slips)
      expect(line).toMatch(/ % worse than [\d.]+ \[[\d.]+–[\d.]+\] of \d{4}-\d\d-\d\d \(npm run bench/);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The line of the printed table that names `label`. */
function stdoutLine(stdout: string, label: string): string | undefined {
  return stdout.split("\n").find((line) => line.includes(label));
}
