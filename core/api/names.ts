/**
 * The names this project puts into clusters: its API group, namespaces, well-known objects and
 * labels. One place, so that the provider steps, the agent and the tests agree on them.
 */

/** API group of the project's custom resources (never one of Liqo's own `*.liqo.io` groups). */
export const API_GROUP = "peering.pulumi-liqo.dev";
/** Version of the custom resources. */
export const API_VERSION = "v1alpha1";
/** `group/version`, as objects carry it in `apiVersion`. */
export const API_GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;

/** Namespace holding the project's own objects in every participating cluster. */
export const SYSTEM_NAMESPACE = "pulumi-liqo-system";
/** ConfigMap in {@link SYSTEM_NAMESPACE} holding the cluster's stable id and name. */
export const CLUSTER_IDENTITY_CONFIGMAP = "cluster-identity";
/** Secret in {@link SYSTEM_NAMESPACE} holding the auth service's TLS certificate and key. */
export const AUTH_TLS_SECRET = "auth-service-tls";
/** Lease in {@link SYSTEM_NAMESPACE} that the agent renews while it runs. */
export const AGENT_LEASE = "agent";

/**
 * The Service in front of the agent's placement webhook, where the API server serves no
 * MutatingAdmissionPolicy (core/offloading/placement-webhook.ts).
 */
export const PLACEMENT_SERVICE = "pulumi-liqo-placement";
/** Secret in the system namespace: the listener's certificate and key, and the CA the API server checks it with. */
export const PLACEMENT_TLS_SECRET = "placement-webhook-tls";
/** The name the listener's certificate carries: the one the API server dials the Service by. */
export const PLACEMENT_TLS_NAME = `${PLACEMENT_SERVICE}.${SYSTEM_NAMESPACE}.svc`;
/** The agent pod's port the listener serves on (the Service's 443 forwards to it). */
export const PLACEMENT_PORT = 9443;
/** Label marking every object this project creates, so that cleanup and leak checks find them. */
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
/** Value of {@link MANAGED_BY_LABEL}. */
export const MANAGED_BY = "pulumi-liqo";
/** Label on peering tokens' Secrets. */
export const TOKEN_LABEL = `${API_GROUP}/peering-token`;
/** Label naming the remote cluster an object belongs to. */
export const REMOTE_CLUSTER_LABEL = `${API_GROUP}/remote-cluster-id`;
/**
 * Label on a namespace the provider's agent made for a consumer's offloaded namespace: the
 * offloading makes and finds them by it, and the install's guard of them binds to it.
 */
export const REMOTE_NAMESPACE_LABEL = `${API_GROUP}/remote-namespace`;

/** Namespace on a provider that holds everything of one consumer (its tenant namespace). */
export function tenantNamespace(consumerClusterId: string): string {
  return `pulumi-liqo-tenant-${consumerClusterId}`;
}

/**
 * The only subject a consumer's identity may carry: its user name on the provider. No groups are
 * ever granted, so RBAC bound to this name is all the identity can do.
 */
export function consumerUserName(consumerClusterId: string): string {
  return `pulumi-liqo:consumer:${consumerClusterId}`;
}

/**
 * `"b-to-a" (stack dev, project demo)` from a resource's URN, as this project records owners
 * (`urn:pulumi:<stack>::<project>::<type>::<name>`); the URN itself when it has another shape.
 */
export function describeOwner(urn: string): string {
  const parts = urn.split("::");
  const stack = parts[0]?.split(":")[2];
  const name = parts[parts.length - 1];
  return parts.length >= 4 && stack && name ? `"${name}" (stack ${stack}, project ${parts[1]})` : urn;
}

/**
 * Whether the resource of URN `owner` may take what the clusters record as `holder`'s: nothing is
 * recorded, it is its own, or it is what `owner` took over by an import (`takenFrom`). Without an
 * owner (a caller outside the engine) nothing is checked.
 */
export function mayTake(holder: string | undefined, owner: string | undefined, takenFrom?: string): boolean {
  return !owner || !holder || holder === owner || holder === takenFrom;
}

const CLUSTER_ID_PATTERN = /^[0-9a-f]{16}$/;

/** Whether `value` has the shape of a cluster id (16 lowercase hex characters). */
export function isClusterId(value: unknown): value is string {
  return typeof value === "string" && CLUSTER_ID_PATTERN.test(value);
}
