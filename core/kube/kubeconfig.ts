/** Kubeconfig documents built from certificates: pure, no I/O. */

/** What a kubeconfig with one cluster, one client-certificate user and one context holds. */
export interface KubeconfigParts {
  /** Name used for the cluster, the user and the context. */
  readonly name: string;
  /** API server URL, e.g. `https://172.29.1.10:6443`. */
  readonly server: string;
  /** PEM of the CA that signed the API server's serving certificate. */
  readonly caPem: string;
  /** PEM of the client certificate. */
  readonly certPem: string;
  /** PEM of the client certificate's private key. */
  readonly keyPem: string;
  /** Name to verify the API server's certificate under, when `server`'s host is not one it names. */
  readonly tlsServerName?: string;
}

const base64 = (text: string): string => Buffer.from(text, "utf8").toString("base64");

/**
 * Builds a kubeconfig with the certificates embedded. It is emitted as JSON, which is valid YAML
 * and which every kubeconfig reader (kubectl, client-go, @kubernetes/client-node) accepts.
 */
export function forgeKubeconfig(parts: KubeconfigParts): string {
  return JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: parts.name,
          cluster: {
            server: parts.server,
            "certificate-authority-data": base64(parts.caPem),
            ...(parts.tlsServerName ? { "tls-server-name": parts.tlsServerName } : {}),
          },
        },
      ],
      users: [
        {
          name: parts.name,
          user: { "client-certificate-data": base64(parts.certPem), "client-key-data": base64(parts.keyPem) },
        },
      ],
      contexts: [{ name: parts.name, context: { cluster: parts.name, user: parts.name } }],
      "current-context": parts.name,
    },
    null,
    2,
  );
}
