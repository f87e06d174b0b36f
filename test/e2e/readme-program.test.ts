/**
 * The README's first program, as it is printed there (only its config given: the two kubeconfigs
 * and the agent image), through the real `pulumi` CLI on two local clusters as hardened clusters
 * are: their Services get load-balancer addresses (MetalLB, the local clusters' default), their
 * API servers enforce Pod Security `baseline` in every namespace that sets no level, and a's
 * kube-proxy runs in `nftables` mode (b's in `iptables`), so a's gateway is reached through
 * nftables' rules for its load-balancer address. The default
 * exposure, no server address and no CIDRs typed. Both Clusters are reached where their load
 * balancers put them, b's gateway dials a's at a's load-balancer address, pods of b reach pods of
 * a; a node added to b after `up` (as a node pool scales out) takes a /24 no node had when b's
 * ranges were read, and its pods reach a's too; only the project's own namespace asks `privileged`
 * (the tenant's namespace runs at the cluster's level), and destroy leaves nothing in either cluster.
 */
import * as k8s from "@kubernetes/client-node";
import { execa } from "execa";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { API_GROUP, API_VERSION, SYSTEM_NAMESPACE, type TunnelEndpoint } from "../../core/api/index.js";
import { tenantNamespace } from "../../core/api/names.js";
import { AGENT_NAME, GATEWAY_NAME } from "../../core/cluster/agent-components.js";
import { DEFAULT_AGENT_IMAGE } from "../../core/cluster/agent-image.js";
import { poll } from "../../core/wait/poll.js";
import { adminConfig } from "../../harness/install.js";
import { withLab } from "../../harness/labs.js";
import { PulumiWorkspace, setConfig } from "../../harness/pulumi.js";
import { clusterOf, readLab, type ClusterState } from "../../local-cluster/lab.js";
import { addNode } from "../../local-cluster/add-node.js";
import { podName, podtoolFrom, runPodtool } from "../../local-cluster/pods.js";
import { METALLB_NAMESPACE } from "../../local-cluster/load-balancer.js";
import { imageReference } from "../../local-cluster/node-images.js";
import { projectTraces, tunnelTraces } from "../../harness/leaks.js";
import { expectPodsTalk } from "../support/project-pods.js";

const REPO = join(__dirname, "..", "..");
/** How every tenant namespace's name begins. */
const TENANT_NAMESPACE_PREFIX = tenantNamespace("");
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
    "GIVEN two local clusters with load balancers, enforcing Pod Security baseline WHEN the README's program is run as " +
      "printed THEN the default exposure, tunnel address and CIDRs work out, pods talk across, also from a node added " +
      "after up, only the project's namespace is privileged, and destroy leaves nothing",
    async () => {
      const source = programSource();
      try {
        const hardened = { podSecurity: "baseline" } as const;
        await withLab(
          [
            { name: "a", ...hardened, kubeProxyMode: "nftables" },
            { name: "b", ...hardened },
          ],
          { loadBalancer: "metallb" },
          async (lab) => {
            const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
            // a's Services are nftables' (its node's table kube-proxy), b's iptables' (no such table).
            const kubeProxyTable = (cluster: ClusterState) =>
              execa("ip", ["netns", "exec", cluster.nodes[0]!.netns, "nft", "list", "table", "ip", "kube-proxy"], {
                reject: false,
              });
            await poll(
              { step: "test", object: "a's kube-proxy nftables table", endpoint: a.apiServerUrl },
              { timeoutMs: 60_000, intervalMs: 500 },
              async () =>
                (await kubeProxyTable(a)).exitCode === 0
                  ? { done: true, value: undefined }
                  : { done: false, state: "no table ip kube-proxy yet" },
            );
            expect((await kubeProxyTable(b)).exitCode).not.toBe(0);
            // The level is enforced: a pod on the node's network is refused where no namespace says otherwise.
            await expect(
              adminConfig(a)
                .makeApiClient(k8s.CoreV1Api)
                .createNamespacedPod({
                  namespace: "default",
                  body: {
                    metadata: { name: "host-network" },
                    spec: { hostNetwork: true, containers: [{ name: "c", image: imageReference("podtool") }] },
                  },
                }),
            ).rejects.toThrow(/violates PodSecurity \\*"baseline:latest\\*": host namespaces \(hostNetwork=true\)/);
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

              // A node added to b after `up`: its /24 is new, and the range b announced holds it (read from
              // what b declares, not from the nodes it had); the route agent comes to it by itself.
              const added = await addNode(lab.name, dirname(lab.dir), "b", () => undefined);
              const grown = clusterOf(readLab(lab.name, dirname(lab.dir))!, "b");
              const target = (await runPodtool(a, 1)).status!.podIP!;
              const pod = await runPodtool(grown, added.index);
              expect(pod.spec?.nodeName).toBe(added.name);
              expect(await podtoolFrom(grown, added.index, "ping", target, 90_000)).toMatch(/^reply from /);
              expect(await podtoolFrom(grown, added.index, "tcp", `${target}:8080`)).toContain(podName(a, 1));

              // Only the project's namespace asks for more than the cluster's level; b's tenant namespace on a sets none.
              const levels = Object.fromEntries(
                (await adminConfig(a).makeApiClient(k8s.CoreV1Api).listNamespace()).items
                  .map((ns) => [
                    ns.metadata!.name!,
                    ns.metadata?.labels?.["pod-security.kubernetes.io/enforce"] ?? "none",
                  ])
                  .filter(([name, level]) => level !== "none" || name!.startsWith(TENANT_NAMESPACE_PREFIX)),
              );
              expect(Object.keys(levels).filter((name) => name.startsWith(TENANT_NAMESPACE_PREFIX))).toHaveLength(1);
              expect(Object.entries(levels).filter(([, level]) => level !== "none")).toEqual([
                [METALLB_NAMESPACE, "privileged"],
                [SYSTEM_NAMESPACE, "privileged"],
              ]);

              await workspace.ok(["destroy", "--yes"]);
              expect(await projectTraces(a.kubeconfig)).toEqual([]);
              expect(await projectTraces(b.kubeconfig)).toEqual([]);
              expect(await tunnelTraces(a, [])).toEqual([]);
              expect(await tunnelTraces(b, [])).toEqual([]);
            } finally {
              workspace.dispose();
            }
          },
        );
      } finally {
        rmSync(source, { recursive: true, force: true });
      }
    },
    TEST_BOUND_MS,
  );
});
