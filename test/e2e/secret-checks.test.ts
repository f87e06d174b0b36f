/**
 * What the user got wrong, through the real `pulumi` CLI on the shared local clusters: a peering of
 * a cluster with itself, a malformed kubeconfig, a token pasted with its line's end. A failed check
 * names the input and prints no secret (the token, the kubeconfig's client key, in any form), the
 * stack stores none, and nothing changes on the clusters; a pasted token is trimmed and peers.
 */
import * as k8s from "@kubernetes/client-node";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clusterOf, type LabState } from "../../local-cluster/lab.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { projectTraces } from "../../harness/leaks.js";
import { configureForLab, failureSummary, PulumiWorkspace, type PulumiResult } from "../../harness/pulumi.js";

/** Each test's bound: previews and ups that must fail or pass, each with its own deadline. */
const TEST_BOUND_MS = 5 * 60_000;
/** The bound of this file's set-up and clean-up: the stack's first up, or its destroy. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS + 300_000;

const PROGRAM = join(__dirname, "programs", "secret-checks");

/** Every form in which a secret could show: as given, and each long line of it decoded from base64. */
function formsOf(secret: string): string[] {
  const decoded = Buffer.from(secret, "base64").toString("utf8");
  return [secret, ...decoded.split("\n").filter((line) => line.length >= 20 && /^[\x20-\x7e]+$/.test(line))];
}

/** Every file under `dir` that is not the program (state, backups, history, Pulumi home), as text. */
function filesUnder(dir: string, skip: string): { path: string; text: string }[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (path === skip) return [];
    const stat = lstatSync(path);
    if (stat.isDirectory()) return filesUnder(path, skip);
    return stat.isFile() ? [{ path, text: readFileSync(path, "latin1") }] : [];
  });
}

/** Asserts that none of `forms` is in what pulumi printed, nor in any file of the workspace but the program. */
function expectNoneOf(forms: readonly string[], workspace: PulumiWorkspace, ...results: PulumiResult[]): void {
  for (const result of results) {
    for (const form of forms) expect(`${result.stdout}\n${result.stderr}`.includes(form)).toBe(false);
  }
  for (const file of filesUnder(workspace.dir, workspace.programDir)) {
    expect([file.path, forms.filter((form) => file.text.includes(form))]).toEqual([file.path, []]);
  }
}

/** What the project holds on both clusters, and the stack's resources: what a failed check must leave as it was. */
async function snapshot(lab: LabState, workspace: PulumiWorkspace): Promise<unknown> {
  const state = JSON.parse((await workspace.ok(["stack", "export"])).stdout) as {
    deployment: { resources?: { urn: string }[] };
  };
  return {
    a: (await projectTraces(clusterOf(lab, "a").kubeconfig)).sort(),
    b: (await projectTraces(clusterOf(lab, "b").kubeconfig)).sort(),
    resources: (state.deployment.resources ?? []).map((r) => r.urn).sort(),
  };
}

/** Runs `pulumi preview` and `pulumi up`, each of which must fail; returns both. */
async function bothFail(workspace: PulumiWorkspace): Promise<PulumiResult[]> {
  const results = [await workspace.pulumi(["preview"]), await workspace.pulumi(["up", "--yes"])];
  for (const result of results)
    expect([result.exitCode === 0, result.exitCode === 0 ? failureSummary(result) : ""]).toEqual([false, ""]);
  return results;
}

describe("what a failed check prints, through the pulumi CLI", () => {
  let lab: LabState;
  let workspace: PulumiWorkspace;
  let scratch: string;

  beforeAll(async () => {
    lab = await sharedLab();
    scratch = mkdtempSync(join(tmpdir(), "pulumi-liqo-secret-checks-"));
    workspace = await PulumiWorkspace.create(PROGRAM);
    await configureForLab(workspace, lab);
    await workspace.ok(["up", "--yes", "--skip-preview"]);
  }, HOOK_BOUND_MS);

  afterAll(async () => {
    try {
      if (workspace) await workspace.ok(["destroy", "--yes", "--skip-preview"]);
    } finally {
      workspace?.dispose();
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    }
  }, HOOK_BOUND_MS);

  test(
    "GIVEN cluster b and its token WHEN b is peered with itself THEN preview and up fail naming provider.clusterId, the " +
      "token is printed and stored nowhere, and nothing changes",
    async () => {
      const token = (await workspace.ok(["stack", "output", "bPeeringToken", "--show-secrets"])).stdout.trim();
      expect(token).not.toBe("");
      const before = await snapshot(lab, workspace);
      await workspace.ok(["config", "set", "attempt", "self-peering"]);
      try {
        const results = await bothFail(workspace);
        for (const result of results)
          expect(result.stdout).toMatch(
            new RegExp(
              "error: pulumi-nodejs:dynamic/liqo:Peering resource 'b-to-b' has a problem: provider\\.clusterId: " +
                "a cluster cannot peer with itself \\(consumer and provider are both cluster [0-9a-f]+\\)\n",
            ),
          );
        // The token and its tail, which is secret (its head names the public token id).
        expectNoneOf([token, token.slice(-24)], workspace, ...results);
        expect(await snapshot(lab, workspace)).toEqual(before);
      } finally {
        await workspace.ok(["config", "rm", "attempt"]);
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN b's kubeconfig with a line added by hand after its client key WHEN a Cluster is given it THEN preview and up " +
      "fail naming kubeconfig and where, the key is printed and stored nowhere, and nothing changes",
    async () => {
      const b = clusterOf(lab, "b");
      const text = readFileSync(b.kubeconfig, "utf8");
      const keyData = adminConfig(b).getCurrentUser()!.keyData!;
      expect(text).toContain(keyData);
      const malformed = join(scratch, "malformed-kubeconfig");
      // The lab's kubeconfigs are JSON: the added line misses its comma.
      writeFileSync(malformed, text.replace(`"${keyData}"`, `"${keyData}"\n      oops: ${keyData.slice(0, 40)}`));
      expect(() => new k8s.KubeConfig().loadFromString(readFileSync(malformed, "utf8"))).toThrow();
      const before = await snapshot(lab, workspace);
      await workspace.ok(["config", "set", "attempt", "malformed-kubeconfig"]);
      await workspace.ok(["config", "set", "malformedKubeconfig", malformed]);
      try {
        const results = await bothFail(workspace);
        for (const result of results)
          expect(result.stdout).toMatch(
            new RegExp(
              "error: pulumi-nodejs:dynamic/liqo:Cluster resource 'c' has a problem: kubeconfig: not a usable kubeconfig: " +
                "it is not valid YAML at line \\d+, column \\d+ \\(missed comma between flow collection entries\\)\n",
            ),
          );
        expectNoneOf([...formsOf(keyData), keyData.slice(0, 40)], workspace, ...results);
        expect(await snapshot(lab, workspace)).toEqual(before);
      } finally {
        await workspace.ok(["config", "rm", "attempt"]);
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a's token pasted into config with its line's end WHEN b peers with a THEN the peering is Ready, and the token " +
      "is stored only as ciphertext",
    async () => {
      const token = (await workspace.ok(["stack", "output", "aPeeringToken", "--show-secrets"])).stdout.trim();
      await workspace.ok(["config", "set", "--secret", "pastedToken", `${token}\n`]);
      expect((await workspace.ok(["config", "get", "pastedToken"])).stdout).toBe(`${token}\n`);
      await workspace.ok(["config", "set", "attempt", "pasted-token"]);
      try {
        const up = await workspace.ok(["up", "--yes"]);
        const node = await adminConfig(clusterOf(lab, "b")).makeApiClient(k8s.CoreV1Api).readNode({ name: "liqo-a" });
        expect(node.status?.capacity).toEqual({ cpu: "1", memory: "1Gi", pods: "5" });
        await workspace.ok(["preview", "--expect-no-changes"]);
        expectNoneOf([token], workspace, up);
      } finally {
        await workspace.ok(["config", "rm", "attempt"]);
        await workspace.ok(["up", "--yes"]);
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN the stack destroyed THEN nothing of the project is left on either cluster",
    async () => {
      await workspace.ok(["destroy", "--yes", "--skip-preview"]);
      expect(await projectTraces(clusterOf(lab, "a").kubeconfig)).toEqual([]);
      expect(await projectTraces(clusterOf(lab, "b").kubeconfig)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
