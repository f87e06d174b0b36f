/**
 * `pulumi import` of what the TypeScript example made, into a YAML program through the provider
 * plugin, on the shared local clusters. examples/local-peering's stack (the SDK's dynamic
 * resources) peers b with a, tunnels and offloads a namespace; a YAML stack
 * (test/e2e/programs/import) imports its two Clusters, its Peering, its Tunnel and its
 * NamespaceOffloading by the IDs the README documents, a forged ID refused first; its next preview
 * shows no change; a resize from the YAML stack updates the peering in place and makes the pair's
 * claim the YAML Peering's. The YAML stack then lets go of them without deleting anything (stack
 * rm), and the TypeScript stack's destroy leaves nothing.
 */
import * as k8s from "@kubernetes/client-node";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adminConfig } from "../../harness/install.js";
import { workspaceWithPlugin } from "../../harness/plugin.js";
import { configureForLab, PulumiWorkspace } from "../../harness/pulumi.js";
import { clusterOf, type ClusterState } from "../../local-cluster/lab.js";
import { CLUSTER_IDENTITY_CONFIGMAP, SYSTEM_NAMESPACE } from "../../core/api/names.js";
import { peeringClaimName } from "../../core/peering/claim.js";
import { projectTraces } from "../../harness/leaks.js";
import { pluginOnSharedLab } from "../support/plugin-stack.js";

const TYPESCRIPT_EXAMPLE = join(__dirname, "..", "..", "examples", "local-peering");
const YAML_PROGRAM = join(__dirname, "programs", "import");
/** Some twelve pulumi commands of two stacks on the shared lab, each with its own deadline. */
const TEST_BOUND_MS = 10 * 60_000;
/** The namespace of b the TypeScript example offloads. */
const OFFLOADED = "shop";

const core = (cluster: ClusterState): k8s.CoreV1Api => adminConfig(cluster).makeApiClient(k8s.CoreV1Api);

/** The cluster ID the install of `cluster` recorded. */
async function clusterIdOf(cluster: ClusterState): Promise<string> {
  const identity = await core(cluster).readNamespacedConfigMap({
    name: CLUSTER_IDENTITY_CONFIGMAP,
    namespace: SYSTEM_NAMESPACE,
  });
  return identity.data!["clusterId"]!;
}

/** The URN consumer `b` records as holding its peering with provider `providerClusterId`. */
async function claimHolder(b: ClusterState, providerClusterId: string): Promise<string | undefined> {
  const claim = await core(b).readNamespacedConfigMap({
    name: peeringClaimName(providerClusterId),
    namespace: SYSTEM_NAMESPACE,
  });
  return claim.data?.["owner"];
}

/** The URNs of the `liqo:` resources a stack holds. */
async function urnsOf(workspace: PulumiWorkspace): Promise<string[]> {
  const exported = JSON.parse((await workspace.ok(["stack", "export"])).stdout) as {
    deployment: { resources?: { urn: string; type: string }[] };
  };
  return (exported.deployment.resources ?? []).filter((r) => r.type.startsWith("liqo:")).map((r) => r.urn);
}

describe("pulumi import of the TypeScript example's peering into a YAML program", () => {
  const given = pluginOnSharedLab();

  test(
    "GIVEN b peered with a, tunnelled and offloading by the TypeScript example WHEN a YAML stack imports its " +
      "Clusters, Peering, Tunnel and NamespaceOffloading THEN a forged " +
      "ID is refused, the next preview shows no change, no secret is printed or stored, and a resize from the YAML " +
      "stack updates in place and takes the pair's claim over; the TypeScript stack's destroy then leaves nothing",
    async () => {
      const [a, b] = [clusterOf(given.lab, "a"), clusterOf(given.lab, "b")];
      const typescript = await PulumiWorkspace.create(TYPESCRIPT_EXAMPLE);
      let yaml: PulumiWorkspace | undefined;
      const dir = mkdtempSync(join(tmpdir(), "pulumi-liqo-import-"));
      await core(b).createNamespace({ body: { metadata: { name: OFFLOADED } } });
      try {
        await configureForLab(typescript, given.lab);
        await typescript.ok(["config", "set", "offloadNamespace", OFFLOADED]);
        await typescript.ok(["up", "--yes", "--skip-preview"]);
        const [aId, bId] = [await clusterIdOf(a), await clusterIdOf(b)];
        const dynamicHolder = await claimHolder(b, aId);
        expect(dynamicHolder).toMatch(/::b-to-a$/);
        expect(dynamicHolder).not.toContain("liqo:index:Peering");

        yaml = await workspaceWithPlugin(YAML_PROGRAM, given.archive);
        await configureForLab(yaml, given.lab);
        await yaml.ok(["config", "set", "offloadNamespace", OFFLOADED]);
        const token = (await typescript.ok(["stack", "output", "peeringToken", "--show-secrets"])).stdout.trim();
        await yaml.ok(["config", "set", "--secret", "peeringToken", token]);

        // A forged ID: the pair reversed, with b's kubeconfig, which reaches b, not a.
        const forgedId = `${aId}-to-${bId}@${b.kubeconfig}`;
        const forged = await yaml.pulumi(["import", "liqo:index:Peering", "b-to-a", forgedId, "--yes"]);
        expect(forged.exitCode).not.toBe(0);
        expect(forged.stdout + forged.stderr).toContain(
          `Peering import of ID "${forgedId}": reading the consumer's identity at ${b.apiServerUrl}: ` +
            `the kubeconfig reaches cluster ${bId}, not ${aId}: refused`,
        );
        expect(await urnsOf(yaml)).toEqual([]);

        // The IDs the README documents, in one import file; no program snippet (generated code is not asked for).
        const importFile = join(dir, "import.json");
        writeFileSync(
          importFile,
          JSON.stringify({
            resources: [
              { type: "liqo:index:Cluster", name: "a", id: `${aId}@${a.kubeconfig}` },
              { type: "liqo:index:Cluster", name: "b", id: `${bId}@${b.kubeconfig}` },
              { type: "liqo:index:Peering", name: "b-to-a", id: `${bId}-to-${aId}@${b.kubeconfig}` },
              { type: "liqo:index:Tunnel", name: "b-to-a-tunnel", id: `${bId}-to-${aId}@${b.kubeconfig}` },
              { type: "liqo:index:NamespaceOffloading", name: "b-offloads", id: `${OFFLOADED}@${b.kubeconfig}` },
            ],
          }),
        );
        const imported = await yaml.ok([
          "import",
          "--file",
          importFile,
          "--yes",
          "--generate-code=false",
          "--protect=false",
        ]);
        const said = imported.stdout + imported.stderr;
        expect(said).toMatch(
          /Peering import of ID "[^"]+": made by Peering "b-to-a" \(stack test, project local-peering\), which this one takes over/,
        );
        expect(said).toMatch(
          /give Peering "b-to-a" these inputs in the program, which the import cannot recover: consumer\.kubeconfig \(.*\); provider\.token \(/,
        );
        expect(said).toMatch(
          /give NamespaceOffloading "b-offloads" these inputs .*peerings \(the Peerings whose virtual nodes are liqo-a/,
        );
        expect(await urnsOf(yaml)).toHaveLength(5);
        const exported = (await yaml.ok(["stack", "export"])).stdout;
        for (const secret of [readFileSync(b.kubeconfig, "utf8"), token, "client-key-data", "PRIVATE KEY"]) {
          expect(said).not.toContain(secret);
          expect(exported).not.toContain(secret);
        }

        await yaml.ok(["preview", "--expect-no-changes"]);
        // The claim is still the TypeScript stack's: an import writes nothing.
        expect(await claimHolder(b, aId)).toBe(dynamicHolder);

        await yaml.ok(["config", "set", "cpu", "3"]);
        const resize = await yaml.ok(["up", "--yes", "--skip-preview"]);
        expect(resize.stdout).toMatch(/~ +liqo:index:Peering +b-to-a +updated/);
        const node = await core(b).readNode({ name: "liqo-a" });
        expect(node.status?.capacity?.["cpu"]).toBe("3");
        expect(await claimHolder(b, aId)).toMatch(/::liqo:index:Peering::b-to-a$/);
        await yaml.ok(["preview", "--expect-no-changes"]);

        // The YAML stack lets go of them without touching the clusters; the TypeScript stack still holds them.
        await yaml.ok(["stack", "rm", "--force", "--yes"]);
        await typescript.ok(["destroy", "--yes", "--skip-preview"]);
        expect(await projectTraces(a.kubeconfig)).toEqual([]);
        expect(await projectTraces(b.kubeconfig)).toEqual([]);
      } finally {
        if (yaml) {
          await yaml.pulumi(["stack", "rm", "--force", "--yes"]);
          yaml.dispose();
        }
        await typescript.pulumi(["destroy", "--yes", "--skip-preview"]);
        typescript.dispose();
        rmSync(dir, { recursive: true, force: true });
        await core(b).deleteNamespace({ name: OFFLOADED });
      }
    },
    TEST_BOUND_MS,
  );
});
