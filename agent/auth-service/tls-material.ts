/**
 * The auth service's TLS material: its serving certificate and key, from the auth TLS Secret that
 * `Cluster` installs, and the cluster's client CA (to check identities that come back to renew or
 * revoke themselves), as the API server publishes it. Waited for at start, re-read while serving.
 */
import * as k8s from "@kubernetes/client-node";
import { AUTH_TLS_SECRET, SYSTEM_NAMESPACE } from "../../core/api/names.js";
import { readOptional, serverOf } from "../../core/kube/client.js";
import { poll } from "../../core/wait/poll.js";

/** TLS material the server needs. */
export interface TlsMaterial {
  /** Serving certificate (PEM). */
  readonly cert: string;
  /** Its key (PEM, secret). */
  readonly key: string;
  /** The cluster's client CA bundle (PEM); empty when unreadable. */
  readonly clientCa: string;
}

/**
 * Reads a serving certificate and key from the TLS Secret `name` of the system namespace (the auth
 * service's by default); undefined while the Secret is not there yet.
 */
export async function readServingTls(
  kc: k8s.KubeConfig,
  name: string = AUTH_TLS_SECRET,
): Promise<{ cert: string; key: string } | undefined> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const secret = await readOptional(() => core.readNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE }));
  const decode = (key: string): string => Buffer.from(secret?.data?.[key] ?? "", "base64").toString("utf8");
  const [cert, key] = [decode("tls.crt"), decode("tls.key")];
  return cert && key ? { cert, key } : undefined;
}

/** Reads the client CA the API server trusts (the signer of identities), as the API server publishes it. */
export async function readClientCa(kc: k8s.KubeConfig): Promise<string> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const cm = await readOptional(() =>
    core.readNamespacedConfigMap({ name: "extension-apiserver-authentication", namespace: "kube-system" }),
  );
  return cm?.data?.["client-ca-file"] ?? "";
}

/** Reads the whole material; undefined while the serving Secret is not there yet. */
export async function readTlsMaterial(kc: k8s.KubeConfig): Promise<TlsMaterial | undefined> {
  const serving = await readServingTls(kc);
  return serving ? { ...serving, clientCa: await readClientCa(kc) } : undefined;
}

/** Waits until the serving Secret exists (the Cluster installs it), then resolves the material. */
export function waitForTlsMaterial(kc: k8s.KubeConfig, step: string, timeoutMs: number): Promise<TlsMaterial> {
  return poll(
    { step, object: `Secret ${SYSTEM_NAMESPACE}/${AUTH_TLS_SECRET}`, endpoint: serverOf(kc) },
    { timeoutMs, intervalMs: 1_000 },
    async () => {
      const material = await readTlsMaterial(kc);
      return material
        ? { done: true, value: material }
        : { done: false, state: "Secret not found (is the Cluster installed?)" };
    },
  );
}

/** Whether `fresh` differs from what is served (`current`), so that the server must take it. */
export function tlsMaterialChanged(current: TlsMaterial, fresh: TlsMaterial): boolean {
  return fresh.cert !== current.cert || fresh.key !== current.key || fresh.clientCa !== current.clientCa;
}
