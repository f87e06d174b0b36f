/**
 * Pulumi YAML through the provider plugin, on the shared local clusters: examples/yaml-peering
 * (b peers with a out-of-band, with a tunnel, and offloads a namespace) through the real `pulumi`
 * CLI and the YAML language host the toolchain builds, as the TypeScript examples run.
 */
import { join } from "node:path";
import { configureForLab, previewOf } from "../../harness/pulumi.js";
import { clusterOf } from "../../local-cluster/lab.js";
import {
  expectPeeredAndOffloaded,
  expectStackLife,
  pluginOnSharedLab,
  withExampleStack,
} from "../support/plugin-stack.js";

const PROGRAM = join(__dirname, "..", "..", "examples", "yaml-peering");
/** The pulumi commands of the example's whole life on the shared lab, each with its own deadline. */
const TEST_BOUND_MS = 12 * 60_000;

describe("the YAML example through the provider plugin", () => {
  const given = pluginOnSharedLab();

  test(
    "GIVEN clusters a and b WHEN the YAML program runs up, no-change preview and refresh, a resize, destroy THEN it " +
      "peers, tunnels and offloads, says what a change does, keeps secrets ciphertext, and leaves nothing",
    async () => {
      const [a, b] = [clusterOf(given.lab, "a"), clusterOf(given.lab, "b")];
      await withExampleStack(PROGRAM, given.archive, b, async (workspace) => {
        await configureForLab(workspace, given.lab);
        expect((await previewOf(workspace)).steps.sort()).toEqual([
          "create a",
          "create a-token",
          "create b",
          "create b-offloads",
          "create b-to-a",
          "create b-to-a-tunnel",
        ]);

        const up = await workspace.ok(["up", "--yes", "--skip-preview"]);
        await expectPeeredAndOffloaded(workspace, a);
        await expectStackLife(workspace, up, a, b);
      });
    },
    TEST_BOUND_MS,
  );
});
