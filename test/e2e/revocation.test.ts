/**
 * Through the real `pulumi` CLI, on the shared local clusters (provider `a`, consumer `b`,
 * examples/local-peering): a peering whose identity was revoked behind Pulumi's back shows it and
 * is made again by `pulumi up`; a create that failed half-way is finished by the next `pulumi up`,
 * which previews it as an update, not a replacement.
 */
import { join } from "node:path";
import { HEARTBEAT_INTERVAL_MS } from "../../agent/heartbeat.js";
import { clusterOf, setProfile, type LabState } from "../../local-cluster/lab.js";
import { IDENTITY_REVOKED, IDENTITY_REVOKED_REASON } from "../../core/authentication/revoked.js";
import { PEERING_DIFF } from "../../core/resources/peering.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { projectTraces } from "../../harness/leaks.js";
import { configureForLab, outputsOf, previewOf, PulumiWorkspace, stepsByRow } from "../../harness/pulumi.js";
import { revokeHeldIdentity, waitForReadyStatus } from "../support/revoke.js";

/** Each test's bound: pulumi commands around a revoked identity or a half-made peering, each with its own deadline. */
const TEST_BOUND_MS = 10 * 60_000;
/** The bound of this file's set-up and clean-up: the shared lab. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS;

const PROGRAM = join(__dirname, "..", "..", "examples", "local-peering");
/** One heartbeat: the pass that follows the revocation starts within an interval; give it a few seconds to run on a loaded machine. */
const ONE_HEARTBEAT_MS = HEARTBEAT_INTERVAL_MS + 5_000;
/** A stack trace line, as Node prints one. */
const TRACE_LINE = /^\s+at /m;

describe("revoked and half-made peerings through the pulumi CLI", () => {
  let lab: LabState;
  beforeAll(async () => {
    lab = await sharedLab();
  }, HOOK_BOUND_MS);

  test(
    "GIVEN a peering with its tunnel WHEN b's identity is revoked at a's auth service THEN the node goes NotReady within " +
      "one heartbeat, refresh reports identity revoked without a stack trace, and up peers again",
    async () => {
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      const workspace = await PulumiWorkspace.create(PROGRAM);
      try {
        await configureForLab(workspace, lab);
        await workspace.ok(["up", "--yes", "--skip-preview"]);
        const token = await outputsOf(workspace, "PeeringToken", "a-token");
        const peering = await outputsOf(workspace, "Peering", "b-to-a");

        // Anyone holding b's identity may give it up at a's auth service: b's Peering is not told.
        await revokeHeldIdentity(adminConfig(b), String(peering["providerClusterId"]), {
          authUrl: String(token["authUrl"]),
          authCaCert: String(token["authCaCert"]),
        });
        const condition = await waitForReadyStatus(adminConfig(b), "liqo-a", "False", ONE_HEARTBEAT_MS);
        expect([condition.reason, condition.message]).toEqual([
          IDENTITY_REVOKED_REASON,
          expect.stringMatching(new RegExp(`^${IDENTITY_REVOKED}: provider a at `)),
        ]);

        const refresh = await workspace.pulumi(["refresh", "--yes", "--diff"]);
        expect(refresh.exitCode).toBe(0);
        expect(refresh.stdout).toContain(IDENTITY_REVOKED);
        expect(refresh.stdout + refresh.stderr).not.toMatch(TRACE_LINE);
        expect(String((await outputsOf(workspace, "Peering", "b-to-a"))["status"])).toMatch(
          new RegExp(`^${IDENTITY_REVOKED}: provider a `),
        );
        expect(String((await outputsOf(workspace, "Tunnel", "b-to-a-tunnel"))["status"])).toMatch(
          new RegExp(`^${IDENTITY_REVOKED}: provider a `),
        );

        // up runs the peering's steps again with the same token, then the tunnel's.
        expect((await previewOf(workspace)).steps.sort()).toEqual(["update b-to-a", "update b-to-a-tunnel"]);
        // An up right after the preview the test checked runs without previewing again (--skip-preview), here and below.
        const up = await workspace.ok(["up", "--yes", "--skip-preview"]);
        expect(up.stdout).toContain(`[1/3] authentication: asking ${String(token["authUrl"])} for an identity`);
        expect((await waitForReadyStatus(adminConfig(b), "liqo-a", "True", ONE_HEARTBEAT_MS)).reason).toBe(
          "PeeringActive",
        );
        expect((await workspace.ok(["stack", "output", "tunnelStatus"])).stdout.trim()).toBe("Connected");
        await workspace.ok(["refresh", "--yes", "--expect-no-changes"]);
      } finally {
        await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
        workspace.dispose();
      }
      expect(await projectTraces(a.kubeconfig)).toEqual([]);
      expect(await projectTraces(b.kubeconfig)).toEqual([]);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a pulumi up whose peering failed half-way (auth service out of reach) WHEN previewed again THEN the peering is " +
      "an update that finishes the create, not a replacement, and up finishes it",
    async () => {
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      const workspace = await PulumiWorkspace.create(PROGRAM);
      try {
        await configureForLab(workspace, lab);
        // gateway-only: from where pulumi runs, only the API servers answer; a's auth service does not.
        await setProfile(lab, "gateway-only");
        const failed = await workspace.pulumi(["up", "--yes"]);
        expect(failed.exitCode).not.toBe(0);
        expect(failed.stdout).toContain("waiting for auth service");
        // The step it failed at was the peering's status, cleared before the error took its row.
        expect(stepsByRow(failed.stdout)).toEqual({
          // Each Cluster's row shows its waits on the load balancer's addresses and on its agent serving at them.
          "liqo:Cluster::a": ["[1/2] cluster", "[2/2] cluster", ""],
          "liqo:Cluster::b": ["[1/2] cluster", "[2/2] cluster", ""],
          "liqo:Peering::b-to-a": ["[1/3] authentication", ""],
        });
        const incomplete = await outputsOf(workspace, "Peering", "b-to-a");
        expect([incomplete["status"], incomplete["virtualNodeName"]]).toEqual(["incomplete", undefined]);

        await setProfile(lab, "open");
        const retry = await previewOf(workspace);
        expect(retry.steps.sort()).toEqual(["create b-to-a-tunnel", "update b-to-a"]);
        expect(retry.explanations).toEqual([
          {
            urn: expect.stringMatching(/::pulumi-nodejs:dynamic\/liqo:Peering::b-to-a$/),
            message: `Peering "b-to-a": status changes → updates in place: ${PEERING_DIFF.status.reason}`,
          },
        ]);
        expect(retry.output).not.toContain("virtualNodeName changes");

        await workspace.ok(["up", "--yes", "--skip-preview"]);
        expect((await waitForReadyStatus(adminConfig(b), "liqo-a", "True", ONE_HEARTBEAT_MS)).reason).toBe(
          "PeeringActive",
        );
        expect((await workspace.ok(["stack", "output", "tunnelStatus"])).stdout.trim()).toBe("Connected");
        await workspace.ok(["preview", "--expect-no-changes"]);
      } finally {
        await setProfile(lab, "open");
        await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
        workspace.dispose();
      }
      expect(await projectTraces(a.kubeconfig)).toEqual([]);
      expect(await projectTraces(b.kubeconfig)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
