/**
 * The compatibility matrix's smoke run: `npm run matrix`'s entry point on one cross-release
 * combination, the default path on clusters as users have them: the consumer on the oldest
 * supported release (scripts/versions.sh `MATRIX_SMOKE_CONSUMER`, which scripts/test.sh builds;
 * it places pods by the agent's webhook), the provider on the default release, Flannel as both
 * clusters' CNI, load balancers, the default exposure. So a change that breaks the scenario, its
 * program, the table, or any of those, fails here and not on the next person's run of the matrix.
 * It runs the whole scenario (a private lab, the README's program with label-selected offloading,
 * the two-tier app calling both ways, destroy with nothing left) and leaves no lab behind.
 */
import { execa } from "execa";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { downLab, listLabs } from "../../local-cluster/lab.js";

const REPO = join(__dirname, "..", "..");
/** The run's bound: a lab of two clusters, a pulumi up and destroy, on a loaded machine. */
const TEST_BOUND_MS = 15 * 60_000;

/** A setting of scripts/versions.sh. */
function pinned(name: string): string {
  return new RegExp(`^${name}=(\\S+)$`, "m").exec(readFileSync(join(REPO, "scripts", "versions.sh"), "utf8"))![1]!;
}

/** The default release's minor (`1.36`) and the consumer's of the smoke run (`1.35`). */
const PROVIDER = pinned("KUBERNETES_VERSION").split(".").slice(0, 2).join(".");
const CONSUMER = pinned("MATRIX_SMOKE_CONSUMER");

describe("npm run matrix, smoke run (one combination)", () => {
  test(
    "GIVEN a consumer on the oldest release, a provider on the default one, Flannel on both WHEN the matrix runs " +
      "its scenario THEN the row says passed with the webhook's placement and every step, and no lab is left",
    async () => {
      const out = mkdtempSync(join(tmpdir(), "pulumi-liqo-matrix-"));
      // The run's labs in a root of their own, so that what it leaves is told from the suite's labs.
      const labRoot = join(out, "labs");
      try {
        const combination = `b=${CONSUMER},a=${PROVIDER},cni=flannel`;
        const run = await execa(
          "node",
          [join(REPO, "dist", "bench", "matrix", "main.js"), "--combination", combination, "--out", out],
          {
            cwd: REPO,
            reject: false,
            timeout: TEST_BOUND_MS - 60_000,
            stdin: "ignore",
            env: { LIQO_TEST_LAB_ROOT: labRoot },
          },
        );
        expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
        const row = new RegExp(
          `^\\| b ${CONSUMER} → a ${PROVIDER}, iptables, flannel +\\| passed +\\| \\d+ s +\\| MutatingWebhook +\\| +\\|$`,
          "m",
        );
        expect(run.stdout).toMatch(row);
        expect(readFileSync(join(out, "matrix.md"), "utf8")).toMatch(row);
        const { outcomes } = JSON.parse(readFileSync(join(out, "matrix.json"), "utf8")) as {
          outcomes: { steps: { name: string }[] }[];
        };
        expect(outcomes[0]!.steps.map((s) => s.name)).toEqual([
          "clusters",
          "pulumi up",
          "app: data tier in b",
          "offloading by label",
          "app: web tier offloaded to a",
          "b calls a (db → web Service)",
          "a calls b (web → db Service)",
          "destroy with the app running",
        ]);
        expect(listLabs(labRoot)).toEqual([]);
      } finally {
        for (const name of listLabs(labRoot)) await downLab(name, labRoot);
        rmSync(out, { recursive: true, force: true });
      }
    },
    TEST_BOUND_MS,
  );
});
