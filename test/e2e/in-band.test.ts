/**
 * The in-band peering through the real `pulumi` CLI (examples/in-band), on the shared lab switched
 * to the `gateway-only` profile: only the gateways' UDP ports connect them, and from the host
 * only the API servers answer. Preview, up, no-change preview and refresh, a tunnel port change in
 * place, destroy; up's and destroy's steps, the tunnel's among them, on the Peering's own row.
 */
import * as k8s from "@kubernetes/client-node";
import { join } from "node:path";
import { Cidr } from "../../core/net/cidr.js";
import { addPodAddress, clusterOf } from "../../local-cluster/lab.js";
import { adminConfig } from "../../harness/install.js";
import { withSharedLabProfile } from "../../harness/labs.js";
import { projectTraces, tunnelTraces } from "../../harness/leaks.js";
import { pingReplies } from "../support/probes.js";
import { IN_BAND_CREATE_STEPS } from "../support/in-band-steps.js";
import { configureForLab, plannedSteps, PulumiWorkspace, stepsByRow } from "../../harness/pulumi.js";

/** Each test's bound: the shared lab, and the stack's preview, up, refresh, changes and destroy. */
const TEST_BOUND_MS = 12 * 60_000;

const PROGRAM = join(__dirname, "..", "..", "examples", "in-band");

describe("in-band peering through the pulumi CLI", () => {
  test(
    "GIVEN clusters that only their gateways connect WHEN preview, up, no-change preview and refresh, tunnel port change, " +
      "destroy THEN each does what it says and nothing is left",
    async () => {
      await withSharedLabProfile("gateway-only", async (lab) => {
        const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
        const workspace = await PulumiWorkspace.create(PROGRAM);
        try {
          // Its program types where a's gateway serves: under gateway-only, only the nodes' gateway ports are open.
          await configureForLab(workspace, lab, { gatewayAddress: true });
          expect((await plannedSteps(workspace)).sort()).toEqual(["create a", "create b", "create b-to-a"]);

          // An up right after the preview the test checked runs without previewing again (--skip-preview), here and below.
          const up = await workspace.ok(["up", "--yes", "--skip-preview"]);
          expect(up.stdout).toContain("[3/4] negotiation: waiting for an offer from provider a through the tunnel");
          // The peering's steps, its tunnel's counted within its first, on the peering's own row.
          expect(stepsByRow(up.stdout)).toEqual({
            "liqo:Peering::b-to-a": [...IN_BAND_CREATE_STEPS, ""],
          });
          expect((await workspace.ok(["stack", "output", "status"])).stdout.trim()).toBe("Ready");
          const node = await adminConfig(b).makeApiClient(k8s.CoreV1Api).readNode({ name: "liqo-a" });
          expect(node.status?.capacity).toEqual({ cpu: "1", memory: "2Gi", pods: "10" });
          const [aPod, bPod] = [Cidr.parse(a.podCidr).nth(70), Cidr.parse(b.podCidr).nth(70)];
          await addPodAddress(lab, "a", aPod);
          await addPodAddress(lab, "b", bPod);
          expect(await pingReplies(b.netns, bPod, aPod)).toMatch(/3 received/);

          await workspace.ok(["preview", "--expect-no-changes"]);
          await workspace.ok(["refresh", "--yes", "--expect-no-changes"]);
          const exported = (await workspace.ok(["stack", "export"])).stdout;
          expect(exported).not.toContain("client-key-data");
          expect(exported).not.toMatch(/privateKey/i);

          // A new gateway port moves the tunnel in place; the peering through it keeps working.
          await workspace.ok(["config", "set", "tunnelPort", "51824"]);
          expect(await plannedSteps(workspace)).toEqual(["update b-to-a"]);
          await workspace.ok(["up", "--yes", "--skip-preview"]);
          expect(await pingReplies(b.netns, bPod, aPod)).toMatch(/3 received/);
          await workspace.ok(["refresh", "--yes", "--expect-no-changes"]);

          const destroy = await workspace.ok(["destroy", "--yes"]);
          expect(stepsByRow(destroy.stdout)).toEqual({
            "liqo:Peering::b-to-a": [
              "[1/4] virtual node",
              "[2/4] authentication",
              "[3/4] virtual node",
              "[4/4] network fabric",
              "[4/4] (1/1) network fabric",
              "",
            ],
          });
        } finally {
          await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
          workspace.dispose();
        }
        expect(await projectTraces(a.kubeconfig)).toEqual([]);
        expect(await projectTraces(b.kubeconfig)).toEqual([]);
        for (const cluster of [a, b]) expect(await tunnelTraces(cluster)).toEqual([]);
      });
    },
    TEST_BOUND_MS,
  );
});
