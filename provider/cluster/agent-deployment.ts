/**
 * The agent as a real cluster runs it: a Deployment in the system namespace with its own
 * ServiceAccount and least-privilege RBAC, and a Service exposing the auth service. Pure builders
 * (`forge*`) and one idempotent apply; in local clusters the agent is a process instead, and
 * `Cluster` only verifies it.
 */
import * as k8s from "@kubernetes/client-node";
import { API_GROUP, MANAGED_BY, MANAGED_BY_LABEL, SYSTEM_NAMESPACE } from "../api/index.js";
import { deleteOptional, describeFailure, ensureObject, serverOf } from "../kube/client.js";

/**
 * Node flags of the agent: a 1 MB young generation instead of the default 16 MB one. The agent's
 * work is small and steady, so a small nursery costs little time and keeps its resident memory
 * about 25 MB lower (measured with process.memoryUsage after loading its modules).
 */
export const AGENT_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=1"];

/** Name shared by the agent's ServiceAccount, ClusterRole, binding, Deployment and Service. */
export const AGENT_NAME = "pulumi-liqo-agent";

/** How the agent is deployed. */
export interface AgentDeploymentSpec {
  /** Container image holding this package (its `dist/agent/main.js`) and Node 24. */
  readonly image: string;
  /** Port of the auth service, in the container and on the Service. */
  readonly authPort: number;
  /** How the auth service is exposed outside the cluster. */
  readonly exposure: "LoadBalancer" | "NodePort";
}

const labels = { [MANAGED_BY_LABEL]: MANAGED_BY, "app.kubernetes.io/name": AGENT_NAME };

/**
 * What the agent may do, and no more: run the auth service (tenant namespaces, their RBAC, client
 * CSRs it approves), answer offers, and keep virtual nodes alive.
 */
export function forgeAgentClusterRole(): k8s.V1ClusterRole {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: AGENT_NAME, labels },
    rules: [
      { apiGroups: [API_GROUP], resources: ["*"], verbs: ["*"] },
      { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "create", "patch", "delete"] },
      {
        apiGroups: [""],
        resources: ["nodes", "nodes/status"],
        verbs: ["get", "list", "watch", "create", "patch", "update", "delete"],
      },
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
      {
        apiGroups: ["coordination.k8s.io"],
        resources: ["leases"],
        verbs: ["get", "list", "create", "update", "delete"],
      },
      {
        apiGroups: ["rbac.authorization.k8s.io"],
        resources: ["roles", "rolebindings"],
        verbs: ["get", "list", "create", "patch", "update", "delete"],
      },
      {
        apiGroups: ["certificates.k8s.io"],
        resources: ["certificatesigningrequests"],
        verbs: ["get", "list", "create", "delete"],
      },
      { apiGroups: ["certificates.k8s.io"], resources: ["certificatesigningrequests/approval"], verbs: ["update"] },
      {
        apiGroups: ["certificates.k8s.io"],
        resources: ["signers"],
        resourceNames: ["kubernetes.io/kube-apiserver-client"],
        verbs: ["approve"],
      },
    ],
  };
}

/**
 * Secrets and ConfigMaps only in the system namespace: tokens' hashes, TLS, identities, cluster id;
 * the gateway also keeps its WireGuard key pairs there, so it may write Secrets there.
 */
export function forgeAgentSystemRole(): k8s.V1Role {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: AGENT_NAME, namespace: SYSTEM_NAMESPACE, labels },
    rules: [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] },
      {
        apiGroups: [""],
        resources: ["secrets"],
        verbs: ["get", "list", "watch", "create", "patch", "update", "delete"],
      },
    ],
  };
}

const roleBinding = (namespace: string, role: string): k8s.V1RoleBinding => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "RoleBinding",
  metadata: { name: AGENT_NAME, namespace, labels },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role },
  subjects: [{ kind: "ServiceAccount", name: AGENT_NAME, namespace: SYSTEM_NAMESPACE }],
});

/** Every object of the agent's deployment, in apply order. */
export function forgeAgentDeployment(spec: AgentDeploymentSpec): k8s.KubernetesObject[] {
  const serviceAccount: k8s.V1ServiceAccount = {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: AGENT_NAME, namespace: SYSTEM_NAMESPACE, labels },
  };
  const binding: k8s.V1ClusterRoleBinding = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: AGENT_NAME, labels },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: AGENT_NAME },
    subjects: [{ kind: "ServiceAccount", name: AGENT_NAME, namespace: SYSTEM_NAMESPACE }],
  };
  const deployment: k8s.V1Deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: AGENT_NAME, namespace: SYSTEM_NAMESPACE, labels },
    spec: {
      replicas: 1,
      // One agent at a time: two would answer offers and beat hearts twice.
      strategy: { type: "Recreate" },
      selector: { matchLabels: { "app.kubernetes.io/name": AGENT_NAME } },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: AGENT_NAME,
          containers: [
            {
              name: "agent",
              image: spec.image,
              command: ["node", ...AGENT_NODE_FLAGS, "dist/agent/main.js", "--auth-listen", `0.0.0.0:${spec.authPort}`],
              ports: [{ name: "auth", containerPort: spec.authPort }],
              resources: { requests: { cpu: "50m", memory: "128Mi" }, limits: { memory: "256Mi" } },
              securityContext: { runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true },
            },
          ],
        },
      },
    },
  };
  const service: k8s.V1Service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: AGENT_NAME, namespace: SYSTEM_NAMESPACE, labels },
    spec: {
      type: spec.exposure,
      selector: { "app.kubernetes.io/name": AGENT_NAME },
      ports: [{ name: "auth", port: spec.authPort, targetPort: "auth" as never }],
    },
  };
  return [
    serviceAccount,
    forgeAgentClusterRole(),
    binding,
    forgeAgentSystemRole(),
    roleBinding(SYSTEM_NAMESPACE, AGENT_NAME),
    // The cluster's client CA, to check identities on revoke: Kubernetes' own reader role for it.
    roleBinding("kube-system", "extension-apiserver-authentication-reader"),
    deployment,
    service,
  ];
}

/** Applies the agent's deployment (server-side apply: a second run converges). */
export async function ensureAgentDeployment(kc: k8s.KubeConfig, spec: AgentDeploymentSpec): Promise<void> {
  for (const object of forgeAgentDeployment(spec)) {
    await ensureObject(kc, object).catch(
      describeFailure(`cluster: applying the agent's ${object.kind} ${object.metadata?.name}`, serverOf(kc)),
    );
  }
}

/** Removes the agent's RBAC outside the system namespace (what is inside goes with the namespace). */
export async function deleteAgentClusterRbac(kc: k8s.KubeConfig): Promise<void> {
  const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const fail = describeFailure("cluster: removing the agent's ClusterRole and binding", serverOf(kc));
  await deleteOptional(() => rbac.deleteNamespacedRoleBinding({ name: AGENT_NAME, namespace: "kube-system" })).catch(
    fail,
  );
  await deleteOptional(() => rbac.deleteClusterRoleBinding({ name: AGENT_NAME })).catch(fail);
  await deleteOptional(() => rbac.deleteClusterRole({ name: AGENT_NAME })).catch(fail);
}
