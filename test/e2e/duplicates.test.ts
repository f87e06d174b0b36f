/**
 * What a user may declare by mistake, through the real `pulumi` CLI on the shared clusters: a
 * second `Peering` of a pair already peered, and a second `Cluster` on a kubeconfig another
 * `Cluster` installed. Each is refused, naming the first, and changes nothing on either cluster;
 * the engine does not record it, so taking it out of the program leaves the stack as it was. Two
 * tunnels that one gateway would serve on one UDP port fail at preview, naming both.
 */
import * as k8s from "@kubernetes/client-node";
import { join } from "node:path";
import { CLUSTER_IDENTITY_CONFIGMAP, SYSTEM_NAMESPACE, tenantNamespace } from "../../core/api/index.js";
import { peeringClaimName } from "../../core/peering/claim.js";
import { identitySecretName } from "../../core/authentication/stored-identity.js";
import { outgoingPeeringName } from "../../core/virtual-node/outgoing-peering.js";
import { API_GROUP, API_VERSION } from "../../core/api/names.js";
import { nodeReadiness } from "../../core/virtual-node/node.js";
import { clusterOf, type LabState } from "../../local-cluster/lab.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { projectTraces } from "../../harness/leaks.js";
import { configureForLab, PulumiWorkspace } from "../../harness/pulumi.js";

/** Each test's bound: pulumi up and destroy of the stack with its duplicates, each command with its own deadline. */
const TEST_BOUND_MS = 8 * 60_000;
/** The bound of this file's set-up and clean-up: the shared lab. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS;

const PROGRAM = join(__dirname, "programs", "duplicates");

/** The versions of everything the first peering and a's install consist of: any write changes one. */
async function versionsOf(
  lab: LabState,
  consumerId: string,
  providerId: string,
): Promise<Record<string, string | undefined>> {
  const [a, b] = [adminConfig(clusterOf(lab, "a")), adminConfig(clusterOf(lab, "b"))];
  const [coreA, coreB] = [a.makeApiClient(k8s.CoreV1Api), b.makeApiClient(k8s.CoreV1Api)];
  const outgoing = (await b.makeApiClient(k8s.CustomObjectsApi).getNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    namespace: SYSTEM_NAMESPACE,
    plural: "outgoingpeerings",
    name: outgoingPeeringName(providerId),
  })) as k8s.KubernetesObject;
  return {
    "a: identity ConfigMap": (
      await coreA.readNamespacedConfigMap({ name: CLUSTER_IDENTITY_CONFIGMAP, namespace: SYSTEM_NAMESPACE })
    ).metadata?.resourceVersion,
    "a: tenant Namespace": (await coreA.readNamespace({ name: tenantNamespace(consumerId) })).metadata?.resourceVersion,
    "b: identity Secret": (
      await coreB.readNamespacedSecret({ name: identitySecretName(providerId), namespace: SYSTEM_NAMESPACE })
    ).metadata?.resourceVersion,
    "b: OutgoingPeering": outgoing.metadata?.resourceVersion,
    "b: claim": (
      await coreB.readNamespacedConfigMap({ name: peeringClaimName(providerId), namespace: SYSTEM_NAMESPACE })
    ).metadata?.resourceVersion,
    "b: identity ConfigMap": (
      await coreB.readNamespacedConfigMap({ name: CLUSTER_IDENTITY_CONFIGMAP, namespace: SYSTEM_NAMESPACE })
    ).metadata?.resourceVersion,
  };
}

describe("mistakes a user may declare, through the pulumi CLI", () => {
  let lab: LabState;
  beforeAll(async () => {
    lab = await sharedLab();
  }, HOOK_BOUND_MS);

  test(
    "GIVEN b peered with a WHEN a second Peering of the pair, then a second Cluster on a's kubeconfig, is added THEN each " +
      "is refused naming the first, and nothing changes",
    async () => {
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      const workspace = await PulumiWorkspace.create(PROGRAM);
      try {
        await configureForLab(workspace, lab, { gatewayAddress: true });
        await workspace.ok(["up", "--yes", "--skip-preview"]);
        const virtualNode = (await workspace.ok(["stack", "output", "virtualNode"])).stdout.trim();
        const providerId = (await workspace.ok(["stack", "output", "providerClusterId"])).stdout.trim();
        const consumerId = (
          await adminConfig(b)
            .makeApiClient(k8s.CoreV1Api)
            .readNamespacedConfigMap({ name: CLUSTER_IDENTITY_CONFIGMAP, namespace: SYSTEM_NAMESPACE })
        ).data!["clusterId"]!;
        const before = await versionsOf(lab, consumerId, providerId);
        const stateBefore = (await workspace.ok(["stack", "export"])).stdout;

        // The same pair peered twice.
        await workspace.ok(["config", "set", "duplicatePeering", "true"]);
        const twice = await workspace.pulumi(["up", "--yes"]);
        expect(twice.exitCode).not.toBe(0);
        const said = `${twice.stdout}\n${twice.stderr}`;
        expect(said).toContain(`already peers with provider`);
        expect(said).toContain(`through Peering "b-to-a" (stack test`);
        expect(said).toContain("nothing was changed");
        expect((await workspace.ok(["stack", "export"])).stdout).not.toContain("b-to-a-again");
        expect(await versionsOf(lab, consumerId, providerId)).toEqual(before);
        const node = await adminConfig(b).makeApiClient(k8s.CoreV1Api).readNode({ name: virtualNode });
        expect(nodeReadiness(node).ready).toBe(true);

        // a's cluster declared twice.
        await workspace.ok(["config", "set", "duplicatePeering", "false"]);
        await workspace.ok(["config", "set", "duplicateCluster", "true"]);
        const again = await workspace.pulumi(["up", "--yes"]);
        expect(again.exitCode).not.toBe(0);
        const saidAgain = `${again.stdout}\n${again.stderr}`;
        expect(saidAgain).toContain(`is already installed by Cluster "a" (stack test`);
        expect(saidAgain).toContain(`cluster ID ${providerId}`);
        expect(saidAgain).toContain("nothing was changed");
        expect((await workspace.ok(["stack", "export"])).stdout).not.toContain("a-again");
        expect(await versionsOf(lab, consumerId, providerId)).toEqual(before);

        // Two tunnels that a's gateway would serve on one port: the preview already says so, naming both.
        await workspace.ok(["config", "set", "duplicateCluster", "false"]);
        await workspace.ok(["config", "set", "aGatewayAddress", a.publicAddress]);
        await workspace.ok(["config", "set", "portClash", "true"]);
        const clash = await workspace.pulumi(["preview"]);
        expect(clash.exitCode).not.toBe(0);
        expect(`${clash.stdout}\n${clash.stderr}`).toMatch(
          new RegExp(
            `the gateway of cluster ${providerId} would serve UDP port 51820 for (Tunnel "b-a"|Peering "a-to-b" \\(in-band\\)) too`,
          ),
        );
        await workspace.ok(["config", "set", "portClash", "false"]);

        // Taken out again, the stack is as it was: nothing to change.
        await workspace.ok(["preview", "--expect-no-changes"]);
        expect(JSON.parse((await workspace.ok(["stack", "export"])).stdout).deployment.resources.length).toBe(
          JSON.parse(stateBefore).deployment.resources.length,
        );
        await workspace.ok(["destroy", "--yes", "--skip-preview"]);
      } finally {
        await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
        workspace.dispose();
      }
      expect(await projectTraces(a.kubeconfig)).toEqual([]);
      expect(await projectTraces(b.kubeconfig)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
