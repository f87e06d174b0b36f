/**
 * An out-of-band peering across two stacks (examples/two-teams) through the `pulumi` CLI: the
 * provider team's stack exports the token outputs, the consumer team's stack reads them through a
 * StackReference. The token reaches the consumer's state only as ciphertext.
 */
import * as k8s from "@kubernetes/client-node";
import { join } from "node:path";
import { clusterOf, type ClusterState } from "../../local-cluster/lab.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab } from "../../harness/labs.js";
import { projectTraces } from "../../harness/leaks.js";
import { configureForCluster, PulumiWorkspace } from "../../harness/pulumi.js";

/** Each test's bound: two teams' stacks up and destroyed against one provider. */
const TEST_BOUND_MS = 10 * 60_000;

const EXAMPLE = join(__dirname, "..", "..", "examples", "two-teams");

async function configure(workspace: PulumiWorkspace, cluster: ClusterState): Promise<void> {
  await configureForCluster(workspace, cluster, { name: cluster.name });
}

describe("two teams, two stacks", () => {
  test(
    "GIVEN the provider's stack exporting its token WHEN the consumer's stack peers through a StackReference THEN the " +
      "virtual node appears, the token stays ciphertext, and both destroys leave nothing",
    async () => {
      const lab = await sharedLab();
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      const providerTeam = await PulumiWorkspace.create(join(EXAMPLE, "provider"), "prod");
      const consumerTeam = await PulumiWorkspace.create(join(EXAMPLE, "consumer"), "prod", providerTeam);
      try {
        await configure(providerTeam, a);
        await providerTeam.ok(["up", "--yes", "--skip-preview"]);
        const token = (await providerTeam.ok(["stack", "output", "peeringToken", "--show-secrets"])).stdout.trim();
        expect(token).toMatch(/^plt_/);

        await configure(consumerTeam, b);
        await consumerTeam.ok(["config", "set", "providerStack", "organization/two-teams-provider/prod"]);
        await consumerTeam.ok(["up", "--yes", "--skip-preview"]);
        expect((await consumerTeam.ok(["stack", "output", "virtualNode"])).stdout.trim()).toBe("liqo-a");
        const node = await adminConfig(b).makeApiClient(k8s.CoreV1Api).readNode({ name: "liqo-a" });
        expect(node.status?.capacity).toEqual({ cpu: "1", memory: "2Gi", pods: "10" });
        await consumerTeam.ok(["preview", "--expect-no-changes"]);

        const consumerState = (await consumerTeam.ok(["stack", "export"])).stdout;
        expect(consumerState).not.toContain(token);
        expect(consumerState).not.toContain("client-key-data");

        await consumerTeam.ok(["destroy", "--yes", "--skip-preview"]);
        await providerTeam.ok(["destroy", "--yes", "--skip-preview"]);
      } finally {
        await consumerTeam.pulumi(["destroy", "--yes", "--skip-preview"]);
        await providerTeam.pulumi(["destroy", "--yes", "--skip-preview"]);
        consumerTeam.dispose();
        providerTeam.dispose();
      }
      expect(await projectTraces(a.kubeconfig)).toEqual([]);
      expect(await projectTraces(b.kubeconfig)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
