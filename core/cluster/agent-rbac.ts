/**
 * What each part of the agent may do, and no more: one ServiceAccount each, bound to its own
 * roles. Pure forgers (no client), so the rights are reviewed in unit tests.
 *
 *   control  the auth service (tenant namespaces, their RBAC, client CSRs it approves), offers,
 *            virtual nodes' heartbeat, in-band peering: the project's resources, Secrets and
 *            ConfigMaps of the system namespace
 *   gateway  the TunnelEndpoints (their status and finalizers), the namespaces' labels (to tell a
 *            tenant's endpoint), the cluster identity, its key Secrets in the system namespace,
 *            and the auth service's Service (the in-band relay's target)
 *   route    reads only: the gateway's pods (system namespace), nodes, TunnelEndpoints
 *
 * The control agent also offloads: on a provider it creates the pods consumers ask for (only in
 * the namespaces it made for them, through a RoleBinding there); on a
 * consumer it writes the status of pods bound to its virtual nodes, and reads the ConfigMaps and
 * Secrets they use in the namespaces offloaded (bound there by the offloading, not here).
 */
import type * as k8s from "@kubernetes/client-node";
import { API_GROUP, CLUSTER_IDENTITY_CONFIGMAP, SYSTEM_NAMESPACE } from "../api/index.js";
import { AGENT_NAME, componentLabels, CONSUMER_DNS_SERVICE, GATEWAY_NAME, ROUTE_NAME } from "./agent-components.js";

type Rule = k8s.V1PolicyRule;
const READ = ["get", "list", "watch"];

/**
 * What a consumer's identity may do in each of its remote namespaces on a provider: read the pods
 * the provider's agent made for it there (their logs and events too; exec, attach and port-forward
 * to them), and keep the ConfigMaps and Secrets its pods read. It cannot create a pod: it asks for
 * one (OffloadedPod).
 */
export const REMOTE_NAMESPACE_ROLE = "pulumi-liqo-remote-namespace";

/**
 * What the provider's agent may do in a namespace it made for a consumer, and nowhere else: create
 * the pods asked for and change their images, and keep the Services asked for and their endpoints.
 */
export const REMOTE_PODS_ROLE = "pulumi-liqo-remote-pods";

/**
 * What the consumer's agent may read in a namespace that is offloaded: the ConfigMaps and Secrets
 * its pods use, which it copies to the provider, and its Services and their endpoints, which it
 * asks the provider to hold; and it may ask for tokens of its pods' service accounts. Bound in
 * that namespace only, never cluster-wide: by whoever offloads it (the `NamespaceOffloading` steps, with the cluster's admin credentials),
 * or by the agent itself in a namespace an `OffloadingSelector` picks.
 */
export const REFLECTOR_ROLE = "pulumi-liqo-reflector";

/** The control agent's cluster-wide rules. */
const CONTROL_CLUSTER_RULES: Rule[] = [
  { apiGroups: [API_GROUP], resources: ["*"], verbs: ["*"] },
  // watch: a namespace made or labelled later may be offloaded by a selector (OffloadingSelector).
  { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch", "create", "patch", "delete"] },
  // The object quotas of tenant and remote namespaces (what a consumer may store there).
  { apiGroups: [""], resources: ["resourcequotas"], verbs: ["get", "create", "patch"] },
  // An offloading deleted by any path stops placing its namespace's pods first (pod-placement.ts):
  // by the API server's admission policies, or on 1.35 by the agent's own webhook.
  {
    apiGroups: ["admissionregistration.k8s.io"],
    resources: ["mutatingadmissionpolicies", "mutatingadmissionpolicybindings", "mutatingwebhookconfigurations"],
    verbs: ["delete"],
  },
  {
    apiGroups: [""],
    resources: ["nodes", "nodes/status"],
    verbs: ["get", "list", "watch", "create", "patch", "update", "delete"],
  },
  // Offloading. Provider side: the pods it runs for consumers. Consumer side: its pods bound to
  // virtual nodes (their status, their final removal, their events). The ConfigMaps and Secrets
  // they read it may read only in offloaded namespaces ({@link REFLECTOR_ROLE}).
  { apiGroups: [""], resources: ["pods"], verbs: [...READ, "delete"] },
  { apiGroups: [""], resources: ["pods/status"], verbs: ["get", "patch", "update"] },
  { apiGroups: ["", "events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
  // The virtual nodes' kubelet API asks, as a kubelet does, who its caller is (a bearer token, as
  // metrics-server presents) and whether it may reach the node.
  { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
  { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
  // A remote namespace's RoleBindings grant the consumer, and the agent itself, these ClusterRoles:
  // the agent creates pods only in namespaces it made for consumers. On a consumer, an
  // OffloadingSelector has it bind the reflector role in each namespace the selector picks.
  {
    apiGroups: ["rbac.authorization.k8s.io"],
    resources: ["clusterroles"],
    resourceNames: [REMOTE_NAMESPACE_ROLE, REMOTE_PODS_ROLE, REFLECTOR_ROLE],
    verbs: ["bind"],
  },
  // Volumes that follow their pods. Provider side: which StorageClass serves consumers' claims.
  // Consumer side: the volume it binds to each claim its provider holds, and removes after it.
  { apiGroups: ["storage.k8s.io"], resources: ["storageclasses"], verbs: ["get", "list"] },
  { apiGroups: [""], resources: ["persistentvolumes"], verbs: [...READ, "create", "patch", "delete"] },
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "create", "update", "delete"] },
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
];

/** Secrets and ConfigMaps of the system namespace: tokens' hashes, TLS, identities, cluster id. */
const CONTROL_SYSTEM_RULES: Rule[] = [
  { apiGroups: [""], resources: ["configmaps"], verbs: READ },
  { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch", "create", "patch", "update", "delete"] },
  // The address offloaded pods ask their names at (core/offloading/dns-names.ts).
  { apiGroups: [""], resources: ["services"], resourceNames: [CONSUMER_DNS_SERVICE], verbs: ["get"] },
];

const GATEWAY_CLUSTER_RULES: Rule[] = [
  { apiGroups: [API_GROUP], resources: ["tunnelendpoints"], verbs: [...READ, "patch", "update"] },
  { apiGroups: [API_GROUP], resources: ["tunnelendpoints/status"], verbs: ["get", "patch", "update"] },
  // Only the labels of tenant namespaces, to tell whose endpoint is whose.
  { apiGroups: [""], resources: ["namespaces"], verbs: ["list"] },
];

/**
 * The cluster identity (its id and CIDRs) and the key Secrets, made on first use and deleted with
 * their tunnel. `create` cannot be narrowed to names; every other verb could only be narrowed to
 * names not known in advance (one per tunnel).
 */
const GATEWAY_SYSTEM_RULES: Rule[] = [
  { apiGroups: [""], resources: ["configmaps"], resourceNames: [CLUSTER_IDENTITY_CONFIGMAP], verbs: ["get"] },
  { apiGroups: [""], resources: ["secrets"], verbs: ["get", "create", "patch", "delete"] },
  // The auth service's address, where the in-band relay leads the peer's agent.
  { apiGroups: [""], resources: ["services"], resourceNames: [AGENT_NAME], verbs: ["get"] },
];

const ROUTE_CLUSTER_RULES: Rule[] = [
  { apiGroups: [""], resources: ["nodes"], verbs: READ },
  { apiGroups: [API_GROUP], resources: ["tunnelendpoints"], verbs: READ },
];

/** The gateway's pods are in the system namespace: the route agent reads pods there only. */
const ROUTE_SYSTEM_RULES: Rule[] = [{ apiGroups: [""], resources: ["pods"], verbs: READ }];

/** The ClusterRole an offloaded namespace's RoleBinding grants the control agent. */
function forgeReflectorRole(): k8s.V1ClusterRole {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: REFLECTOR_ROLE, labels: componentLabels(AGENT_NAME) },
    rules: [
      { apiGroups: [""], resources: ["configmaps", "secrets", "services"], verbs: READ },
      // The claims of its pods bound for virtual nodes, which the provider holds (consumer-claims.ts).
      { apiGroups: [""], resources: ["persistentvolumeclaims"], verbs: READ },
      // The endpoints of the namespace's Services that stay here, which the provider's copies list.
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: READ },
      // The tokens of the offloaded pods' service accounts, each bound to its pod (consumer-tokens.ts).
      { apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] },
    ],
  };
}

/** Grants the control agent {@link REFLECTOR_ROLE} in offloaded namespace `namespace`. */
export function forgeReflectorBinding(namespace: string): k8s.V1RoleBinding {
  return forgeAgentBinding(REFLECTOR_ROLE, namespace);
}

/** The ClusterRole a remote namespace's RoleBinding grants the control agent. */
function forgeRemotePodsRole(): k8s.V1ClusterRole {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: REMOTE_PODS_ROLE, labels: componentLabels(AGENT_NAME) },
    rules: [
      // patch: a running pod's images follow its consumer's (the one change a running pod allows).
      { apiGroups: [""], resources: ["pods"], verbs: ["create", "patch"] },
      // The Services consumers ask for (ReflectedService), and the endpoints of theirs on the consumer.
      { apiGroups: [""], resources: ["services"], verbs: [...READ, "create", "update", "patch", "delete"] },
      {
        apiGroups: ["discovery.k8s.io"],
        resources: ["endpointslices"],
        verbs: [...READ, "create", "update", "patch", "delete"],
      },
      // The claims consumers ask for (ReflectedClaim), which their pods there mount.
      { apiGroups: [""], resources: ["persistentvolumeclaims"], verbs: [...READ, "create", "patch", "delete"] },
    ],
  };
}

/** Grants the control agent `role` in `namespace`. */
function forgeAgentBinding(role: string, namespace: string): k8s.V1RoleBinding {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: role, namespace, labels: componentLabels(AGENT_NAME) },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: [{ kind: "ServiceAccount", name: AGENT_NAME, namespace: SYSTEM_NAMESPACE }],
  };
}

/** Grants the control agent {@link REMOTE_PODS_ROLE} in remote namespace `namespace`. */
export function forgeRemotePodsBinding(namespace: string): k8s.V1RoleBinding {
  return forgeAgentBinding(REMOTE_PODS_ROLE, namespace);
}

/** The ClusterRole that each remote namespace's RoleBinding grants its consumer. */
function forgeRemoteNamespaceRole(): k8s.V1ClusterRole {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: REMOTE_NAMESPACE_ROLE, labels: componentLabels(AGENT_NAME) },
    rules: [
      { apiGroups: [""], resources: ["pods"], verbs: READ },
      { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
      // kubectl exec, attach (and run -i) and port-forward on the consumer reach its pods here.
      { apiGroups: [""], resources: ["pods/exec", "pods/attach", "pods/portforward"], verbs: ["get", "create"] },
      // The events of its pods there, which its agent copies onto the pods it sees (events.ts).
      { apiGroups: [""], resources: ["events"], verbs: READ },
      // Its pods' resource metrics, which its virtual node serves as a kubelet does (pod-metrics.ts).
      { apiGroups: ["metrics.k8s.io"], resources: ["pods"], verbs: ["get", "list"] },
      {
        apiGroups: [""],
        resources: ["configmaps", "secrets"],
        verbs: [...READ, "create", "update", "patch", "delete"],
      },
    ],
  };
}

/** One component's ServiceAccount, ClusterRole and Role (system namespace), each with its binding. */
function forgeComponentRbac(name: string, clusterRules: Rule[], systemRules: Rule[]): k8s.KubernetesObject[] {
  const labels = componentLabels(name);
  const subjects = [{ kind: "ServiceAccount", name, namespace: SYSTEM_NAMESPACE }];
  const rbac = "rbac.authorization.k8s.io";
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace: SYSTEM_NAMESPACE, labels } },
    {
      apiVersion: `${rbac}/v1`,
      kind: "ClusterRole",
      metadata: { name, labels },
      rules: clusterRules,
    } as k8s.V1ClusterRole,
    {
      apiVersion: `${rbac}/v1`,
      kind: "ClusterRoleBinding",
      metadata: { name, labels },
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name },
      subjects,
    } as k8s.V1ClusterRoleBinding,
    {
      apiVersion: `${rbac}/v1`,
      kind: "Role",
      metadata: { name, namespace: SYSTEM_NAMESPACE, labels },
      rules: systemRules,
    } as k8s.V1Role,
    {
      apiVersion: `${rbac}/v1`,
      kind: "RoleBinding",
      metadata: { name, namespace: SYSTEM_NAMESPACE, labels },
      roleRef: { apiGroup: rbac, kind: "Role", name },
      subjects,
    } as k8s.V1RoleBinding,
  ];
}

/** The control agent's reading of the cluster's client CA (to check identities on revoke): Kubernetes' own reader role. */
function forgeClientCaReaderBinding(): k8s.V1RoleBinding {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: AGENT_NAME, namespace: "kube-system", labels: componentLabels(AGENT_NAME) },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "extension-apiserver-authentication-reader" },
    subjects: [{ kind: "ServiceAccount", name: AGENT_NAME, namespace: SYSTEM_NAMESPACE }],
  };
}

/** Every ServiceAccount, role and binding of the three components, in apply order. */
export function forgeAgentRbac(): k8s.KubernetesObject[] {
  return [
    ...forgeComponentRbac(AGENT_NAME, CONTROL_CLUSTER_RULES, CONTROL_SYSTEM_RULES),
    forgeClientCaReaderBinding(),
    forgeRemoteNamespaceRole(),
    forgeReflectorRole(),
    forgeRemotePodsRole(),
    ...forgeComponentRbac(GATEWAY_NAME, GATEWAY_CLUSTER_RULES, GATEWAY_SYSTEM_RULES),
    ...forgeComponentRbac(ROUTE_NAME, ROUTE_CLUSTER_RULES, ROUTE_SYSTEM_RULES),
  ];
}

/** The components whose cluster-scoped RBAC uninstall removes (what is in the system namespace goes with it). */
export const RBAC_COMPONENTS = [AGENT_NAME, GATEWAY_NAME, ROUTE_NAME] as const;

/** ClusterRoles of the agent that no component is bound to (uninstall removes them too). */
export const UNBOUND_CLUSTER_ROLES = [REMOTE_NAMESPACE_ROLE, REFLECTOR_ROLE, REMOTE_PODS_ROLE] as const;
