/**
 * Go through the provider plugin, on the shared local clusters: examples/go-peering (b peers with a
 * out-of-band, with a tunnel, and offloads a namespace) runs on the committed Go SDK (sdk/go, which
 * test/unit/plugin/sdks.test.ts holds equal to what `pulumi package gen-sdk --language go` makes of
 * schema.json) through the real `pulumi` CLI and the Go language host the toolchain builds. Few
 * pulumi runs, since each that starts the program compiles it: up, a no-change preview, destroy.
 */
import { execa } from "execa";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { configureForLab, PULUMI_COMMAND_TIMEOUT_MS, PulumiWorkspace } from "../../harness/pulumi.js";
import { clusterOf } from "../../local-cluster/lab.js";
import {
  expectDestroyedClean,
  expectPeeredAndOffloaded,
  expectSecretsHidden,
  pluginOnSharedLab,
  withExampleStack,
} from "../support/plugin-stack.js";

const REPO = join(__dirname, "..", "..");
const PROGRAM = join(REPO, "examples", "go-peering");
const SDK = join(REPO, "sdk", "go");
/**
 * The example's life on the shared lab. The program's first compile (the Pulumi Go SDK and its
 * modules, on an empty Go build cache) took 65 s of a quiet two-core machine.
 */
const TEST_BOUND_MS = 12 * 60_000;

/** Points the copied program's go.mod at this checkout's SDK: it says ../../sdk/go, which the copy has not beside it. */
async function useCheckoutSdk(workspace: PulumiWorkspace): Promise<void> {
  await execa("go", ["mod", "edit", `-replace=github.com/pulumi-liqo/pulumi-liqo/sdk/go=${SDK}`], {
    cwd: workspace.programDir,
  });
}

describe("a Go program that does not compile", () => {
  test(
    "GIVEN a Go program with a compile error WHEN previewed THEN the error names the file, line and cause",
    async () => {
      const workspace = await PulumiWorkspace.create(PROGRAM);
      try {
        await useCheckoutSdk(workspace);
        writeFileSync(
          join(workspace.programDir, "main.go"),
          'package main\n\nimport "github.com/pulumi/pulumi/sdk/v3/go/pulumi"\n\n' +
            "func main() { pulumi.Run(func(ctx *pulumi.Context) error { return notDeclared }) }\n",
        );
        const preview = await workspace.pulumi(["preview"]);
        expect(preview.exitCode).not.toBe(0);
        expect(preview.stdout).toMatch(/go build of the program in \S+ failed/);
        expect(preview.stdout).toMatch(/main\.go:5:\d+: undefined: notDeclared/);
      } finally {
        workspace.dispose();
      }
    },
    PULUMI_COMMAND_TIMEOUT_MS,
  );
});

describe("the Go example through the provider plugin and the generated Go SDK", () => {
  const given = pluginOnSharedLab();

  test(
    "GIVEN clusters a and b WHEN the Go program runs up, a no-change preview and destroy THEN it peers, tunnels " +
      "and offloads, keeps secrets ciphertext and leaves nothing",
    async () => {
      const [a, b] = [clusterOf(given.lab, "a"), clusterOf(given.lab, "b")];
      await withExampleStack(PROGRAM, given.archive, b, async (workspace) => {
        await useCheckoutSdk(workspace);
        await configureForLab(workspace, given.lab);
        const up = await workspace.ok(["up", "--yes", "--skip-preview"]);
        await expectPeeredAndOffloaded(workspace, a);
        await workspace.ok(["preview", "--expect-no-changes"]);
        await expectSecretsHidden(workspace, up, b);
        await expectDestroyedClean(workspace, [a, b]);
      });
    },
    TEST_BOUND_MS,
  );
});
