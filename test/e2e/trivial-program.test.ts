/**
 * The toolchain's `pulumi` runs a program offline: preview, up, a no-change preview, an update,
 * destroy. This proves the CLI, the Node.js language host and the dynamic-provider shim together.
 */
import { join } from "node:path";
import { PulumiWorkspace } from "../../harness/pulumi.js";

/** Each test's bound: a trivial program's up and destroy through the pulumi CLI. */
const TEST_BOUND_MS = 5 * 60_000;

describe("pulumi CLI on a trivial program", () => {
  test(
    "GIVEN a program with one dynamic resource WHEN preview, up, preview, update, destroy THEN each does what it says",
    async () => {
      const workspace = await PulumiWorkspace.create(join(__dirname, "programs", "trivial"));
      try {
        const version = await workspace.ok(["version"]);
        expect(version.stdout.trim()).toMatch(/^v3\.\d+\.\d+$/);

        const preview = await workspace.ok(["preview", "--json"]);
        const steps = JSON.parse(preview.stdout) as { steps: { op: string; urn: string }[] };
        expect(steps.steps.filter((s) => s.op === "create").map((s) => s.urn.split("::").pop())).toEqual(
          expect.arrayContaining(["trivial-test", "echo"]),
        );

        await workspace.ok(["up", "--yes"]);
        expect((await workspace.ok(["stack", "output", "length"])).stdout.trim()).toBe("5");
        await workspace.ok(["preview", "--expect-no-changes"]);

        await workspace.ok(["config", "set", "message", "hello, world"]);
        const plan = JSON.parse((await workspace.ok(["preview", "--json"])).stdout) as {
          steps: { op: string; urn: string }[];
        };
        expect(plan.steps.filter((s) => s.op === "replace").map((s) => s.urn.split("::").pop())).toEqual(["echo"]);
        await workspace.ok(["up", "--yes"]);
        expect((await workspace.ok(["stack", "output", "length"])).stdout.trim()).toBe("12");

        await workspace.ok(["destroy", "--yes"]);
        const exported = JSON.parse((await workspace.ok(["stack", "export"])).stdout) as {
          deployment: { resources?: unknown[] };
        };
        expect(exported.deployment.resources ?? []).toHaveLength(0);
      } finally {
        workspace.dispose();
      }
    },
    TEST_BOUND_MS,
  );
});
