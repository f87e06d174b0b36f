/**
 * The package as a user gets it: `npm pack` of this repository, installed with `npm install` into
 * a fresh program outside it (examples/local-peering's, with its tunnel), then `pulumi up` and
 * `pulumi destroy` against the shared local clusters.
 */
import * as k8s from "@kubernetes/client-node";
import { execa } from "execa";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clusterOf } from "../../local-cluster/lab.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab } from "../../harness/labs.js";
import { projectTraces, tunnelTraces } from "../../harness/leaks.js";
import { configureForLab, PulumiWorkspace } from "../../harness/pulumi.js";

/** Each test's bound: npm pack, its install into a fresh program, and that program's up and destroy. */
const TEST_BOUND_MS = 10 * 60_000;

const REPO = join(__dirname, "..", "..");

describe("the packed package", () => {
  test(
    "GIVEN npm pack of the repository WHEN installed into a fresh program and brought up and destroyed THEN the peering " +
      "and its tunnel work and nothing is left",
    async () => {
      const lab = await sharedLab();
      const packDir = mkdtempSync(join(tmpdir(), "pulumi-liqo-pack-"));
      let workspace: PulumiWorkspace | undefined;
      try {
        const packed = await execa("npm", ["pack", "--json", "--pack-destination", packDir], { cwd: REPO });
        const [{ filename, files }] = JSON.parse(String(packed.stdout)) as [
          { filename: string; files: { path: string }[] },
        ];
        const paths = files.map((f) => f.path);
        expect(paths).toEqual(
          expect.arrayContaining([
            "dist/sdk/nodejs/index.js",
            "dist/sdk/nodejs/index.d.ts",
            "dist/core/resources/tunnel.js",
            "dist/agent/main.js",
            "dist/host/processes.js",
            "schema.json",
            "README.md",
          ]),
        );
        // The test bed, the benchmark and the tests stay in the repository: the product imports none of them.
        const notShipped = ["dist/test/", "dist/bench/", "dist/harness/", "dist/local-cluster/"];
        expect(
          paths.filter(
            (p) => notShipped.some((dir) => p.startsWith(dir)) || (p.endsWith(".ts") && !p.endsWith(".d.ts")),
          ),
        ).toEqual([]);

        workspace = await PulumiWorkspace.create(join(REPO, "examples", "local-peering"), "packed", undefined, {
          tarball: join(packDir, filename),
        });
        await configureForLab(workspace, lab);
        await workspace.ok(["up", "--yes", "--skip-preview"]);
        expect((await workspace.ok(["stack", "output", "tunnelStatus"])).stdout.trim()).toBe("Connected");
        const node = await adminConfig(clusterOf(lab, "b")).makeApiClient(k8s.CoreV1Api).readNode({ name: "liqo-a" });
        expect(node.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
        await workspace.ok(["destroy", "--yes", "--skip-preview"]);
      } finally {
        await workspace?.pulumi(["destroy", "--yes", "--skip-preview"]);
        workspace?.dispose();
        rmSync(packDir, { recursive: true, force: true });
      }
      for (const cluster of lab.clusters) {
        expect(await projectTraces(cluster.kubeconfig)).toEqual([]);
        expect(await tunnelTraces(cluster)).toEqual([]);
      }
    },
    TEST_BOUND_MS,
  );
});
