/**
 * The peering steps end to end on real clusters, without the Pulumi engine: consumer `b` peers
 * with provider `a` through a's agent (auth service, offer answering) and b's agent (heartbeat);
 * the scheduler binds a tolerating pod to the virtual node; a new request resizes the node in
 * place; unpeer leaves nothing on either side.
 */
import * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE, tenantNamespace } from "../../core/api/index.js";
import { ensurePeeringTokenSecret, forgePeeringToken, revokePeeringToken } from "../../core/authentication/tokens.js";
import { createPeering, deletePeering, readPeering, updatePeeringResources } from "../../core/peering/peering.js";
import { progressTo } from "../../core/operation/progress.js";
import { VIRTUAL_NODE_LABEL, VIRTUAL_NODE_TAINT } from "../../core/virtual-node/node.js";
import { poll } from "../../core/wait/poll.js";
import { clusterOf } from "../../local-cluster/lab.js";
import { readFileSync } from "node:fs";
import { adminConfig, installForPeering, uninstallClusters } from "../../harness/install.js";
import { sharedLab } from "../../harness/labs.js";

/** Each test's bound: a peering made, resized and removed on the shared lab. */
const TEST_BOUND_MS = 5 * 60_000;

describe("peering steps on real clusters", () => {
  test(
    "GIVEN provider a and consumer b WHEN peered, resized and unpeered THEN each step shows in both clusters and nothing is left",
    async () => {
      const lab = await sharedLab();
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      const lines: string[] = [];
      const progress = progressTo((line) => lines.push(line));
      const provider = await installForPeering(a);
      const consumer = await installForPeering(b);
      const token = forgePeeringToken();
      await ensurePeeringTokenSecret(adminConfig(a), { tokenId: token.tokenId, secretHash: token.secretHash });
      const consumerKubeconfig = readFileSync(b.kubeconfig, "utf8");
      const core = adminConfig(b).makeApiClient(k8s.CoreV1Api);
      try {
        const record = await createPeering(
          {
            consumerKubeconfig,
            provider: {
              clusterId: provider.clusterId,
              authUrl: a.authUrl,
              authCaCert: provider.caPem,
              token: token.token,
            },
            resources: { cpu: "2", memory: "4Gi", pods: 20 },
            timeoutMs: 90_000,
          },
          progress,
        );
        expect(lines).toEqual([
          `[1/3] authentication: asking ${a.authUrl} for an identity`,
          `[2/3] negotiation: waiting for an offer from provider a`,
          `[3/3] virtual node: creating Node liqo-a in consumer b`,
        ]);
        expect(record.offer).toEqual({ cpu: "2", memory: "4Gi", pods: 20 });
        const node = await core.readNode({ name: record.virtualNodeName });
        expect(node.status?.capacity).toEqual({ cpu: "2", memory: "4Gi", pods: "20" });
        expect(node.spec?.taints).toContainEqual(
          expect.objectContaining({ key: VIRTUAL_NODE_TAINT.key, effect: "NoExecute" }),
        );
        expect(tenantNamespace(consumer.clusterId)).toBe(record.tenantNamespace);

        // kube-scheduler binds a pod that tolerates the taint and selects virtual nodes to the virtual node.
        const pod = `offload-${Date.now().toString(36)}`;
        await core.createNamespacedPod({
          namespace: "default",
          body: {
            metadata: { name: pod },
            spec: {
              containers: [
                {
                  name: "app",
                  image: "registry.invalid/app:1",
                  resources: { requests: { cpu: "100m", memory: "64Mi" } },
                },
              ],
              tolerations: [{ key: VIRTUAL_NODE_TAINT.key, operator: "Exists", effect: "NoExecute" }],
              // b has a real node too: the selector makes the virtual node the only choice.
              nodeSelector: { [VIRTUAL_NODE_LABEL]: "true" },
            },
          },
        });
        const boundTo = await poll(
          { step: "test", object: `pod default/${pod} bound`, endpoint: b.apiServerUrl },
          { timeoutMs: 60_000 },
          async () => {
            const current = await core.readNamespacedPod({ name: pod, namespace: "default" });
            return current.spec?.nodeName
              ? { done: true, value: current.spec.nodeName }
              : { done: false, state: JSON.stringify(current.status?.conditions ?? []) };
          },
        );
        expect(boundTo).toBe(record.virtualNodeName);
        await core.deleteNamespacedPod({ name: pod, namespace: "default", gracePeriodSeconds: 0 });

        // A new request is renegotiated in place: the node's capacity follows.
        const resized = await updatePeeringResources(
          consumerKubeconfig,
          record,
          { cpu: "3", memory: "6Gi", pods: 30 },
          60_000,
          progress,
        );
        expect(resized.offer).toEqual({ cpu: "3", memory: "6Gi", pods: 30 });
        expect((await core.readNode({ name: record.virtualNodeName })).status?.capacity).toEqual({
          cpu: "3",
          memory: "6Gi",
          pods: "30",
        });
        expect((await readPeering(consumerKubeconfig, resized)).problems).toEqual([]);

        const left = await deletePeering(
          consumerKubeconfig,
          resized,
          { authUrl: a.authUrl, authCaCert: provider.caPem },
          { force: false, timeoutMs: 30_000 },
          progress,
        );
        expect(left).toEqual([]);
        expect(
          await core.readNode({ name: record.virtualNodeName }).then(
            () => "present",
            () => "gone",
          ),
        ).toBe("gone");
        const providerCore = adminConfig(a).makeApiClient(k8s.CoreV1Api);
        await poll(
          { step: "test", object: `tenant namespace ${record.tenantNamespace} gone`, endpoint: a.apiServerUrl },
          { timeoutMs: 60_000 },
          async () => {
            const found = await providerCore.readNamespace({ name: record.tenantNamespace }).then(
              () => true,
              () => false,
            );
            return found ? { done: false, state: "still there" } : { done: true, value: undefined };
          },
        );
        const secrets = await core.listNamespacedSecret({ namespace: SYSTEM_NAMESPACE });
        expect(secrets.items.map((s) => s.metadata?.name).filter((n) => n?.startsWith("identity-"))).toEqual([]);
      } finally {
        await revokePeeringToken(adminConfig(a), token.tokenId);
        await uninstallClusters([b, a], { keepDefinitions: true });
      }
    },
    TEST_BOUND_MS,
  );
});
