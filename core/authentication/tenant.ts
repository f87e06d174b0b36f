/**
 * The provider's side of a consumer: its tenant namespace and the RBAC that is all its identity may
 * do there. Run by the auth service on the provider cluster.
 */
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  consumerUserName,
  tenantNamespace,
} from "../api/names.js";
import { deleteOptional, describeFailure, ensureObject, readOptional, serverOf } from "../kube/client.js";
import { poll } from "../wait/poll.js";
import { forgeTenantQuota } from "./tenant-quota.js";

const STEP = "authentication";

/** Name of the Role and RoleBinding of a tenant namespace. */
export const TENANT_ROLE = "pulumi-liqo-consumer";

/** Annotation recording the consumer's human-readable name (labels cannot hold any text). */
export const CONSUMER_NAME_ANNOTATION = `${API_GROUP}/remote-cluster-name`;

const tenantLabels = (consumerClusterId: string): Record<string, string> => ({
  [MANAGED_BY_LABEL]: MANAGED_BY,
  [REMOTE_CLUSTER_LABEL]: consumerClusterId,
});

/**
 * Annotation recording the fingerprint of the key the consumer's identity is bound to: identities
 * are issued for, and revocations accepted from, that key only, whatever token is presented.
 */
export const CONSUMER_KEY_ANNOTATION = `${API_GROUP}/consumer-key-sha256`;

/** Input of {@link ensureTenantNamespace}. */
export interface TenantArgs {
  /** The consumer's cluster id. */
  readonly consumerClusterId: string;
  /** The consumer's human-readable name, kept as an annotation. */
  readonly consumerClusterName: string;
  /** Fingerprint of the consumer's identity key, kept as an annotation. */
  readonly consumerKeySha256: string;
}

/** Creates (or keeps) the consumer's tenant namespace. Resolves its name. */
export async function ensureTenantNamespace(kc: k8s.KubeConfig, args: TenantArgs): Promise<string> {
  const name = tenantNamespace(args.consumerClusterId);
  await ensureObject(kc, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      labels: tenantLabels(args.consumerClusterId),
      annotations: {
        [CONSUMER_NAME_ANNOTATION]: args.consumerClusterName,
        [CONSUMER_KEY_ANNOTATION]: args.consumerKeySha256,
      },
    },
  }).catch(describeFailure(`${STEP}: applying tenant Namespace ${name}`, serverOf(kc)));
  return name;
}

/**
 * The key fingerprint consumer `consumerClusterId`'s tenant is bound to: undefined when it has no
 * tenant here (or one made before tenants recorded it), so that any key may take it.
 */
export async function getTenantKeyFingerprint(
  kc: k8s.KubeConfig,
  consumerClusterId: string,
): Promise<string | undefined> {
  const name = tenantNamespace(consumerClusterId);
  const namespace = await readOptional(() => kc.makeApiClient(k8s.CoreV1Api).readNamespace({ name })).catch(
    describeFailure(`${STEP}: reading tenant Namespace ${name}`, serverOf(kc)),
  );
  // Only a namespace this project made for that consumer is its tenant.
  if (namespace?.metadata?.labels?.[REMOTE_CLUSTER_LABEL] !== consumerClusterId) return undefined;
  return namespace.metadata.annotations?.[CONSUMER_KEY_ANNOTATION];
}

/**
 * The rights of a tenant namespace's Role: the consumer manages its ResourceRequests and reads the
 * offers answered to it, manages the spec of its TunnelEndpoint (the provider's gateway writes the
 * status), and asks for namespaces, pods and Services (RemoteNamespace, OffloadedPod,
 * ReflectedService; the provider's agent answers); nothing else (no Secrets, no Pods, no status
 * subresources).
 */
export const TENANT_RULES: readonly k8s.V1PolicyRule[] = [
  {
    apiGroups: [API_GROUP],
    resources: ["resourcerequests"],
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
  },
  { apiGroups: [API_GROUP], resources: ["resourceoffers"], verbs: ["get", "list", "watch"] },
  {
    apiGroups: [API_GROUP],
    resources: ["tunnelendpoints"],
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
  },
  // Offloading: the consumer asks for namespaces, pods, Services and claims; the provider's agent answers in their status.
  {
    apiGroups: [API_GROUP],
    resources: ["remotenamespaces", "offloadedpods", "reflectedservices", "reflectedclaims"],
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
  },
];

/** The Role of consumer `consumerClusterId`'s tenant namespace: {@link TENANT_RULES}. */
export function forgeTenantRole(consumerClusterId: string): k8s.V1Role {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: {
      name: TENANT_ROLE,
      namespace: tenantNamespace(consumerClusterId),
      labels: tenantLabels(consumerClusterId),
    },
    rules: TENANT_RULES.map((rule) => ({ ...rule })),
  };
}

/** Binds {@link forgeTenantRole} to the consumer's user name, and to nothing else (no group, no ServiceAccount). */
export function forgeTenantRoleBinding(consumerClusterId: string): k8s.V1RoleBinding {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: {
      name: TENANT_ROLE,
      namespace: tenantNamespace(consumerClusterId),
      labels: tenantLabels(consumerClusterId),
    },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: TENANT_ROLE },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: consumerUserName(consumerClusterId) }],
  };
}

/** Applies the tenant Role and RoleBinding (server-side apply: a second run converges). */
export async function ensureTenantRbac(kc: k8s.KubeConfig, consumerClusterId: string): Promise<void> {
  const endpoint = serverOf(kc);
  const namespace = tenantNamespace(consumerClusterId);
  await ensureObject(kc, forgeTenantRole(consumerClusterId)).catch(
    describeFailure(`${STEP}: applying Role ${namespace}/${TENANT_ROLE}`, endpoint),
  );
  await ensureObject(kc, forgeTenantRoleBinding(consumerClusterId)).catch(
    describeFailure(`${STEP}: applying RoleBinding ${namespace}/${TENANT_ROLE}`, endpoint),
  );
}

/**
 * The consumers whose tenants `namespaces` hold: a namespace is a tenant only when it is named for
 * the consumer its label names and labelled as this project's (a namespace someone else labelled,
 * or named like a tenant without the labels, is none). Pure, for {@link reconcileTenants}.
 */
export function tenantsAmong(namespaces: readonly k8s.V1Namespace[]): string[] {
  return namespaces
    .map((namespace) => ({ name: namespace.metadata?.name, labels: namespace.metadata?.labels ?? {} }))
    .filter(({ name, labels }) => {
      const consumer = labels[REMOTE_CLUSTER_LABEL];
      return labels[MANAGED_BY_LABEL] === MANAGED_BY && consumer !== undefined && name === tenantNamespace(consumer);
    })
    .map(({ labels }) => labels[REMOTE_CLUSTER_LABEL]!)
    .sort();
}

/** The consumers this cluster holds a tenant of ({@link tenantsAmong} of the labelled namespaces). Errors are the client's. */
export async function listTenants(kc: k8s.KubeConfig): Promise<string[]> {
  const listed = await kc
    .makeApiClient(k8s.CoreV1Api)
    .listNamespace({ labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY},${REMOTE_CLUSTER_LABEL}` });
  return tenantsAmong(listed.items);
}

/**
 * Brings every tenant of this cluster to this release's quota, Role and RoleBinding: an identity
 * keeps the rights its first authentication gave it, so a tenant made by an earlier release lacks
 * the kinds added since until this runs (each `Cluster` install and update does). Resolves the
 * consumers it reconciled.
 */
export async function reconcileTenants(kc: k8s.KubeConfig, step: string): Promise<string[]> {
  const endpoint = serverOf(kc);
  const consumers = await listTenants(kc).catch(describeFailure(`${step}: listing the tenant namespaces`, endpoint));
  for (const consumer of consumers) {
    const namespace = tenantNamespace(consumer);
    await ensureObject(kc, forgeTenantQuota(consumer)).catch(
      describeFailure(`${step}: applying the quota of tenant ${namespace}`, endpoint),
    );
    await ensureTenantRbac(kc, consumer);
  }
  return consumers;
}

/** Knobs of {@link removeTenant}. */
export interface RemoveTenantOptions {
  /** How long to wait for the namespace to be gone. @default 60000 */
  readonly timeoutMs?: number;
  /** The operation's shared deadline. */
  readonly signal?: AbortSignal;
}

/** What {@link removeTenant} returns. */
export interface RemoveTenantResult {
  /** Whether anything existed to remove. */
  readonly removed: boolean;
  /** The tenant namespace. */
  readonly tenantNamespace: string;
}

/**
 * Removes everything of a consumer on the provider: its RoleBinding first (Kubernetes cannot revoke
 * a client certificate, so cutting its RBAC is what ends its access, at once rather than when the
 * namespace controller gets to it), then its tenant namespace (requests and offers inside go with
 * it), then its CSRs; waits until the namespace is gone. Idempotent.
 */
export async function removeTenant(
  kc: k8s.KubeConfig,
  consumerClusterId: string,
  options: RemoveTenantOptions = {},
): Promise<RemoveTenantResult> {
  const endpoint = serverOf(kc);
  const namespace = tenantNamespace(consumerClusterId);
  const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const certificates = kc.makeApiClient(k8s.CertificatesV1Api);
  const boundRemoved = await deleteOptional(() =>
    rbac.deleteNamespacedRoleBinding({ name: TENANT_ROLE, namespace }),
  ).catch(describeFailure(`${STEP}: deleting RoleBinding ${namespace}/${TENANT_ROLE}`, endpoint));
  const namespaceRemoved = await deleteOptional(() => core.deleteNamespace({ name: namespace })).catch(
    describeFailure(`${STEP}: deleting Namespace ${namespace}`, endpoint),
  );
  const csrs = await certificates
    .listCertificateSigningRequest({
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY},${REMOTE_CLUSTER_LABEL}=${consumerClusterId}`,
    })
    .catch(describeFailure(`${STEP}: listing CSRs of consumer ${consumerClusterId}`, endpoint));
  for (const csr of csrs.items) {
    await deleteOptional(() => certificates.deleteCertificateSigningRequest({ name: csr.metadata!.name! })).catch(
      describeFailure(`${STEP}: deleting CertificateSigningRequest ${csr.metadata!.name!}`, endpoint),
    );
  }
  await poll(
    { step: STEP, object: `tenant Namespace ${namespace} deleted`, endpoint },
    { timeoutMs: options.timeoutMs ?? 60_000, signal: options.signal },
    async () => {
      const live = await readOptional(() => core.readNamespace({ name: namespace }));
      return live
        ? { done: false, state: `phase ${live.status?.phase ?? "unknown"}` }
        : { done: true, value: undefined };
    },
  );
  return { removed: boundRemoved || namespaceRemoved || csrs.items.length > 0, tenantNamespace: namespace };
}

/** What a renewal needs to know of a consumer's tenant. */
export interface TenantStanding {
  /** The key fingerprint the tenant is bound to; undefined for a tenant made before tenants recorded one. */
  readonly keySha256?: string;
  /** Whether the consumer may still act there: the namespace is not being deleted and its RoleBinding is in place. */
  readonly active: boolean;
}

/**
 * Consumer `consumerClusterId`'s tenant as a renewal sees it; undefined when it has none here
 * (revoked, or never peered). A revocation removes the RoleBinding first and then the namespace,
 * so a tenant half-way through that is not active.
 */
export async function getTenantStanding(
  kc: k8s.KubeConfig,
  consumerClusterId: string,
): Promise<TenantStanding | undefined> {
  const name = tenantNamespace(consumerClusterId);
  const endpoint = serverOf(kc);
  const namespace = await readOptional(() => kc.makeApiClient(k8s.CoreV1Api).readNamespace({ name })).catch(
    describeFailure(`${STEP}: reading tenant Namespace ${name}`, endpoint),
  );
  if (namespace?.metadata?.labels?.[REMOTE_CLUSTER_LABEL] !== consumerClusterId) return undefined;
  const binding = await readOptional(() =>
    kc.makeApiClient(k8s.RbacAuthorizationV1Api).readNamespacedRoleBinding({ name: TENANT_ROLE, namespace: name }),
  ).catch(describeFailure(`${STEP}: reading RoleBinding ${name}/${TENANT_ROLE}`, endpoint));
  const keySha256 = namespace.metadata.annotations?.[CONSUMER_KEY_ANNOTATION];
  return {
    ...(keySha256 ? { keySha256 } : {}),
    active: namespace.status?.phase !== "Terminating" && binding !== undefined,
  };
}
