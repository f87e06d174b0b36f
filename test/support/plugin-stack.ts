/**
 * Checks shared by the tests that run a peering through the provider plugin (a TypeScript program
 * of `liqo:index:*` resources, the YAML and Go examples): the same stack, whatever language wrote it.
 */
import * as k8s from "@kubernetes/client-node";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adminConfig } from "../../harness/install.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { packPlugin, PACK_BOUND_MS, workspaceWithPlugin } from "../../harness/plugin.js";
import { previewOf, type PulumiResult, type PulumiWorkspace } from "../../harness/pulumi.js";
import type { ClusterState, LabState } from "../../local-cluster/lab.js";
import { PEERING_DIFF } from "../../core/resources/peering.js";
import { projectTraces } from "../../harness/leaks.js";

/** The namespace of b the example programs offload (their default). */
export const OFFLOADED = "shop";

/**
 * For the tests of one `describe`: packs the plugin from the build and takes the shared lab before
 * them (Jest hooks), and removes the archive after. Read the fields inside the tests.
 */
export function pluginOnSharedLab(): { readonly archive: string; readonly lab: LabState } {
  const context = { archive: "", lab: undefined as unknown as LabState };
  let packed: string | undefined;
  beforeAll(async () => {
    packed = mkdtempSync(join(tmpdir(), "pulumi-liqo-plugin-"));
    context.archive = await packPlugin(packed);
    context.lab = await sharedLab();
  }, PACK_BOUND_MS + SHARED_LAB_BOUND_MS);
  afterAll(() => packed && rmSync(packed, { recursive: true, force: true }));
  return context;
}

/**
 * Runs `life` on a stack of example `program` with the plugin of `archive` installed, after making
 * namespace {@link OFFLOADED} in b; then, whatever happened, destroys the stack (whatever a failed
 * step left in the clusters goes with it), removes the workspace and the namespace.
 */
export async function withExampleStack(
  program: string,
  archive: string,
  b: ClusterState,
  life: (workspace: PulumiWorkspace) => Promise<void>,
): Promise<void> {
  const core = adminConfig(b).makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: OFFLOADED } } });
  try {
    const workspace = await workspaceWithPlugin(program, archive);
    try {
      await life(workspace);
    } finally {
      await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
      workspace.dispose();
    }
  } finally {
    await core.deleteNamespace({ name: OFFLOADED });
  }
}

/** The example's outputs after its `up`: b peered with a, the tunnel up, {@link OFFLOADED} offloaded to a namespace of a. */
export async function expectPeeredAndOffloaded(workspace: PulumiWorkspace, a: ClusterState): Promise<void> {
  const output = async (name: string) => (await workspace.ok(["stack", "output", name])).stdout.trim();
  expect(await output("peeringStatus")).toBe("Ready");
  expect(await output("tunnelStatus")).toBe("Connected");
  expect(await output("virtualNode")).toBe("liqo-a");
  const remote = await output("offloadedAs");
  expect(remote).toMatch(new RegExp(`^${OFFLOADED}-[0-9a-f]{16}$`));
  await adminConfig(a).makeApiClient(k8s.CoreV1Api).readNamespace({ name: remote });
}

/**
 * The rest of the life of a stack that peers b with a through the plugin, after its first `up`:
 * a no-change preview and refresh, secrets hidden, a resize in place, a clean destroy.
 */
export async function expectStackLife(workspace: PulumiWorkspace, up: PulumiResult, a: ClusterState, b: ClusterState) {
  await workspace.ok(["preview", "--expect-no-changes"]);
  await workspace.ok(["refresh", "--yes", "--expect-no-changes"]);
  await expectSecretsHidden(workspace, up, b);
  await expectResizeInPlace(workspace, b);
  await expectDestroyedClean(workspace, [a, b]);
}

/** The token (stack output `peeringToken`) and b's kubeconfig: ciphertext in the state, absent from what `up` printed. */
export async function expectSecretsHidden(
  workspace: PulumiWorkspace,
  up: PulumiResult,
  b: ClusterState,
): Promise<void> {
  const exported = (await workspace.ok(["stack", "export"])).stdout;
  const token = (await workspace.ok(["stack", "output", "peeringToken", "--show-secrets"])).stdout.trim();
  expect(token).toMatch(/^plt_[0-9a-f]{16}_/);
  for (const secret of [token, "client-key-data", "PRIVATE KEY", readFileSync(b.kubeconfig, "utf8")]) {
    expect(exported).not.toContain(secret);
    expect(up.stdout + up.stderr).not.toContain(secret);
  }
}

/**
 * Config `cpu` 2 -> 1: `preview --diff` shows Peering b-to-a's `resources.cpu` changing as an update
 * in place, with the reason the resource's rule gives told to the engine; `up` resizes b's node liqo-a.
 */
export async function expectResizeInPlace(workspace: PulumiWorkspace, b: ClusterState): Promise<void> {
  await workspace.ok(["config", "set", "cpu", "1"]);
  const diff = await workspace.ok(["preview", "--diff"]);
  expect(diff.stdout).toMatch(/~ liqo:index:Peering: \(update\)/);
  expect(diff.stdout).toMatch(/~ resources\s*:\s*\{\s*~ cpu\s*:\s*"2" => "1"/);
  expect(diff.stdout).not.toMatch(/replace/);
  expect((await previewOf(workspace)).explanations).toEqual([
    {
      urn: expect.stringMatching(/::liqo:index:Peering::b-to-a$/),
      message: `Peering "b-to-a": resources changes → updates in place: ${PEERING_DIFF.resources.reason}`,
    },
  ]);
  await workspace.ok(["up", "--yes", "--skip-preview"]);
  const node = await adminConfig(b).makeApiClient(k8s.CoreV1Api).readNode({ name: "liqo-a" });
  expect(node.status?.capacity).toEqual({ cpu: "1", memory: "4Gi", pods: "20" });
}

/** `destroy` leaves an empty stack and nothing of the project in `clusters`. */
export async function expectDestroyedClean(
  workspace: PulumiWorkspace,
  clusters: readonly ClusterState[],
): Promise<void> {
  await workspace.ok(["destroy", "--yes", "--skip-preview"]);
  const after = JSON.parse((await workspace.ok(["stack", "export"])).stdout) as {
    deployment: { resources?: unknown[] };
  };
  expect(after.deployment.resources ?? []).toHaveLength(0);
  for (const cluster of clusters) expect(await projectTraces(cluster.kubeconfig)).toEqual([]);
}
