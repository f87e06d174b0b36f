/**
 * The consumer's own records of a peering, in its system namespace: the identity issued by the
 * provider (a Secret, so the key never leaves the consumer cluster and never enters Pulumi state)
 * and the OutgoingPeering its agent keeps alive.
 */
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  SYSTEM_NAMESPACE,
  type IdentityStatus,
  type OutgoingPeering,
} from "../api/index.js";
import { certificateValidity } from "../authentication/identity.js";
import {
  deleteOptional,
  describeFailure,
  ensureObject,
  isNotFound,
  loadKubeconfig,
  readOptional,
  serverOf,
} from "../kube/client.js";
import { statusOf } from "../kube/errors.js";
import { forgeKubeconfig } from "../kube/kubeconfig.js";
import { releasePeeringClaim } from "./claim.js";

/** Name of the Secret holding the identity for provider `providerClusterId`. */
export const identitySecretName = (providerClusterId: string): string => `identity-${providerClusterId}`;
/** Name of the OutgoingPeering towards provider `providerClusterId`. */
export const outgoingPeeringName = (providerClusterId: string): string => `to-${providerClusterId}`;

/** Stores the identity's kubeconfig in the consumer cluster. */
export async function ensureIdentitySecret(
  consumer: k8s.KubeConfig,
  providerClusterId: string,
  kubeconfig: string,
): Promise<string> {
  const name = identitySecretName(providerClusterId);
  await ensureObject(consumer, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      namespace: SYSTEM_NAMESPACE,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: providerClusterId },
    },
    type: "Opaque",
    data: { kubeconfig: Buffer.from(kubeconfig, "utf8").toString("base64") },
  } as k8s.V1Secret).catch(
    describeFailure(`authentication: storing the identity Secret ${SYSTEM_NAMESPACE}/${name}`, serverOf(consumer)),
  );
  return name;
}

/** Reads the identity kubeconfig stored for provider `providerClusterId`, if any. */
export async function getIdentityKubeconfig(
  consumer: k8s.KubeConfig,
  providerClusterId: string,
): Promise<string | undefined> {
  const secret = await readOptional(() =>
    consumer
      .makeApiClient(k8s.CoreV1Api)
      .readNamespacedSecret({ name: identitySecretName(providerClusterId), namespace: SYSTEM_NAMESPACE }),
  );
  const data = secret?.data?.["kubeconfig"];
  return data ? Buffer.from(data, "base64").toString("utf8") : undefined;
}

/** An identity as the consumer holds it: its kubeconfig and the Secret's version it was read at. */
export interface StoredIdentity {
  /** The identity's kubeconfig (secret). */
  readonly kubeconfig: string;
  /** The Secret's resourceVersion: a replacement written against it fails if another writer came first. */
  readonly resourceVersion: string;
}

/** Reads the identity stored in Secret `secretName` of the system namespace, if any. */
export async function getStoredIdentity(
  consumer: k8s.KubeConfig,
  secretName: string,
): Promise<StoredIdentity | undefined> {
  const secret = await readOptional(() =>
    consumer.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ name: secretName, namespace: SYSTEM_NAMESPACE }),
  ).catch(describeFailure(`reading the identity Secret ${SYSTEM_NAMESPACE}/${secretName}`, serverOf(consumer)));
  const data = secret?.data?.["kubeconfig"];
  return data
    ? { kubeconfig: Buffer.from(data, "base64").toString("utf8"), resourceVersion: secret!.metadata!.resourceVersion! }
    : undefined;
}

/**
 * Replaces the identity in Secret `secretName` with `kubeconfig`, in one write, only if the Secret
 * is still at `resourceVersion`; resolves false when another writer (a `pulumi up` that
 * authenticated again) changed it meanwhile, and leaves that one in place.
 */
export async function replaceStoredIdentity(
  consumer: k8s.KubeConfig,
  secretName: string,
  resourceVersion: string,
  kubeconfig: string,
): Promise<boolean> {
  const core = consumer.makeApiClient(k8s.CoreV1Api);
  const current = await core
    .readNamespacedSecret({ name: secretName, namespace: SYSTEM_NAMESPACE })
    .catch(describeFailure(`reading the identity Secret ${SYSTEM_NAMESPACE}/${secretName}`, serverOf(consumer)));
  if (current.metadata?.resourceVersion !== resourceVersion) return false;
  try {
    await core.replaceNamespacedSecret({
      name: secretName,
      namespace: SYSTEM_NAMESPACE,
      body: { ...current, data: { ...current.data, kubeconfig: Buffer.from(kubeconfig, "utf8").toString("base64") } },
    });
    return true;
  } catch (error) {
    if (statusOf(error) === 409) return false;
    return describeFailure(
      `replacing the identity Secret ${SYSTEM_NAMESPACE}/${secretName}`,
      serverOf(consumer),
    )(error);
  }
}

/** The client certificate and key of an identity kubeconfig (secret), `input` naming where it came from. */
export function heldCertificateOf(
  kubeconfig: string,
  input: string,
): { readonly certificatePem: string; readonly keyPem: string } {
  const user = loadKubeconfig(kubeconfig, input).getCurrentUser()!;
  const decode = (data: string | undefined): string => Buffer.from(data ?? "", "base64").toString("utf8");
  return { certificatePem: decode(user.certData), keyPem: decode(user.keyData) };
}

/** The same identity kubeconfig with its client certificate replaced by a renewed one (no I/O). */
export function withRenewedCertificate(kubeconfig: string, certificatePem: string, input: string): string {
  const kc = loadKubeconfig(kubeconfig, input);
  const cluster = kc.getCurrentCluster()!;
  return forgeKubeconfig({
    name: kc.getCurrentContext(),
    server: cluster.server,
    caPem: Buffer.from(cluster.caData ?? "", "base64").toString("utf8"),
    certPem: certificatePem,
    keyPem: heldCertificateOf(kubeconfig, input).keyPem,
    ...(cluster.tlsServerName ? { tlsServerName: cluster.tlsServerName } : {}),
  });
}

/** When the identity the consumer holds for provider `providerClusterId` expires (RFC 3339), if it holds one. */
export async function getIdentityExpiresAt(
  consumer: k8s.KubeConfig,
  providerClusterId: string,
): Promise<string | undefined> {
  const text = await getIdentityKubeconfig(consumer, providerClusterId);
  return text ? identityExpiryOf(text, providerClusterId) : undefined;
}

/** When the identity kubeconfig `text`, held for provider `providerClusterId`, expires (RFC 3339). */
export function identityExpiryOf(text: string, providerClusterId: string): string {
  const input = `Secret ${SYSTEM_NAMESPACE}/${identitySecretName(providerClusterId)}`;
  return certificateValidity(heldCertificateOf(text, input).certificatePem).notAfter.toISOString();
}

/** Records the peering for the consumer's agent (heartbeat, offer following). */
export async function ensureOutgoingPeering(consumer: k8s.KubeConfig, spec: OutgoingPeering["spec"]): Promise<void> {
  const peering: OutgoingPeering = {
    apiVersion: API_GROUP_VERSION,
    kind: "OutgoingPeering",
    metadata: {
      name: outgoingPeeringName(spec.providerClusterId),
      namespace: SYSTEM_NAMESPACE,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: spec.providerClusterId },
    },
    spec,
  };
  await ensureObject(consumer, peering).catch(
    describeFailure(`virtual node: recording OutgoingPeering ${peering.metadata.name}`, serverOf(consumer)),
  );
}

/** Removes the consumer's records of the peering (OutgoingPeering, the identity Secret, then the claim on the pair). */
export async function deleteConsumerRecords(consumer: k8s.KubeConfig, providerClusterId: string): Promise<void> {
  const custom = consumer.makeApiClient(k8s.CustomObjectsApi);
  const core = consumer.makeApiClient(k8s.CoreV1Api);
  const fail = describeFailure(
    `cleanup: removing the records of the peering with ${providerClusterId}`,
    serverOf(consumer),
  );
  await deleteOptional(() =>
    custom.deleteNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: SYSTEM_NAMESPACE,
      plural: "outgoingpeerings",
      name: outgoingPeeringName(providerClusterId),
    }),
  ).catch(fail);
  await deleteOptional(() =>
    core.deleteNamespacedSecret({ name: identitySecretName(providerClusterId), namespace: SYSTEM_NAMESPACE }),
  ).catch(fail);
  await releasePeeringClaim(consumer, providerClusterId);
}

/** The OutgoingPeerings of this cluster, or none while the CRD is not installed. */
export async function listOutgoingPeerings(kc: k8s.KubeConfig): Promise<OutgoingPeering[]> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  try {
    const list = (await api.listNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: SYSTEM_NAMESPACE,
      plural: "outgoingpeerings",
    })) as { items: OutgoingPeering[] };
    return list.items;
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
}

/**
 * What still uses a cluster in peerings: its outgoing peerings (as consumer) and the tenant
 * namespaces of its consumers (as provider). Empty when the cluster can be uninstalled.
 */
export async function getPeeringsUsing(kc: k8s.KubeConfig): Promise<string[]> {
  const outgoing = (await listOutgoingPeerings(kc)).map(
    (p) => `outgoing peering to ${p.spec.providerClusterName} (${p.spec.providerClusterId})`,
  );
  const namespaces = await kc
    .makeApiClient(k8s.CoreV1Api)
    .listNamespace({ labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY},${REMOTE_CLUSTER_LABEL}` });
  const incoming = namespaces.items.map(
    (ns) =>
      `incoming peering from consumer ${ns.metadata?.labels?.[REMOTE_CLUSTER_LABEL]} (namespace ${ns.metadata?.name})`,
  );
  return [...outgoing, ...incoming];
}

/** Writes an OutgoingPeering's status (merge patch on the status subresource). */
export async function writeOutgoingPeeringStatus(
  kc: k8s.KubeConfig,
  peering: OutgoingPeering,
  status: NonNullable<OutgoingPeering["status"]>,
): Promise<void> {
  const name = peering.metadata.name!;
  await kc
    .makeApiClient(k8s.CustomObjectsApi)
    .patchNamespacedCustomObjectStatus(
      {
        group: API_GROUP,
        version: API_VERSION,
        namespace: SYSTEM_NAMESPACE,
        plural: "outgoingpeerings",
        name,
        body: { status: { message: null, ...status } },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )
    .catch(describeFailure(`writing the status of OutgoingPeering ${SYSTEM_NAMESPACE}/${name}`, serverOf(kc)));
}

/** Reads the OutgoingPeering towards provider `providerClusterId`, if any. */
export async function getOutgoingPeering(
  kc: k8s.KubeConfig,
  providerClusterId: string,
): Promise<OutgoingPeering | undefined> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const name = outgoingPeeringName(providerClusterId);
  return (await readOptional(() =>
    api.getNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: SYSTEM_NAMESPACE,
      plural: "outgoingpeerings",
      name,
    }),
  ).catch(describeFailure(`reading OutgoingPeering ${SYSTEM_NAMESPACE}/${name}`, serverOf(kc)))) as
    OutgoingPeering | undefined;
}

/** Merges `identity` into an OutgoingPeering's `status.identity` (a null field is removed), leaving the rest of its status alone. */
export async function writeIdentityStatus(
  kc: k8s.KubeConfig,
  name: string,
  identity: { readonly [K in keyof IdentityStatus]: IdentityStatus[K] | null },
): Promise<void> {
  await kc
    .makeApiClient(k8s.CustomObjectsApi)
    .patchNamespacedCustomObjectStatus(
      {
        group: API_GROUP,
        version: API_VERSION,
        namespace: SYSTEM_NAMESPACE,
        plural: "outgoingpeerings",
        name,
        body: { status: { identity } },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )
    .catch(describeFailure(`writing the identity status of OutgoingPeering ${SYSTEM_NAMESPACE}/${name}`, serverOf(kc)));
}
