/**
 * The identity a consumer holds for each provider: the kubeconfig the provider's auth service
 * issued, kept in a Secret of the consumer's system namespace, so the key never leaves the consumer
 * cluster and never enters Pulumi state. The peering steps store it; the tunnel, the offloading and
 * the agent's renewal reach the provider through it.
 */
import * as k8s from "@kubernetes/client-node";
import { MANAGED_BY, MANAGED_BY_LABEL, REMOTE_CLUSTER_LABEL, SYSTEM_NAMESPACE } from "../api/index.js";
import { describeFailure, ensureObject, loadKubeconfig, readOptional, serverOf } from "../kube/client.js";
import { statusOf } from "../kube/errors.js";
import { forgeKubeconfig } from "../kube/kubeconfig.js";
import { certificateValidity } from "./identity.js";

/** Name of the Secret holding the identity for provider `providerClusterId`. */
export const identitySecretName = (providerClusterId: string): string => `identity-${providerClusterId}`;

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
