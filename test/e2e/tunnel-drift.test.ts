/**
 * Health that is not real is not reported, through the real `pulumi` CLI on the shared local
 * clusters (provider `a`, consumer `b`, examples/local-peering): with the consumer's side of the
 * tunnel removed behind Pulumi's back, `pulumi refresh` reports the tunnel as it is (naming the
 * missing side, never `Connected`), `pulumi up` makes it again and traffic crosses it.
 */
import * as k8s from "@kubernetes/client-node";
import { join } from "node:path";
import { clusterOf, type LabState } from "../../local-cluster/lab.js";
import { API_GROUP, API_VERSION, SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { tunnelEndpointName } from "../../core/network-fabric/tunnel-plan.js";
import { poll } from "../../core/wait/poll.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { projectTraces, tunnelTraces } from "../../harness/leaks.js";
import { expectPodsTalk } from "../support/project-pods.js";
import { configureForLab, outputsOf, plannedSteps, PulumiWorkspace } from "../../harness/pulumi.js";

/** Each test's bound: pulumi up, drift made by hand, refresh and up again. */
const TEST_BOUND_MS = 8 * 60_000;
/** The bound of this file's set-up and clean-up: the shared lab. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS;

const PROGRAM = join(__dirname, "..", "..", "examples", "local-peering");
/** How long the consumer's gateway may take to take its side down after its endpoint is deleted: a pass or two. */
const GATEWAY_PASS_MS = 30_000;

describe("a tunnel whose consumer side was removed", () => {
  let lab: LabState;
  beforeAll(async () => {
    lab = await sharedLab();
  }, HOOK_BOUND_MS);

  test(
    "GIVEN a connected tunnel WHEN the consumer's TunnelEndpoint is deleted behind Pulumi's back THEN refresh reports the " +
      "missing side instead of Connected, and up makes it again with traffic flowing",
    async () => {
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      const workspace = await PulumiWorkspace.create(PROGRAM);
      const ifnames: string[] = [];
      try {
        await configureForLab(workspace, lab);
        await workspace.ok(["up", "--yes", "--skip-preview"]);
        expect((await workspace.ok(["stack", "output", "tunnelStatus"])).stdout.trim()).toBe("Connected");
        const providerId = String((await outputsOf(workspace, "Peering", "b-to-a"))["providerClusterId"]);

        // The consumer's side goes: its endpoint deleted, its gateway takes the interface down.
        const objects = adminConfig(b).makeApiClient(k8s.CustomObjectsApi);
        const ref = {
          group: API_GROUP,
          version: API_VERSION,
          namespace: SYSTEM_NAMESPACE,
          plural: "tunnelendpoints",
          name: tunnelEndpointName(providerId),
        };
        const before = (await objects.getNamespacedCustomObject(ref)) as { status?: { interfaceName?: string } };
        ifnames.push(before.status!.interfaceName!);
        await objects.deleteNamespacedCustomObject(ref);
        await poll(
          { step: "test", object: `${ref.namespace}/${ref.name} taken down by b's gateway`, endpoint: b.apiServerUrl },
          { timeoutMs: GATEWAY_PASS_MS, intervalMs: 250 },
          async () =>
            (await objects.getNamespacedCustomObject(ref).then(
              () => true,
              () => false,
            ))
              ? { done: false, state: "still there" }
              : { done: true, value: undefined },
        );

        // refresh says what is missing; the state no longer holds Connected.
        const refresh = await workspace.pulumi(["refresh", "--yes", "--expect-no-changes"]);
        expect(refresh.exitCode).not.toBe(0);
        const status = String((await outputsOf(workspace, "Tunnel", "b-to-a-tunnel"))["status"]);
        expect(status).toMatch(
          new RegExp(
            `^consumer b: its TunnelEndpoint ${SYSTEM_NAMESPACE}/${ref.name} is gone \\(that side of the tunnel was removed\\)`,
          ),
        );
        expect(status).not.toMatch(/(^|; )provider a: .*Connected$/);

        // up repairs it in place (the status's drift rule), within the program's deadline, and traffic flows.
        expect(await plannedSteps(workspace)).toEqual(["update b-to-a-tunnel"]);
        const started = Date.now();
        // An up right after the preview the test checked runs without previewing again (--skip-preview), here and below.
        await workspace.ok(["up", "--yes", "--skip-preview"]);
        expect(Date.now() - started).toBeLessThan(120_000);
        expect((await workspace.ok(["stack", "output", "tunnelStatus"])).stdout.trim()).toBe("Connected");
        const after = (await objects.getNamespacedCustomObject(ref)) as { status?: { interfaceName?: string } };
        ifnames.push(after.status!.interfaceName!);
        await expectPodsTalk(b, a);
        await workspace.ok(["refresh", "--yes", "--expect-no-changes"]);
      } finally {
        await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
        workspace.dispose();
      }
      expect(await projectTraces(a.kubeconfig)).toEqual([]);
      expect(await projectTraces(b.kubeconfig)).toEqual([]);
      for (const cluster of lab.clusters) expect(await tunnelTraces(cluster, ifnames)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
