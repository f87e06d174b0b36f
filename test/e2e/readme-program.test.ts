/**
 * The README's first program, as it is printed there (only its config given: the two kubeconfigs
 * and the agent image), through the real `pulumi` CLI on two local clusters whose Services get
 * load-balancer addresses (MetalLB, the local clusters' default): the default exposure, no server
 * address and no CIDRs typed. Both Clusters are reached where their load balancers put them, b's
 * gateway dials a's at a's load-balancer address, pods of b reach pods of a, and destroy leaves
 * nothing in either cluster.
 */
import * as k8s from "@kubernetes/client-node";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { API_GROUP, API_VERSION, SYSTEM_NAMESPACE, type TunnelEndpoint } from "../../core/api/index.js";
import { AGENT_NAME, GATEWAY_NAME } from "../../core/cluster/agent-components.js";
import { DEFAULT_AGENT_IMAGE } from "../../core/cluster/agent-image.js";
import { adminConfig } from "../../harness/install.js";
import { withLab } from "../../harness/labs.js";
import { PulumiWorkspace, setConfig } from "../../harness/pulumi.js";
import { clusterOf, type ClusterState } from "../../local-cluster/lab.js";
import { projectTraces, tunnelTraces } from "../support/leaks.js";
import { expectPodsTalk } from "../support/project-pods.js";

const REPO = join(__dirname, "..", "..");
/** A private lab of two clusters with their load balancers, the program's up and its destroy, on a loaded machine. */
const TEST_BOUND_MS = 25 * 60_000;

/** The README's first program: the TypeScript block under its "A first program" heading. */
function readmeProgram(): string {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## A first program"));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README.md: no ```ts block under "## A first program"');
  return block[1]!;
}

/** A program directory holding the README's program, with local-peering's package manifest. */
function programSource(): string {
  const dir = mkdtempSync(join(tmpdir(), "pulumi-liqo-readme-"));
  writeFileSync(join(dir, "package.json"), readFileSync(join(REPO, "examples", "local-peering", "package.json")));
  writeFileSync(join(dir, "Pulumi.yaml"), "name: readme-program\nruntime: nodejs\n");
  writeFileSync(join(dir, "index.ts"), readmeProgram());
  return dir;
}

/** The address `cluster`'s load balancer gave the agent's Service `name`. */
async function loadBalancerAddress(cluster: ClusterState, name: string): Promise<string | undefined> {
  const service = await adminConfig(cluster)
    .makeApiClient(k8s.CoreV1Api)
    .readNamespacedService({ name, namespace: SYSTEM_NAMESPACE });
  return service.status?.loadBalancer?.ingress?.[0]?.ip;
}

describe("the README's first program", () => {
  test(
    "GIVEN two local clusters with load balancers WHEN the README's program is run as printed THEN the default exposure, " +
      "tunnel address and CIDRs work out, pods talk across, and destroy leaves nothing",
    async () => {
      const source = programSource();
      try {
        await withLab([{ name: "a" }, { name: "b" }], { loadBalancer: "metallb" }, async (lab) => {
          const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
          const workspace = await PulumiWorkspace.create(source);
          try {
            await setConfig(workspace, [
              ["aKubeconfig", a.kubeconfig],
              ["bKubeconfig", b.kubeconfig],
              ["agentImage", DEFAULT_AGENT_IMAGE],
            ]);
            await workspace.ok(["up", "--yes"]);
            expect((await workspace.ok(["stack", "output", "virtualNode"])).stdout.trim()).toBe("liqo-a");

            // Both of a's endpoints are where a's load balancer put them, and b's gateway dials a's there.
            const [authAddress, gatewayAddress] = [
              await loadBalancerAddress(a, AGENT_NAME),
              await loadBalancerAddress(a, GATEWAY_NAME),
            ];
            expect(a.loadBalancerAddresses).toBeDefined();
            expect({ authAddress, gatewayAddress }).toEqual({
              authAddress: expect.stringMatching(/^172\.29\./),
              gatewayAddress: expect.stringMatching(/^172\.29\./),
            });
            const endpoints = (await adminConfig(b).makeApiClient(k8s.CustomObjectsApi).listNamespacedCustomObject({
              group: API_GROUP,
              version: API_VERSION,
              namespace: SYSTEM_NAMESPACE,
              plural: "tunnelendpoints",
            })) as { items: TunnelEndpoint[] };
            expect(endpoints.items.map((e) => e.spec.remote.endpoint)).toEqual([`${gatewayAddress}:51820`]);
            await expectPodsTalk(b, a);

            await workspace.ok(["destroy", "--yes"]);
            expect(await projectTraces(a.kubeconfig)).toEqual([]);
            expect(await projectTraces(b.kubeconfig)).toEqual([]);
            expect(await tunnelTraces(a, [])).toEqual([]);
            expect(await tunnelTraces(b, [])).toEqual([]);
          } finally {
            workspace.dispose();
          }
        });
      } finally {
        rmSync(source, { recursive: true, force: true });
      }
    },
    TEST_BOUND_MS,
  );
});
