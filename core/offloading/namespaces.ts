/**
 * A consumer's namespaces on a provider (pure, no I/O): which names a consumer may ask for, and
 * the Namespace and RoleBinding the provider's agent makes for one.
 */
import type { V1Namespace, V1RoleBinding } from "@kubernetes/client-node";
import {
  consumerUserName,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  REMOTE_NAMESPACE_LABEL,
} from "../api/names.js";
import { REMOTE_NAMESPACE_ROLE } from "../cluster/agent-rbac.js";
import type { Refusal } from "./pod-policy.js";

/** Prefixes of names that belong to the provider's own system, never to a consumer. */
const RESERVED_PREFIXES = ["kube-", "pulumi-liqo-", "openshift-"];
const RESERVED_NAMES = new Set(["default", "kube-system", "kube-public", "kube-node-lease"]);
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Whether `namespace` is one the provider's agent made for consumer `consumerClusterId`. */
export function isRemoteNamespaceOf(namespace: V1Namespace | undefined, consumerClusterId: string): boolean {
  const labels = namespace?.metadata?.labels ?? {};
  return labels[REMOTE_NAMESPACE_LABEL] === "true" && labels[REMOTE_CLUSTER_LABEL] === consumerClusterId;
}

/**
 * Why consumer `consumerClusterId` may not have namespace `name` (`existing` is the namespace of
 * that name, if there is one), or undefined when it may: a valid name, not a system one, and not
 * a namespace that someone else (the provider, another consumer) already has.
 */
export function refuseRemoteNamespace(
  name: string,
  existing: V1Namespace | undefined,
  consumerClusterId: string,
): Refusal | undefined {
  if (name.length > 63 || !DNS_LABEL.test(name)) {
    return {
      reason: "Invalid",
      message: `"${name}" is not a valid namespace name (a DNS label of at most 63 characters)`,
    };
  }
  if (RESERVED_NAMES.has(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix))) {
    return { reason: "Reserved", message: `namespace "${name}" is reserved for the provider's own system` };
  }
  if (existing && !isRemoteNamespaceOf(existing, consumerClusterId)) {
    return {
      reason: "NameTaken",
      message: `namespace "${name}" already exists on the provider and is not this consumer's`,
    };
  }
  return undefined;
}

/** The namespace made for a consumer's request. */
export function forgeRemoteNamespace(name: string, consumerClusterId: string): V1Namespace {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      labels: {
        [MANAGED_BY_LABEL]: MANAGED_BY,
        [REMOTE_CLUSTER_LABEL]: consumerClusterId,
        [REMOTE_NAMESPACE_LABEL]: "true",
      },
    },
  };
}

/** Grants the consumer's identity, and nothing else, {@link REMOTE_NAMESPACE_ROLE} in its remote namespace. */
export function forgeRemoteNamespaceBinding(name: string, consumerClusterId: string): V1RoleBinding {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: {
      name: REMOTE_NAMESPACE_ROLE,
      namespace: name,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: consumerClusterId },
    },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: REMOTE_NAMESPACE_ROLE },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: consumerUserName(consumerClusterId) }],
  };
}
