/**
 * The benchmark's smoke run: each section of `npm run bench` once, with its smallest sizes, through
 * its real entry point (dist/bench/main.js, as scripts/bench.sh runs it) on the product as users
 * deploy it (agents as pods), so that a change that breaks a section fails here and not on the next
 * person's fresh clone. It checks that every section produces its figures (finite samples, targets
 * with a value), never their values: those belong to a quiet machine, not to CI.
 *
 * Cheap on purpose: the sections that need clusters a and b run on this worker's shared lab
 * (`--shared-lab`; the child process takes it as the suite's files do, so this file never holds it
 * itself), with one round or run each and one-second transfers. `renewal` is left out: its
 * identity lives the CSR API's minimum of 600 s, so it cannot run in less than about 11 minutes.
 */
import { execa } from "execa";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { clusterOf } from "../../local-cluster/lab.js";
import { uninstallClusters } from "../../harness/install.js";
import { releaseSharedLab, sharedLab } from "../../harness/labs.js";

const REPO = dirname(require.resolve("pulumi-liqo/package.json"));

/** The smallest sizes of every figure. */
const SMALLEST = [
  ...["--runs", "1", "--rounds", "1", "--seconds", "1", "--idle", "5"],
  ...["--refusals", "3", "--pods", "1", "--mesh", "2"],
];

/** Each section, and the deadline of its run (its labs, installs, pulumi runs and teardown, on a busy machine). */
const SECTIONS = [
  // The first section run may start the shared lab (about 2 minutes on a loaded machine).
  { section: "auth", deadlineMs: 6 * 60_000 },
  { section: "tunnel", deadlineMs: 10 * 60_000 },
  // A private lab of two clusters with two nodes each (a gateway pod must be able to move).
  { section: "gateway-move", deadlineMs: 10 * 60_000 },
  { section: "offloading", deadlineMs: 10 * 60_000 },
  { section: "mesh", deadlineMs: 10 * 60_000 },
  { section: "stacks", deadlineMs: 15 * 60_000 },
] as const;

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

describe("npm run bench, smoke run (smallest sizes, figures produced)", () => {
  const work = mkdtempSync(join(tmpdir(), "pulumi-liqo-bench-smoke-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  for (const { section, deadlineMs } of SECTIONS) {
    test(
      `GIVEN the shared lab WHEN \`bench ${section}\` runs with its smallest sizes THEN it prints and writes its figures ` +
        `(within ${deadlineMs / 60_000} min)`,
      async () => {
        const out = join(work, `${section}.json`);
        const run = await execa(
          process.execPath,
          [join(REPO, "dist", "bench", "main.js"), section, ...SMALLEST, "--shared-lab", "--out", out],
          { cwd: REPO, reject: false, stdin: "ignore", timeout: deadlineMs, killSignal: "SIGTERM" },
        );
        try {
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
            expect({ [s.label]: s.samples.length > 0 && s.samples.every(Number.isFinite) }).toEqual({
              [s.label]: true,
            });
            expect(stdoutLine(String(run.stdout), s.label)).toBeDefined();
          }
          for (const t of figures!.targets) {
            expect({ [t.label]: Number.isFinite(t.value) }).toEqual({ [t.label]: true });
            expect(stdoutLine(String(run.stdout), t.label)).toMatch(/^(met {3}|MISSED) /);
          }
        } catch (error) {
          // A section that failed half-way may leave its installs on the shared lab: the next files need it clean.
          const lab = await sharedLab();
          await uninstallClusters([clusterOf(lab, "a"), clusterOf(lab, "b")]);
          await releaseSharedLab();
          throw error;
        }
      },
      deadlineMs + 5 * 60_000,
    );
  }
});

/** The line of the printed table that names `label`. */
function stdoutLine(stdout: string, label: string): string | undefined {
  return stdout.split("\n").find((line) => line.includes(label));
}
