/**
 * `pulumi import` through the plugin, in pure parts: the import ID, what a Cluster's install gives
 * back as inputs and outputs, and the refusals (a forged ID, another resource's install, resources
 * that cannot be imported). No cluster is reached: each refusal comes before any request.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { forgeAgentDeployment } from "../../../core/cluster/agent-deployment.js";
import {
  agentDeploymentOf,
  askedOfDeployment,
  type ClusterInstallRequest,
  type DeployedAgent,
} from "../../../core/cluster/install-plan.js";
import type { InstallFound } from "../../../core/cluster/lifecycle.js";
import { forgeKubeconfig } from "../../../core/kube/kubeconfig.js";
import { importedCluster, type ClusterImport } from "../../../core/resources/cluster.js";
import { parseImportId, readKubeconfigFile } from "../../../plugin/imports.js";
import { KINDS } from "../../../plugin/kinds.js";
import { read, type Target } from "../../../plugin/operations.js";

const ID = "0123456789abcdef";
const URN = "urn:pulumi:dev::plugin::liqo:index:Cluster::a";
const KEY = "-----BEGIN PRIVATE KEY-----secret-key-material";
const kubeconfig = forgeKubeconfig({
  name: "a",
  server: "https://172.29.1.10:6443",
  caPem: "ca",
  certPem: "cert",
  keyPem: KEY,
});
const targetOf = (type: string, urn = URN): Target => ({ kind: KINDS[type]!, type, urn });

describe("the import ID", () => {
  test("GIVEN <clusterId>@<absolute path> WHEN parsed THEN it gives both parts (a path may hold an @)", () => {
    expect(parseImportId("Cluster", `${ID}@/home/me/kube@work/a.yaml`, "<clusterId>")).toEqual({
      object: ID,
      kubeconfigPath: "/home/me/kube@work/a.yaml",
    });
  });

  test.each([
    ["no @", ID, /it has no @/],
    ["a relative path", `${ID}@a.yaml`, /"a.yaml" is not an absolute path/],
    ["an empty object", "@/a.yaml", /"" is not <clusterId>/],
    ["a path in the object", "../x@/a.yaml", /"..\/x" is not <clusterId>/],
    ["capitals", "ABC@/a.yaml", /"ABC" is not <clusterId>/],
  ])("GIVEN %s WHEN parsed THEN the error names the ID, the step and the form expected", (_what, id, why) => {
    const parse = () => parseImportId("Cluster", id, "<clusterId>");
    expect(parse).toThrow(`Cluster import of ID ${JSON.stringify(id)}: parsing the ID: `);
    expect(parse).toThrow(why);
    expect(parse).toThrow(/expected <clusterId>@<absolute path of a kubeconfig file that reaches the cluster>/);
  });

  test("GIVEN a kubeconfig file that does not exist WHEN read THEN the error names the file and why", () => {
    expect(() => readKubeconfigFile("Cluster import", { object: ID, kubeconfigPath: "/nonexistent/a.yaml" })).toThrow(
      "Cluster import: reading the kubeconfig file /nonexistent/a.yaml: ENOENT",
    );
  });
});

describe("a read with no state (an import) through the plugin", () => {
  test.each([
    [
      "liqo:index:PeeringToken",
      /^PeeringToken import of ID "x": not importable: the cluster keeps only the token's hash/,
    ],
  ])("GIVEN %s WHEN imported THEN it fails naming the resource type, the ID and why", async (type, why) => {
    await expect(read(targetOf(type), "x", {}, {})).rejects.toThrow(why);
  });

  test("GIVEN a Cluster ID without a kubeconfig file WHEN imported THEN it fails at parsing, before any cluster", async () => {
    await expect(read(targetOf("liqo:index:Cluster"), ID, {}, {})).rejects.toThrow(
      `Cluster import of ID "${ID}": parsing the ID: it has no @`,
    );
  });

  test("GIVEN a file that is no kubeconfig WHEN imported THEN the error names the file and quotes none of it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "import-test-"));
    try {
      const path = join(dir, "not-a-kubeconfig");
      writeFileSync(path, `token: ${KEY}\n`);
      const failure = read(targetOf("liqo:index:Cluster"), `${ID}@${path}`, {}, {});
      await expect(failure).rejects.toThrow(`Cluster import of ID "${ID}@${path}": kubeconfig`);
      await expect(failure).rejects.not.toThrow(/secret-key-material/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The agent's objects as `request` deploys them, as a cluster would show them. */
function deployedBy(request: Pick<ClusterInstallRequest, "agent" | "gateway" | "authService">): DeployedAgent {
  const objects = forgeAgentDeployment(agentDeploymentOf(request, request.agent!.image!));
  const find = <T>(kind: string, name: string) =>
    objects.find((o) => o.kind === kind && o.metadata?.name === name) as T | undefined;
  const gatewayService = find<k8s.V1Service>("Service", "pulumi-liqo-gateway");
  return {
    control: find<k8s.V1Deployment>("Deployment", "pulumi-liqo-agent")!,
    gateway: find<k8s.V1Deployment>("Deployment", "pulumi-liqo-gateway")!,
    authService: find<k8s.V1Service>("Service", "pulumi-liqo-agent")!,
    ...(gatewayService ? { gatewayService } : {}),
  };
}

describe("the agent's inputs recovered from what it deployed", () => {
  test.each<Pick<ClusterInstallRequest, "agent" | "gateway" | "authService">>([
    { agent: { image: "liqo-agent:1" } },
    {
      agent: { image: "liqo-agent:1", exposure: "NodePort", nodePort: 8443 },
      gateway: { exposure: "NodePort", nodePort: 51820 },
    },
    { agent: { image: "liqo-agent:1" }, gateway: { port: 51999, exposure: "hostPort" }, authService: { port: 9443 } },
  ])("GIVEN a deployment from %j WHEN read back THEN the same inputs come out", (asked) => {
    expect(askedOfDeployment(deployedBy(asked))).toEqual(asked);
  });

  test("GIVEN no agent Deployment (an agent run outside the cluster) WHEN read back THEN nothing is asked", () => {
    expect(askedOfDeployment({})).toEqual({});
  });
});

const asked: ClusterImport = { clusterId: ID, kubeconfig, urn: URN, label: `Cluster import of ID "${ID}@/k"` };
const found: InstallFound = {
  server: "https://172.29.1.10:6443",
  identity: {
    clusterId: ID,
    clusterName: "a",
    apiServerUrl: "https://172.29.1.10:6443",
    apiServerCaPem: "ca",
    podCidr: "10.10.0.0/16",
    serviceCidr: "10.11.0.0/16",
  },
  owner: URN,
  authCaCert: "auth-ca",
  deployed: deployedBy({ agent: { image: "img", exposure: "NodePort", nodePort: 30443 } }),
};

describe("a Cluster as its import finds it", () => {
  test("GIVEN an install WHEN imported THEN the inputs reproduce it, the outputs are a create's, and kubeconfig is named to supply", () => {
    const imported = importedCluster(asked, found);
    expect(imported.id).toBe(ID);
    expect(imported.inputs).toEqual({
      name: "a",
      podCidr: "10.10.0.0/16",
      serviceCidr: "10.11.0.0/16",
      agent: { image: "img", exposure: "NodePort", nodePort: 30443 },
    });
    expect(imported.outputs).toMatchObject({
      clusterId: ID,
      kubeconfig,
      apiServerUrl: "https://172.29.1.10:6443",
      authUrl: "https://172.29.1.10:30443",
      gatewayEndpoint: "172.29.1.10:51820",
      authCaCert: "auth-ca",
    });
    expect(JSON.stringify(imported.inputs)).not.toContain("secret-key-material");
    expect(imported.unrecovered.map((u) => u.input)).toEqual(["kubeconfig"]);
  });

  test("GIVEN an API server URL other than the kubeconfig's WHEN imported THEN apiServerUrl is recovered as an input", () => {
    const natted = { ...found, identity: { ...found.identity, apiServerUrl: "https://203.0.113.7:6443" } };
    expect(importedCluster(asked, natted).inputs).toMatchObject({ apiServerUrl: "https://203.0.113.7:6443" });
  });

  test("GIVEN a forged ID naming another cluster than the kubeconfig reaches WHEN imported THEN it is refused, naming both and the endpoint", () => {
    const forged = { ...asked, clusterId: "fedcba9876543210" };
    expect(() => importedCluster(forged, found)).toThrow(
      `${asked.label}: reading the cluster's identity at https://172.29.1.10:6443: the kubeconfig reaches cluster ${ID}, not fedcba9876543210: refused`,
    );
  });

  test("GIVEN an install another Cluster resource made WHEN imported THEN it is taken over from that resource, and only then", () => {
    const theirs = { ...found, owner: "urn:pulumi:prod::infra::pulumi-nodejs:dynamic:Resource::eu" };
    expect(importedCluster(asked, theirs).takenFrom).toBe(theirs.owner);
    expect(importedCluster(asked, found).takenFrom).toBeUndefined();
    const { owner: _none, ...unowned } = found;
    expect(importedCluster(asked, unowned).takenFrom).toBeUndefined();
  });

  test("GIVEN no install WHEN imported THEN it says nothing is there to import, at which endpoint", () => {
    expect(() => importedCluster(asked, undefined)).toThrow(
      `${asked.label}: reading the cluster's identity at https://172.29.1.10:6443: pulumi-liqo is not installed there: nothing to import`,
    );
  });

  test("GIVEN an ID that is no cluster ID WHEN imported THEN it says so before reading anything", () => {
    expect(() => importedCluster({ ...asked, clusterId: "a" }, found)).toThrow(/"a" is not a cluster ID/);
  });
});
