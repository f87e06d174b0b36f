/**
 * The provider plugin pulumi-resource-liqo through the real `pulumi` engine: packed as the archive
 * a pluginDownloadURL serves (scripts/plugin.sh, from the build), installed with `pulumi plugin
 * install`, and driven by a TypeScript program that knows the resources only by their type tokens
 * (test/e2e/programs/plugin): customTimeouts against an API server and an auth service that do not
 * answer, and secrets kept out of what pulumi prints and stores. A peering's whole life through the
 * plugin (preview, up, a no-change preview and refresh, a resize, destroy) is the YAML example's
 * test (test/e2e/yaml-peering), which runs it once for both. `pulumi import` of a Cluster goes the same way: made, taken out of the
 * state, imported back by `<clusterId>@<kubeconfig file>` (a forged ID refused first), a preview with
 * no change, a destroy that leaves nothing.
 */
import * as k8s from "@kubernetes/client-node";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { adminConfig } from "../../harness/install.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { packPlugin, PACK_BOUND_MS, workspaceWithPlugin } from "../../harness/plugin.js";
import {
  configureForLab,
  failureSummary,
  PULUMI_COMMAND_TIMEOUT_MS,
  setConfig,
  type PulumiResult,
  type PulumiWorkspace,
} from "../../harness/pulumi.js";
import { clusterOf, type ClusterState, type LabState } from "../../local-cluster/lab.js";
import { poll } from "../../core/wait/poll.js";
import { firewallRule, type FirewallRule } from "../support/firewall.js";
import { expectDestroyedClean, expectSecretsHidden } from "../support/plugin-stack.js";

const PROGRAM = join(__dirname, "programs", "plugin");

/** A few pulumi commands on a resource that needs no cluster. */
const TIMEOUT_TEST_BOUND_MS = 3 * 60_000;
/** A Cluster's up, import and destroy on the shared lab, each command with its own deadline. */
const IMPORT_TEST_BOUND_MS = 10 * 60_000;
/** Two Peering creates against a silent provider (one outlasting the silence, one cut at 5 s), each command with its own deadline. */
const SILENT_PROVIDER_TEST_BOUND_MS = 10 * 60_000;
/**
 * How long a's auth service stays silent to a slow create, from its first try: longer than the
 * short timeout, well inside the long one, and inside the 15 s an out-of-band peering gives an auth
 * service out of reach before it gives up (AUTH_REACH_TIMEOUT_MS, core/peering/peering.ts).
 */
const SILENCE_MS = 8_000;

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

/** The URNs of the resources the stack holds (the stack itself left out). */
async function urnsOf(workspace: PulumiWorkspace): Promise<string[]> {
  const exported = JSON.parse((await workspace.ok(["stack", "export"])).stdout) as {
    deployment: { resources?: { urn: string; type: string }[] };
  };
  return (exported.deployment.resources ?? []).filter((r) => r.type.startsWith("liqo:")).map((r) => r.urn);
}

/**
 * The rule in a's namespace that drops what the host, where pulumi and the plugin run, sends to a's
 * auth service: the plugin's connections get no answer, not even a refusal, while the address, the
 * name and TLS stay the real ones. Matched in `raw`, before the NodePort's DNAT; b's agent, which
 * renews its identity there from another address, is not cut. Tagged, so the test finds only its own.
 */
function silentAuthService(lab: LabState, a: ClusterState): FirewallRule {
  const { hostname, port } = new URL(a.authUrl);
  return firewallRule(
    a.netns,
    [
      "PREROUTING",
      "-i",
      "eth0",
      "-s",
      lab.hostAddress,
      "-d",
      hostname,
      "-p",
      "tcp",
      "--dport",
      port,
      "-m",
      "comment",
      "--comment",
      `pulumi-liqo-test-silent-auth-${process.pid}`,
      "-j",
      "DROP",
    ],
    "raw",
  );
}

/** Resolves once `rule` has dropped a packet (the create's first try at a's auth service); fails if the run ended first. */
function firstDrop(rule: FirewallRule, ended: () => boolean, a: ClusterState): Promise<number> {
  return poll(
    { step: "test", object: "a packet of the plugin to a's auth service, dropped", endpoint: a.authUrl },
    { timeoutMs: PULUMI_COMMAND_TIMEOUT_MS, intervalMs: 500 },
    async () => {
      if (ended()) return { failed: true, reason: "pulumi up ended before the plugin tried a's auth service" };
      const dropped = await rule.packets();
      return dropped > 0 ? { done: true, value: dropped } : { done: false, state: "nothing dropped yet" };
    },
  );
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
      const workspace = await workspaceWithPlugin(PROGRAM, archive);
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
        // The row's own clock: the create ended seconds after its 5 s, far from the default deadline of
        // 300 s (a loaded machine adds seconds: 11 s seen in another create cut at 5 s, 2026-11-28).
        const seconds = Number(/liqo:index:Cluster a creating \((\d+)s\) error/.exec(up.stdout)?.[1]);
        expect(seconds).toBeGreaterThanOrEqual(5);
        expect(seconds).toBeLessThanOrEqual(30);
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
      "GIVEN a's auth service silent to the plugin WHEN up creates Peering b-to-a with customTimeouts create 3m and the " +
        "silence ends after 8 s THEN the create outlasts it and peers; WHEN up creates it again with create 5s THEN it " +
        "fails in about 5 s naming the wait it was cut in; no secret is printed, and destroy leaves nothing",
      async () => {
        const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
        const rule = silentAuthService(lab, a);
        const workspace = await workspaceWithPlugin(PROGRAM, archive);
        let running: Promise<PulumiResult> | undefined;
        try {
          await configureForLab(workspace, lab);
          await setConfig(workspace, [["peeringCreateTimeout", "3m"]]);

          // A slow provider: silent from the create's first try for SILENCE_MS, then answering.
          await rule.insert();
          let ended = false;
          running = workspace.pulumi(["up", "--yes", "--skip-preview"]).finally(() => (ended = true));
          await firstDrop(rule, () => ended, a);
          await delay(SILENCE_MS);
          const droppedInSilence = await rule.packets();
          await rule.remove();
          const slow = await running;
          running = undefined;
          expect([slow.exitCode, slow.exitCode === 0 ? "" : failureSummary(slow)]).toEqual([0, ""]);
          // The plugin tried again while a was silent: the connection's own retries, or another attempt.
          expect(droppedInSilence).toBeGreaterThan(1);
          expect((await workspace.ok(["stack", "output", "authUrl", "--show-secrets"])).stdout.trim()).toBe(a.authUrl);
          // The create's own clock, on its row: it lasted past the silence, which the 5 s timeout would have cut.
          const createdIn = Number(/liqo:index:Peering b-to-a created \((\d+)s\)/.exec(slow.stdout)?.[1]);
          expect(createdIn).toBeGreaterThanOrEqual(SILENCE_MS / 1000);
          expect((await workspace.ok(["stack", "output", "peeringStatus"])).stdout.trim()).toBe("Ready");
          const node = await adminConfig(b).makeApiClient(k8s.CoreV1Api).readNode({ name: "liqo-a" });
          expect(node.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
          await expectSecretsHidden(workspace, slow, b);

          // The Peering alone goes, so that the next up creates it again, now with 5 s.
          const peering = (await urnsOf(workspace)).filter((urn) => urn.endsWith("::liqo:index:Peering::b-to-a"));
          expect(peering).toHaveLength(1);
          await workspace.ok(["destroy", "--target", peering[0]!, "--yes", "--skip-preview"]);
          await setConfig(workspace, [["peeringCreateTimeout", "5s"]]);
          await rule.insert();
          const cut = await workspace.pulumi(["up", "--yes", "--skip-preview"]);
          expect(cut.exitCode).not.toBe(0);
          expect(await rule.packets()).toBeGreaterThan(0);
          // The step the deadline cut says so itself: the wait, the endpoint, the time it had and what it last saw.
          // Should it overrun the deadline by more than the guard's grace (plugin/timeouts.ts), the guard answers
          // instead, naming the customTimeouts.
          const { hostname, port } = new URL(a.authUrl);
          const escaped = (text: string) => text.replace(/[.()\\[\]]/g, "\\$&");
          const stepCut =
            `authentication: timed out after (?:4\\.\\d|5) s waiting for auth service serving the cluster's certificate at ` +
            escaped(
              `${a.authUrl} (host ${hostname}, port ${port}); last state: timed out (no answer to the connection `,
            ) +
            escaped(`attempt: the host is down or a firewall drops the packets; ETIMEDOUT)`);
          const guardCut = escaped(`Peering "b-to-a": create: did not finish within its customTimeouts of 5 s`);
          expect(cut.stdout).toMatch(new RegExp(`${stepCut}|${guardCut}`));
          const seconds = Number(/liqo:index:Peering b-to-a creating \((\d+)s\) error/.exec(cut.stdout)?.[1]);
          // Cut at 5 s, not at the 3 minutes of the create before: the engine's own clock, on a loaded
          // machine, adds seconds (11 s seen at a load average of 27 on 2026-11-28).
          expect(seconds).toBeGreaterThanOrEqual(5);
          expect(seconds).toBeLessThanOrEqual(30);
          await expectSecretsHidden(workspace, cut, b);

          await rule.remove();
          await expectDestroyedClean(workspace, [a, b]);
        } finally {
          await rule.remove();
          // An up still running when a step failed ends before the destroy, which would find the stack locked.
          await running;
          await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
          workspace.dispose();
        }
        expect(await rule.present()).toBe(false);
      },
      SILENT_PROVIDER_TEST_BOUND_MS,
    );

    test(
      "GIVEN Cluster a made by the plugin and deleted from the state WHEN imported by a forged ID THEN it is refused and " +
        "nothing is recorded; WHEN imported by its own ID THEN the next preview shows no change, kubeconfig is named " +
        "as the input to give, no secret is printed, and destroy leaves nothing",
      async () => {
        const a = clusterOf(lab, "a");
        const workspace = await workspaceWithPlugin(PROGRAM, archive);
        try {
          await configureForLab(workspace, lab);
          await workspace.ok(["config", "set", "mode", "cluster"]);
          await workspace.ok(["up", "--yes", "--skip-preview"]);
          const clusterId = (await workspace.ok(["stack", "output", "clusterId"])).stdout.trim();
          expect(clusterId).toMatch(/^[0-9a-f]{16}$/);
          const [urn] = await urnsOf(workspace);
          expect(urn).toMatch(/::liqo:index:Cluster::a$/);
          await workspace.ok(["state", "delete", urn!, "--yes"]);

          // A forged ID: another cluster ID with a's kubeconfig. Refused, naming the ID, the step and the endpoint.
          const forgedId = `${clusterId === "0123456789abcdef" ? "fedcba9876543210" : "0123456789abcdef"}@${a.kubeconfig}`;
          const forged = await workspace.pulumi(["import", "liqo:index:Cluster", "a", forgedId, "--yes"]);
          expect(forged.exitCode).not.toBe(0);
          expect(forged.stdout + forged.stderr).toContain(
            `Cluster import of ID "${forgedId}": reading the cluster's identity at ${a.apiServerUrl}: ` +
              `the kubeconfig reaches cluster ${clusterId}, not ${forgedId.split("@")[0]}: refused`,
          );
          expect(await urnsOf(workspace)).toEqual([]);

          // No program snippet: the Node.js language host built here answers GenerateProgram "not implemented".
          const imported = await workspace.ok([
            "import",
            "liqo:index:Cluster",
            "a",
            `${clusterId}@${a.kubeconfig}`,
            "--yes",
            "--generate-code=false",
            // Imports are protected by default: destroy would refuse.
            "--protect=false",
          ]);
          expect(imported.stdout + imported.stderr).toMatch(
            /give Cluster "a" these inputs in the program, which the import cannot recover: kubeconfig \(a secret/,
          );
          expect(await urnsOf(workspace)).toEqual([urn]);
          const kubeconfig = readFileSync(a.kubeconfig, "utf8");
          const exported = (await workspace.ok(["stack", "export"])).stdout;
          for (const secret of [kubeconfig, "client-key-data", "PRIVATE KEY"]) {
            expect(imported.stdout + imported.stderr).not.toContain(secret);
            expect(exported).not.toContain(secret);
          }

          await workspace.ok(["preview", "--expect-no-changes"]);
          await expectDestroyedClean(workspace, [a]);
        } finally {
          await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
          workspace.dispose();
        }
      },
      IMPORT_TEST_BOUND_MS,
    );
  });
});
