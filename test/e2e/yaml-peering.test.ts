/**
 * Pulumi YAML through the provider plugin, on the shared local clusters: examples/yaml-peering
 * (b peers with a out-of-band, with a tunnel, and offloads a namespace) through the real `pulumi`
 * CLI and the YAML language host the toolchain builds, as the TypeScript examples run. Beside its
 * stack, while both clusters are installed, a second YAML stack's Peering presents a token the
 * provider never issued: its failed step reads as the TypeScript resources' does.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { adminConfig } from "../../harness/install.js";
import { workspaceWithPlugin } from "../../harness/plugin.js";
import { configureForLab, outputsOf, previewOf, setConfig, type PulumiWorkspace } from "../../harness/pulumi.js";
import { clusterOf, type ClusterState } from "../../local-cluster/lab.js";
import { forgePeeringToken, parsePeeringToken } from "../../core/authentication/tokens.js";
import { readPeeringClaim } from "../../core/peering/claim.js";
import { projectTraces } from "../../harness/leaks.js";
import {
  expectDestroyedClean,
  expectPeeredAndOffloaded,
  expectStackLife,
  pluginOnSharedLab,
  withExampleStack,
} from "../support/plugin-stack.js";

const PROGRAM = join(__dirname, "..", "..", "examples", "yaml-peering");
const REFUSED_TOKEN_PROGRAM = join(__dirname, "programs", "yaml-refused-token");
/** The pulumi commands of the example's whole life on the shared lab, and of the refused stack beside it, each with its own deadline. */
const TEST_BOUND_MS = 14 * 60_000;

/**
 * Beside the example's stack (which installed a and b), a YAML stack of one Peering a-to-b whose
 * token b never issued: `up` fails at authentication with the cause the TypeScript resources give
 * for it (test/integration/peering-topologies.test.ts: the step, the auth service, the refusal),
 * records the half-made Peering as incomplete, as they do (a's claim on the pair stays), prints and
 * stores no secret; its destroy leaves both clusters as they were, the claim gone.
 */
async function expectRefusedTokenReported(
  example: PulumiWorkspace,
  archive: string,
  a: ClusterState,
  b: ClusterState,
): Promise<void> {
  const [consumer, provider] = [await outputsOf(example, "Cluster", "a"), await outputsOf(example, "Cluster", "b")];
  // Where b's load balancer put its auth service, as b's Cluster read it back.
  const authUrl = String(provider["authUrl"]);
  expect(authUrl).toMatch(/^https:\/\/\d+\.\d+\.\d+\.\d+:8443$/);
  const traces = async () => [(await projectTraces(a.kubeconfig)).sort(), (await projectTraces(b.kubeconfig)).sort()];
  const claimOnB = () => readPeeringClaim(adminConfig(a), String(provider["clusterId"]));
  const before = await traces();
  const { token } = forgePeeringToken();
  const workspace = await workspaceWithPlugin(REFUSED_TOKEN_PROGRAM, archive);
  try {
    await setConfig(workspace, [
      ["consumerClusterId", String(consumer["clusterId"])],
      ["consumerKubeconfig", a.kubeconfig],
      ["providerClusterId", String(provider["clusterId"])],
      ["providerAuthUrl", authUrl],
      ["providerAuthCaCert", String(provider["authCaCert"])],
    ]);
    await workspace.ok(["config", "set", "--secret", "token", token]);

    const up = await workspace.pulumi(["up", "--yes", "--skip-preview"]);
    expect(up.exitCode).not.toBe(0);
    const { origin, hostname, port } = new URL(authUrl);
    expect(up.stdout).toContain(
      `authentication: identity for consumer ${String(consumer["clusterId"])} at auth service ${origin} ` +
        `(host ${hostname}, port ${port}) failed: refused, HTTP 403: peering token refused: unknown, revoked or wrong token`,
    );
    expect((await outputsOf(workspace, "Peering", "a-to-b"))["status"]).toBe("incomplete");
    expect(await claimOnB()).toMatch(/::liqo:index:Peering::a-to-b$/);
    const exported = (await workspace.ok(["stack", "export"])).stdout;
    // The token and its secret tail; a's kubeconfig, its client key (the data itself, and any trace of it).
    for (const secret of [
      token,
      parsePeeringToken(token)!.secret,
      readFileSync(a.kubeconfig, "utf8"),
      adminConfig(a).getCurrentUser()!.keyData!,
      "client-key-data",
      "PRIVATE KEY",
    ]) {
      expect(up.stdout + up.stderr).not.toContain(secret);
      expect(exported).not.toContain(secret);
    }

    // Its stack empty; the clusters are the example's, compared below.
    await expectDestroyedClean(workspace, []);
  } finally {
    await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
    workspace.dispose();
  }
  expect(await traces()).toEqual(before);
  expect(await claimOnB()).toBeUndefined();
}

describe("the YAML example through the provider plugin", () => {
  const given = pluginOnSharedLab();

  test(
    "GIVEN clusters a and b WHEN the YAML program runs up, no-change preview and refresh, a resize, destroy THEN it " +
      "peers, tunnels and offloads, says what a change does, keeps secrets ciphertext, and leaves nothing; WHEN a YAML " +
      "Peering beside it presents a token the provider never issued THEN up fails at authentication with the " +
      "TypeScript resources' cause, prints and stores no secret, and its destroy leaves nothing",
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
        // Progress goes through the engine (a plugin's own output is hidden): the steps on the peering's row.
        expect(up.stdout).toContain("[2/3] negotiation");
        await expectPeeredAndOffloaded(workspace, a);
        await expectRefusedTokenReported(workspace, given.archive, a, b);
        await expectStackLife(workspace, up, a, b);
      });
    },
    TEST_BOUND_MS,
  );
});
