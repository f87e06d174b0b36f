/**
 * The conformance yardstick's smoke run: `npm run conformance`'s entry point on one spec, both
 * passes as the whole run makes them (a plain cluster; a consumer peered with a provider at the
 * default exposure on load balancers, its namespaces offloaded with the default naming, its worker
 * cordoned), so that a change that breaks the passes, the suite's images, the selection or the
 * table fails here and not on the next person's whole run. The spec is one of the quickest that
 * still needs a pod running on the virtual node and its status read back. It leaves no lab behind.
 */
import { execa } from "execa";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { downLab, listLabs } from "../../local-cluster/lab.js";

const REPO = join(__dirname, "..", "..");
/** The run's bound: two labs side by side (three clusters), the suite's images, a peering and a tunnel, on a loaded machine. */
const TEST_BOUND_MS = 15 * 60_000;
/** The spec: a pod's status shows its node's address. */
const SPEC = "[sig-node] Pods should get a host IP [NodeConformance] [Conformance]";

describe("npm run conformance, smoke run (one spec)", () => {
  test(
    "GIVEN the selection WHEN the yardstick runs one spec on both passes THEN it passes on both, the table and " +
      "the JSON say so, and no lab is left",
    async () => {
      const out = mkdtempSync(join(tmpdir(), "pulumi-liqo-conformance-"));
      // The run's labs in a root of their own, so that what it leaves is told from the suite's labs.
      const labRoot = join(out, "labs");
      try {
        const run = await execa(
          "node",
          [join(REPO, "dist", "bench", "conformance", "main.js"), "--focus", "should get a host IP", "--out", out],
          {
            cwd: REPO,
            reject: false,
            timeout: TEST_BOUND_MS - 60_000,
            stdin: "ignore",
            env: { LIQO_TEST_LAB_ROOT: labRoot },
          },
        );
        expect({ exitCode: run.exitCode, stdout: run.stdout.slice(-2000) }).toMatchObject({ exitCode: 0 });
        const table = readFileSync(join(out, "table.txt"), "utf8");
        expect(table).toContain("1 spec(s)");
        const { specs, comparison } = JSON.parse(readFileSync(join(out, "conformance.json"), "utf8")) as {
          specs: string[];
          comparison: { specs: { name: string; baseline: string; virtual: string }[] };
        };
        expect(specs).toEqual([expect.stringContaining(SPEC)]);
        expect(comparison.specs.map((spec) => [spec.baseline, spec.virtual])).toEqual([["passed", "passed"]]);
        expect(listLabs(labRoot)).toEqual([]);
      } finally {
        for (const name of listLabs(labRoot)) await downLab(name, labRoot);
        rmSync(out, { recursive: true, force: true });
      }
    },
    TEST_BOUND_MS,
  );
});
