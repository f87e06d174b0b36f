/**
 * The agent's deployment for real clusters, applied to a local one: each component's ServiceAccount
 * (control, gateway, route) may do what it needs, and nothing broader; uninstall removes all of it.
 * (Local clusters run no kubelet yet, and the image is not there anyway: the pods never start
 * here, so the rollout wait is seen to time out with what it saw.) A cluster whose policy refuses what
 * the gateway needs (a ValidatingAdmissionPolicy against pods on the host's network, as hardened
 * clusters have) makes the wait fail early, naming the policy and the refused pod.
 */
import * as k8s from "@kubernetes/client-node";
import { API_GROUP, SYSTEM_NAMESPACE } from "../../core/api/index.js";
import {
  AGENT_NAME,
  deleteAgentClusterObjects,
  ensureAgentDeployment,
  type AgentDeploymentSpec,
} from "../../core/cluster/agent-deployment.js";
import { GATEWAY_NAME, ROUTE_NAME } from "../../core/cluster/agent-components.js";
import { REFUSAL_STANDS_MS, waitForAgentRollout } from "../../core/cluster/agent-rollout.js";
import { poll } from "../../core/wait/poll.js";
import { ensureSystemNamespace, uninstallCluster } from "../../core/cluster/install.js";
import { clusterOf } from "../../local-cluster/lab.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab } from "../../harness/labs.js";
import { projectTraces } from "../../harness/leaks.js";

/** Each test's bound: the install's rollout of the agent's pods, the review of its rights and the uninstall. */
const TEST_BOUND_MS = 4 * 60_000;

/** How long the rollout wait is given here, where it cannot succeed. */
const ROLLOUT_TIMEOUT_MS = 3000;

const serviceAccountOf = (name: string): string => `system:serviceaccount:${SYSTEM_NAMESPACE}:${name}`;

/** A cluster's policy against pods on the host's network in the project's namespace. */
const NO_HOST_NETWORK = "test-no-host-network";

/** Applies {@link NO_HOST_NETWORK} and its binding; resolves once the API server enforces it (a dry run is refused). */
async function refuseHostNetwork(kc: k8s.KubeConfig): Promise<void> {
  const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  await admission.createValidatingAdmissionPolicy({
    body: {
      metadata: { name: NO_HOST_NETWORK },
      spec: {
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }],
        },
        validations: [
          {
            expression: "!has(object.spec.hostNetwork) || !object.spec.hostNetwork",
            message: "pods of this namespace may not use the host's network",
          },
        ],
      },
    },
  });
  await admission.createValidatingAdmissionPolicyBinding({
    body: {
      metadata: { name: NO_HOST_NETWORK },
      spec: {
        policyName: NO_HOST_NETWORK,
        validationActions: ["Deny"],
        matchResources: {
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": SYSTEM_NAMESPACE } },
        },
      },
    },
  });
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await poll(
    { step: "test", object: `ValidatingAdmissionPolicy ${NO_HOST_NETWORK} enforced`, endpoint: "the shared lab" },
    { timeoutMs: 30_000, intervalMs: 250 },
    async () => {
      const refused = await core
        .createNamespacedPod({
          namespace: SYSTEM_NAMESPACE,
          dryRun: "All",
          body: {
            metadata: { name: "probe" },
            spec: { hostNetwork: true, containers: [{ name: "c", image: "registry.invalid/probe" }] },
          },
        })
        .then(
          () => false,
          // Refused by the policy itself: a namespace not there yet refuses every pod too, and proves nothing.
          (error: unknown) => String((error as { body?: unknown }).body ?? error).includes(NO_HOST_NETWORK),
        );
      return refused
        ? { done: true, value: undefined }
        : { done: false, state: "a dry run is not refused by the policy" };
    },
  );
}

/** Removes {@link NO_HOST_NETWORK} and its binding, if there. */
async function allowHostNetwork(kc: k8s.KubeConfig): Promise<void> {
  const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  await admission.deleteValidatingAdmissionPolicyBinding({ name: NO_HOST_NETWORK }).catch(() => undefined);
  await admission.deleteValidatingAdmissionPolicy({ name: NO_HOST_NETWORK }).catch(() => undefined);
}

const spec: AgentDeploymentSpec = {
  image: "registry.invalid/pulumi-liqo-agent:test",
  auth: { port: 8443, exposure: { type: "NodePort" } },
  gateway: { port: 51820, exposure: { type: "NodePort", nodePort: 31820 } },
};

describe("agent deployment", () => {
  test(
    "GIVEN the agent deployed WHEN its rights are reviewed THEN it has what it needs and no more; uninstall removes it all",
    async () => {
      const cluster = clusterOf(await sharedLab(), "a");
      const kc = adminConfig(cluster);
      const authz = kc.makeApiClient(k8s.AuthorizationV1Api);
      const mayAs =
        (name: string) =>
        async (attributes: k8s.V1ResourceAttributes): Promise<boolean> =>
          (
            await authz.createSubjectAccessReview({
              body: {
                spec: {
                  user: serviceAccountOf(name),
                  groups: ["system:serviceaccounts"],
                  resourceAttributes: attributes,
                },
              },
            })
          ).status?.allowed ?? false;
      const may = mayAs(AGENT_NAME);
      const gatewayMay = mayAs(GATEWAY_NAME);
      const routeMay = mayAs(ROUTE_NAME);
      const tunnelEndpoints = { group: API_GROUP, resource: "tunnelendpoints" };
      try {
        await ensureSystemNamespace(kc);
        await ensureAgentDeployment(kc, spec);
        await ensureAgentDeployment(kc, spec);
        const deployment = await kc
          .makeApiClient(k8s.AppsV1Api)
          .readNamespacedDeployment({ name: AGENT_NAME, namespace: SYSTEM_NAMESPACE });
        expect(deployment.spec?.template.spec?.containers[0]?.image).toBe("registry.invalid/pulumi-liqo-agent:test");

        // Its image is nowhere to be had, so it never rolls out: the wait ends at its timeout, naming the
        // first workload it waited for, the cluster and what it saw last.
        const started = performance.now();
        await expect(waitForAgentRollout(kc, ROLLOUT_TIMEOUT_MS)).rejects.toThrow(
          new RegExp(
            `^cluster: timed out after 3 s waiting for Deployment ${SYSTEM_NAMESPACE}/${AGENT_NAME} rolled out at ` +
              `https://\\S+; last state: (\\d/1 replicas updated, 0/1 available|generation \\d+ not observed yet)`,
          ),
        );
        expect(performance.now() - started).toBeLessThan(ROLLOUT_TIMEOUT_MS + 2000);

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

        // The gateway: its TunnelEndpoints and their status, its key Secrets; nothing of the control agent's.
        expect(await gatewayMay({ ...tunnelEndpoints, verb: "watch" })).toBe(true);
        expect(
          await gatewayMay({ ...tunnelEndpoints, verb: "patch", namespace: "tenant-x", subresource: "status" }),
        ).toBe(true);
        expect(await gatewayMay({ resource: "secrets", verb: "create", namespace: SYSTEM_NAMESPACE })).toBe(true);
        expect(await gatewayMay({ resource: "secrets", verb: "list", namespace: SYSTEM_NAMESPACE })).toBe(false);
        expect(await gatewayMay({ resource: "secrets", verb: "get", namespace: "default" })).toBe(false);
        expect(await gatewayMay({ group: API_GROUP, resource: "resourcerequests", verb: "list" })).toBe(false);
        expect(
          await gatewayMay({ group: "certificates.k8s.io", resource: "certificatesigningrequests", verb: "create" }),
        ).toBe(false);
        // The route agent reads, and only what it routes from.
        expect(await routeMay({ resource: "pods", verb: "watch", namespace: SYSTEM_NAMESPACE })).toBe(true);
        expect(await routeMay({ resource: "pods", verb: "list", namespace: "default" })).toBe(false);
        expect(await routeMay({ resource: "nodes", verb: "watch" })).toBe(true);
        expect(await routeMay({ resource: "nodes", verb: "patch" })).toBe(false);
        expect(await routeMay({ ...tunnelEndpoints, verb: "list" })).toBe(true);
        expect(await routeMay({ ...tunnelEndpoints, verb: "patch", namespace: SYSTEM_NAMESPACE })).toBe(false);
        expect(await routeMay({ resource: "secrets", verb: "get", namespace: SYSTEM_NAMESPACE })).toBe(false);
      } finally {
        await uninstallCluster(kc);
        await deleteAgentClusterObjects(kc);
      }
      expect(await projectTraces(cluster.kubeconfig)).toEqual([]);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a cluster whose policy refuses pods on the host's network WHEN the agent is deployed THEN the rollout wait " +
      "fails early naming the workload, the refused pod and the policy; uninstall removes it all",
    async () => {
      const cluster = clusterOf(await sharedLab(), "a");
      const kc = adminConfig(cluster);
      try {
        // The namespace first: the policy's enforcement is checked by a dry run in it.
        await ensureSystemNamespace(kc);
        await refuseHostNetwork(kc);
        await ensureAgentDeployment(kc, spec);
        // The control agent (not on the host's network) is admitted but never starts here; the gateway is
        // refused, which the wait says once the refusal has stood, long before its own deadline.
        const started = performance.now();
        await expect(waitForAgentRollout(kc, 120_000)).rejects.toThrow(
          new RegExp(
            `^cluster: Deployment ${SYSTEM_NAMESPACE}/${AGENT_NAME} rolled out at https://\\S+ failed: ` +
              `Deployment ${SYSTEM_NAMESPACE}/${GATEWAY_NAME}: the cluster refuses its pods: .*pods "${GATEWAY_NAME}-\\S+" ` +
              `is forbidden: ValidatingAdmissionPolicy '${NO_HOST_NETWORK}' with binding '${NO_HOST_NETWORK}' denied ` +
              "request: pods of this namespace may not use the host's network.* \\(the project's namespace",
          ),
        );
        expect(performance.now() - started).toBeGreaterThanOrEqual(REFUSAL_STANDS_MS);
        expect(performance.now() - started).toBeLessThan(90_000);
      } finally {
        await allowHostNetwork(kc);
        await uninstallCluster(kc);
        await deleteAgentClusterObjects(kc);
      }
      expect(await projectTraces(cluster.kubeconfig)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
