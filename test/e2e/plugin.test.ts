/**
 * The provider plugin pulumi-resource-liqo through the real `pulumi` engine: packed as the archive
 * a pluginDownloadURL serves (scripts/plugin.sh, from the build), installed with `pulumi plugin
 * install`, and driven by a TypeScript program that knows the resources only by their type tokens
 * (test/e2e/programs/plugin).
 */
import * as k8s from "@kubernetes/client-node";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adminConfig } from "../../harness/install.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { installPlugin, packPlugin, PACK_BOUND_MS } from "../../harness/plugin.js";
import { configureForLab, PulumiWorkspace } from "../../harness/pulumi.js";
import { clusterOf, type LabState } from "../../local-cluster/lab.js";
import { expectStackLife } from "../support/plugin-stack.js";

const PROGRAM = join(__dirname, "programs", "plugin");

/** A few pulumi commands on a resource that needs no cluster. */
const TIMEOUT_TEST_BOUND_MS = 3 * 60_000;
/** The pulumi commands of a peering's whole life on the shared lab, each with its own deadline. */
const PEERING_TEST_BOUND_MS = 10 * 60_000;

/** The hanging API server's bearer token: a secret the test looks for in what pulumi printed. */
const SILENT_TOKEN = "silent-api-server-token-0123456789";

/** A TCP server that takes connections and never answers: an API server that hangs. Close it in `finally`. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A workspace of the program with the plugin installed from `archive` in its own Pulumi home. */
async function workspaceWithPlugin(archive: string): Promise<PulumiWorkspace> {
  const workspace = await PulumiWorkspace.create(PROGRAM);
  try {
    await installPlugin(workspace, archive);
    return workspace;
  } catch (error) {
    workspace.dispose();
    throw error;
  }
}

describe("the provider plugin through the pulumi CLI", () => {
  let packed: string;
  let archive: string;
  beforeAll(async () => {
    packed = mkdtempSync(join(tmpdir(), "pulumi-liqo-plugin-"));
    archive = await packPlugin(packed);
  }, PACK_BOUND_MS);
  afterAll(() => rmSync(packed, { recursive: true, force: true }));

  test(
    "GIVEN a Cluster whose API server never answers, with customTimeouts create 5s WHEN up THEN its create fails in " +
      "about 5 s naming the timeout, and no secret is printed",
    async () => {
      const api = await silentServer();
      const workspace = await workspaceWithPlugin(archive);
      try {
        // A bearer token, not a client key: the connection must get as far as the hanging server.
        const kubeconfig = JSON.stringify({
          apiVersion: "v1",
          kind: "Config",
          clusters: [
            { name: "silent", cluster: { server: `https://127.0.0.1:${api.port}`, "insecure-skip-tls-verify": true } },
          ],
          users: [{ name: "silent", user: { token: SILENT_TOKEN } }],
          contexts: [{ name: "silent", context: { cluster: "silent", user: "silent" } }],
          "current-context": "silent",
        });
        const kubeconfigPath = join(workspace.dir, "silent.kubeconfig");
        writeFileSync(kubeconfigPath, kubeconfig);
        for (const [key, value] of [
          ["mode", "unanswered"],
          ["createTimeout", "5s"],
          ["aKubeconfig", kubeconfigPath],
          ["aPodCidr", "10.71.0.0/16"],
          ["aServiceCidr", "10.72.0.0/16"],
        ])
          await workspace.ok(["config", "set", key!, value!]);

        const up = await workspace.pulumi(["up", "--yes", "--skip-preview"]);
        expect(up.exitCode).not.toBe(0);
        expect(up.stdout).toContain('Cluster "a": create: did not finish within its customTimeouts of 5 s');
        // The row's own clock: the create ended a second or so after its 5 s (the default deadline is 300 s).
        const seconds = Number(/liqo:index:Cluster a creating \((\d+)s\) error/.exec(up.stdout)?.[1]);
        expect(seconds).toBeGreaterThanOrEqual(5);
        expect(seconds).toBeLessThanOrEqual(9);
        expect(up.stdout + up.stderr).not.toContain(SILENT_TOKEN);
      } finally {
        workspace.dispose();
        await api.close();
      }
    },
    TIMEOUT_TEST_BOUND_MS,
  );

  describe("on the shared lab", () => {
    let lab: LabState;
    beforeAll(async () => {
      lab = await sharedLab();
    }, SHARED_LAB_BOUND_MS);

    test(
      "GIVEN clusters a and b WHEN preview, up, no-change preview and refresh, a resize, destroy through the plugin " +
        "THEN each does what it says, secrets stay ciphertext, and nothing is left",
      async () => {
        const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
        const workspace = await workspaceWithPlugin(archive);
        try {
          await configureForLab(workspace, lab);
          const plan = JSON.parse((await workspace.ok(["preview", "--json"])).stdout) as {
            steps: { op: string; urn: string }[];
          };
          expect(
            plan.steps
              .filter((s) => !s.urn.includes("pulumi:pulumi:Stack"))
              .map((s) => `${s.op} ${s.urn.split("::").slice(-2).join("::")}`)
              .sort(),
          ).toEqual([
            "create liqo:index:Cluster::a",
            "create liqo:index:Cluster::b",
            "create liqo:index:Peering::b-to-a",
            "create liqo:index:PeeringToken::a-token",
          ]);

          const up = await workspace.ok(["up", "--yes", "--skip-preview"]);
          // Progress goes through the engine (a plugin's own output is hidden): the steps on the peering's row.
          expect(up.stdout).toContain("[2/3] negotiation");
          expect((await workspace.ok(["stack", "output", "peeringStatus"])).stdout.trim()).toBe("Ready");
          expect((await workspace.ok(["stack", "output", "virtualNode"])).stdout.trim()).toBe("liqo-a");
          const node = await adminConfig(b).makeApiClient(k8s.CoreV1Api).readNode({ name: "liqo-a" });
          expect(node.status?.capacity).toEqual({ cpu: "2", memory: "4Gi", pods: "20" });

          await expectStackLife(workspace, up, a, b);
        } finally {
          // Whatever a failed step left in the clusters goes with the stack.
          await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
          workspace.dispose();
        }
      },
      PEERING_TEST_BOUND_MS,
    );
  });
});
