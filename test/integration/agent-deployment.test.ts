/**
 * The agent's deployment for real clusters, applied to a local one: its ServiceAccount may do
 * what the auth service, offer answering and heartbeat need, and nothing broader; uninstall
 * removes all of it. (Local clusters run no kubelet, so the pod itself never starts here.)
 */
import * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE } from "../../provider/api/index.js";
import { AGENT_NAME, deleteAgentClusterRbac, ensureAgentDeployment } from "../../provider/cluster/agent-deployment.js";
import { ensureSystemNamespace, uninstallCluster } from "../../provider/cluster/install.js";
import { clusterOf } from "../../local-cluster/lab.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab } from "../../harness/labs.js";
import { projectTraces } from "../support/leaks.js";

const serviceAccount = `system:serviceaccount:${SYSTEM_NAMESPACE}:${AGENT_NAME}`;

describe("agent deployment", () => {
  test("GIVEN the agent deployed WHEN its rights are reviewed THEN it has what it needs and no more; uninstall removes it all", async () => {
    const cluster = clusterOf(await sharedLab(), "a");
    const kc = adminConfig(cluster);
    const authz = kc.makeApiClient(k8s.AuthorizationV1Api);
    const may = async (attributes: k8s.V1ResourceAttributes): Promise<boolean> =>
      (
        await authz.createSubjectAccessReview({
          body: { spec: { user: serviceAccount, groups: ["system:serviceaccounts"], resourceAttributes: attributes } },
        })
      ).status?.allowed ?? false;
    try {
      await ensureSystemNamespace(kc);
      await ensureAgentDeployment(kc, {
        image: "registry.invalid/pulumi-liqo-agent:test",
        authPort: 8443,
        exposure: "NodePort",
      });
      await ensureAgentDeployment(kc, {
        image: "registry.invalid/pulumi-liqo-agent:test",
        authPort: 8443,
        exposure: "NodePort",
      });
      const deployment = await kc
        .makeApiClient(k8s.AppsV1Api)
        .readNamespacedDeployment({ name: AGENT_NAME, namespace: SYSTEM_NAMESPACE });
      expect(deployment.spec?.template.spec?.containers[0]?.image).toBe("registry.invalid/pulumi-liqo-agent:test");

      expect(
        await may({
          group: "certificates.k8s.io",
          resource: "signers",
          name: "kubernetes.io/kube-apiserver-client",
          verb: "approve",
        }),
      ).toBe(true);
      expect(
        await may({
          group: "certificates.k8s.io",
          resource: "signers",
          name: "kubernetes.io/kubelet-serving",
          verb: "approve",
        }),
      ).toBe(false);
      expect(await may({ resource: "namespaces", verb: "create" })).toBe(true);
      expect(await may({ resource: "secrets", verb: "get", namespace: SYSTEM_NAMESPACE })).toBe(true);
      expect(await may({ resource: "secrets", verb: "get", namespace: "default" })).toBe(false);
      expect(
        await may({
          resource: "configmaps",
          verb: "get",
          namespace: "kube-system",
          name: "extension-apiserver-authentication",
        }),
      ).toBe(true);
      expect(await may({ resource: "pods", verb: "create", namespace: "default" })).toBe(false);
    } finally {
      await uninstallCluster(kc);
      await deleteAgentClusterRbac(kc);
    }
    expect(await projectTraces(cluster.kubeconfig)).toEqual([]);
  });
});
