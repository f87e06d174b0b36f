/**
 * The mesh example through the real `pulumi` CLI: three local clusters of their own, all-to-all
 * from one declaration (6 peerings, 3 tunnels). Each cluster gets a Ready virtual node for each
 * other cluster; every pair's pods talk through its tunnel; a no-change preview proposes nothing;
 * destroy leaves nothing.
 */
import * as k8s from "@kubernetes/client-node";
import { join } from "node:path";
import { Cidr } from "../../core/net/cidr.js";
import { VIRTUAL_NODE_LABEL } from "../../core/virtual-node/node.js";
import { addPodAddress } from "../../local-cluster/lab.js";
import { adminConfig } from "../../harness/install.js";
import { withLab } from "../../harness/labs.js";
import { projectTraces, tunnelTraces } from "../../harness/leaks.js";
import { pingReplies } from "../support/probes.js";
import { configureMeshForLab, plannedSteps, PulumiWorkspace } from "../../harness/pulumi.js";

/** Each test's bound: a private lab of three clusters, and the mesh's up, traffic and destroy. */
const TEST_BOUND_MS = 12 * 60_000;

const PROGRAM = join(__dirname, "..", "..", "examples", "mesh");

async function readyVirtualNodes(kc: k8s.KubeConfig): Promise<string[]> {
  const nodes = await kc.makeApiClient(k8s.CoreV1Api).listNode({ labelSelector: `${VIRTUAL_NODE_LABEL}=true` });
  return nodes.items
    .filter((n) => n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
    .map((n) => n.metadata!.name!)
    .sort();
}

describe("a mesh through the pulumi CLI", () => {
  test(
    "GIVEN three clusters WHEN the mesh is declared all-to-all and brought up THEN every cluster has a Ready node per " +
      "peer, every pair talks through its tunnel, and destroy leaves nothing",
    async () => {
      await withLab([{ name: "a" }, { name: "b" }, { name: "c" }], {}, async (lab) => {
        const workspace = await PulumiWorkspace.create(PROGRAM);
        try {
          await configureMeshForLab(workspace, lab);
          const planned = await plannedSteps(workspace);
          // 3 Clusters, a token and a peering per ordered pair (a token serves one consumer), a tunnel per pair.
          expect(planned.filter((s) => s.startsWith("create ")).length).toBe(3 + 6 + 6 + 3);
          await workspace.ok(["up", "--yes", "--skip-preview"]);

          for (const cluster of lab.clusters) {
            const others = lab.clusters.filter((c) => c !== cluster).map((c) => `liqo-${c.name}`);
            expect(await readyVirtualNodes(adminConfig(cluster))).toEqual(others.sort());
          }
          const pods = new Map(lab.clusters.map((c, i) => [c.name, Cidr.parse(c.podCidr).nth(80 + i)]));
          for (const cluster of lab.clusters) await addPodAddress(lab, cluster.name, pods.get(cluster.name)!);
          for (const [from, to] of [
            ["a", "b"],
            ["a", "c"],
            ["b", "c"],
            ["c", "a"],
          ] as const) {
            const source = lab.clusters.find((c) => c.name === from)!;
            expect([from, to, await pingReplies(source.netns, pods.get(from)!, pods.get(to)!)]).toEqual([
              from,
              to,
              expect.stringMatching(/3 received/),
            ]);
          }
          await workspace.ok(["preview", "--expect-no-changes"]);
          await workspace.ok(["destroy", "--yes", "--skip-preview"]);
        } finally {
          await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
          workspace.dispose();
        }
        for (const cluster of lab.clusters) {
          expect(await projectTraces(cluster.kubeconfig)).toEqual([]);
          expect(await tunnelTraces(cluster)).toEqual([]);
        }
      });
    },
    TEST_BOUND_MS,
  );
});
