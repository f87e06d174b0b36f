/**
 * Pulumi YAML through the provider plugin, on the shared local clusters: examples/yaml-peering
 * (b peers with a out-of-band, with a tunnel, and offloads a namespace) through the real `pulumi`
 * CLI and the YAML language host the toolchain builds, as the TypeScript examples run.
 */
import * as k8s from "@kubernetes/client-node";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adminConfig } from "../../harness/install.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { installPlugin, packPlugin, PACK_BOUND_MS } from "../../harness/plugin.js";
import { configureForLab, previewOf, PulumiWorkspace } from "../../harness/pulumi.js";
import { clusterOf, type LabState } from "../../local-cluster/lab.js";
import { expectStackLife } from "../support/plugin-stack.js";

const PROGRAM = join(__dirname, "..", "..", "examples", "yaml-peering");
/** The namespace of b the program offloads (its default). */
const OFFLOADED = "shop";
/** The pulumi commands of the example's whole life on the shared lab, each with its own deadline. */
const TEST_BOUND_MS = 12 * 60_000;

describe("the YAML example through the provider plugin", () => {
  let lab: LabState;
  let packed: string;
  let archive: string;
  beforeAll(async () => {
    packed = mkdtempSync(join(tmpdir(), "pulumi-liqo-plugin-"));
    archive = await packPlugin(packed);
    lab = await sharedLab();
  }, PACK_BOUND_MS + SHARED_LAB_BOUND_MS);
  afterAll(() => rmSync(packed, { recursive: true, force: true }));

  test(
    "GIVEN clusters a and b WHEN the YAML program runs up, no-change preview and refresh, a resize, destroy THEN it " +
      "peers, tunnels and offloads, says what a change does, keeps secrets ciphertext, and leaves nothing",
    async () => {
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      const core = adminConfig(b).makeApiClient(k8s.CoreV1Api);
      await core.createNamespace({ body: { metadata: { name: OFFLOADED } } });
      const workspace = await PulumiWorkspace.create(PROGRAM);
      try {
        await installPlugin(workspace, archive);
        await configureForLab(workspace, lab);
        expect((await previewOf(workspace)).steps.sort()).toEqual([
          "create a",
          "create a-token",
          "create b",
          "create b-offloads",
          "create b-to-a",
          "create b-to-a-tunnel",
        ]);

        const up = await workspace.ok(["up", "--yes", "--skip-preview"]);
        const output = async (name: string) => (await workspace.ok(["stack", "output", name])).stdout.trim();
        expect(await output("peeringStatus")).toBe("Ready");
        expect(await output("tunnelStatus")).toBe("Connected");
        expect(await output("virtualNode")).toBe("liqo-a");
        const remote = await output("offloadedAs");
        expect(remote).toMatch(new RegExp(`^${OFFLOADED}-[0-9a-f]{16}$`));
        await adminConfig(a).makeApiClient(k8s.CoreV1Api).readNamespace({ name: remote });

        await expectStackLife(workspace, up, a, b);
      } finally {
        // Whatever a failed step left in the clusters goes with the stack.
        await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
        workspace.dispose();
        await core.deleteNamespace({ name: OFFLOADED });
      }
    },
    TEST_BOUND_MS,
  );
});
