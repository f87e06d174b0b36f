/**
 * Authentication, the consumer's side, as the protocol reads:
 *
 * 1. consumer: {@link forgeIdentityRequest} makes a key and a CSR for its own user name;
 * 2. consumer -> provider's auth service: {@link requestIdentity} presents the token and the CSR;
 *    the service checks both, has its cluster sign the CSR and grants the tenant's RBAC;
 * 3. consumer: {@link forgeIdentityKubeconfig} turns the identity into a kubeconfig for the provider;
 * 4. before it expires, consumer -> auth service: {@link renewIdentity}, authenticated by the
 *    identity itself, trades it for a new certificate of the same key;
 * 5. on unpeer, consumer -> auth service: {@link revokeIdentity}, authenticated by the identity itself.
 */
import forge from "node-forge";
import { X509Certificate } from "node:crypto";
import { consumerUserName } from "../api/names.js";
import { forgeRsaKeyPem } from "./consumer-key.js";
import { forgeKubeconfig } from "../kube/kubeconfig.js";
import { nativeSigner } from "../pki/x509.js";
import { startDeadline } from "../wait/deadline.js";
import { poll, type CheckResult } from "../wait/poll.js";
import {
  parseAuthUrl,
  postToAuthService,
  probeAuthService,
  type AuthAnswer,
  type AuthEndpoint,
} from "./auth-client.js";
import {
  IDENTITY_PATH,
  RENEW_PATH,
  REVOKE_PATH,
  type ErrorBody,
  type IdentityRequestBody,
  type IdentityResponseBody,
  type RenewRequestBody,
  type RenewResponseBody,
  type RevokeResponseBody,
} from "./protocol.js";
import { classifyConnectionError } from "../kube/errors.js";

const STEP = "authentication";

/** A key and a certificate request, made by the consumer; the key never leaves its cluster. */
export interface IdentityRequest {
  /** PEM PKCS#1 RSA private key (secret). */
  readonly keyPem: string;
  /** PEM PKCS#10 request, subject exactly `CN=<consumerUserName(id)>`. */
  readonly csrPem: string;
}

/**
 * A CSR whose subject is exactly the consumer's user name (no O, since Kubernetes reads O as groups
 * and the provider refuses any), signed with `keyPem`: the consumer cluster's identity key
 * ({@link ./consumer-key.ts}), which the provider binds the token to; a fresh key when none is
 * given (a cluster that is not installed, as tests have). Pure apart from that key's randomness.
 */
export function forgeIdentityRequest(consumerClusterId: string, keyPem: string = forgeRsaKeyPem()): IdentityRequest {
  const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  const csr = forge.pki.createCertificationRequest();
  csr.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  csr.setSubject([{ name: "commonName", value: consumerUserName(consumerClusterId) }]);
  csr.sign(nativeSigner(keyPem), forge.md.sha256.create());
  return { keyPem, csrPem: forge.pki.certificationRequestToPem(csr) };
}

/** What the consumer needs to act on the provider, as the auth service answered. */
export interface Identity {
  /** PEM client certificate signed by the provider cluster's client CA. */
  readonly certificatePem: string;
  /** Provider's API server URL as peers reach it. */
  readonly apiServerUrl: string;
  /** PEM CA of the provider API server's serving certificate. */
  readonly apiServerCaPem: string;
  /** The consumer's tenant namespace on the provider: the only place it may act. */
  readonly tenantNamespace: string;
  /** Provider's cluster id. */
  readonly providerClusterId: string;
  /** Provider's cluster name. */
  readonly providerClusterName: string;
}

/**
 * How long a call to the auth service may take, and what it says while it waits: the retry policy
 * of every request to it. Connection failures and 5xx answers (a service starting up) are retried
 * until the deadline; a 429 (the service throttling refused requests) is retried after its
 * `Retry-After` while the deadline allows (a `Retry-After` past it ends the call at once, with the
 * 429's reason); any other refusal (4xx) ends at once.
 */
export interface AuthCallBounds {
  /** Give up after this long. */
  readonly timeoutMs: number;
  /** The operation's shared deadline: ends the call early. */
  readonly signal?: AbortSignal;
  /** Told each time a 429 is retried, with why and when: a resource shows it on its row. */
  readonly onRetry?: (message: string) => void;
}

/** Input of {@link requestIdentity}. */
export interface RequestIdentityArgs extends AuthCallBounds {
  /** The provider's auth service. @example "https://172.29.1.10:7443" */
  readonly authUrl: string;
  /** PEM CA that signed the auth service's certificate (from the provider's token outputs). */
  readonly authCaPem: string;
  /** Name to verify the auth service's certificate under (in-band). @default the URL's host */
  readonly authServerName?: string;
  /** The peering token (secret). @example "plt_3f9a0c1d2e4b5a69_…" */
  readonly token: string;
  /** The consumer's cluster id. */
  readonly consumerClusterId: string;
  /** The consumer's cluster name. */
  readonly consumerClusterName: string;
  /** From {@link forgeIdentityRequest}. */
  readonly csrPem: string;
}

/** Pause between two attempts while the service is unreachable or failing. */
const RETRY_INTERVAL_MS = 1_000;

/** `refused with HTTP 403: peering token refused` from an answer, without echoing anything unexpected. */
function describeAnswer(answer: AuthAnswer): string {
  const reason = (answer.body as { error?: unknown } | undefined)?.error;
  const text = typeof reason === "string" && reason.trim() ? reason.trim().slice(0, 500) : "no reason given";
  const retry = answer.retryAfterSeconds !== undefined ? ` (retry after ${answer.retryAfterSeconds} s)` : "";
  return `HTTP ${answer.status}: ${text}${retry}`;
}

/** A network error as one line: `connect ECONNREFUSED 127.0.0.1:1`. */
function describeNetworkError(error: unknown): string {
  const e = error as NodeJS.ErrnoException | undefined;
  return e?.message?.split("\n")[0] ?? String(error);
}

/**
 * A 429 (the service throttling refused requests) as a state to wait in: look again after its
 * `Retry-After` (1 s when it gives none, an hour at most). Pure. The provider's words are quoted
 * bounded (see describeAnswer); whom it says it throttles is repeated only when it reads as such.
 */
export function throttledState(answer: AuthAnswer): { readonly state: string; readonly retryAfterMs: number } {
  const retryAfterMs = Math.min(Math.max(answer.retryAfterSeconds ?? 1, 1), 3_600) * 1000;
  const seen = /from (address [0-9a-fA-F:.]{2,45}|token id [0-9a-f]{1,64}|consumer [0-9a-z-]{1,64})[;\s]/.exec(
    String((answer.body as { error?: unknown } | undefined)?.error ?? ""),
  )?.[1];
  return {
    state:
      `throttled, ${describeAnswer(answer)}: the provider is being flooded with refused requests` +
      (seen ? ` and throttles those it sees from ${seen}` : ""),
    retryAfterMs,
  };
}

/**
 * Calls the auth service until it answers for good or the time is up: the retry policy of every
 * request (see {@link AuthCallBounds}).
 */
async function callAuthService<T>(
  what: string,
  endpoint: AuthEndpoint,
  options: AuthCallBounds,
  send: (attemptTimeoutMs: number) => Promise<AuthAnswer>,
  accept: (answer: AuthAnswer) => CheckResult<T>,
): Promise<T> {
  const deadline = startDeadline(options.timeoutMs);
  return poll(
    { step: STEP, object: what, endpoint: `auth service ${endpoint.url.origin} (${endpoint.hostPort})` },
    { timeoutMs: options.timeoutMs, intervalMs: RETRY_INTERVAL_MS, signal: options.signal },
    async (): Promise<CheckResult<T>> => {
      let answer: AuthAnswer;
      try {
        answer = await send(deadline.left());
      } catch (error) {
        // The service's certificate failing verification (wrong CA, wrong name, expired) will not
        // fix itself by retrying: it ends the call at once.
        const fault = classifyConnectionError(error)?.fault;
        if (fault?.startsWith("TLS: ") && fault !== "TLS: client certificate refused")
          return {
            failed: true,
            reason: `its TLS certificate does not verify against the given auth CA: ${describeNetworkError(error)}`,
          };
        return { done: false, state: describeNetworkError(error) };
      }
      // A failure the service says asking again will not cure ends the wait with its reason.
      if (answer.status >= 500 && (answer.body as Partial<ErrorBody> | undefined)?.terminal === true)
        return { failed: true, reason: describeAnswer(answer) };
      if (answer.status >= 500) return { done: false, state: describeAnswer(answer) };
      if (answer.status === 429) {
        const throttled = throttledState(answer);
        const leftMs = deadline.left();
        // Waiting past the deadline would end in the same 429: say so now.
        if (throttled.retryAfterMs >= leftMs)
          return {
            failed: true,
            reason:
              `${throttled.state}; it asks to retry after ${throttled.retryAfterMs / 1000} s, past this step's deadline ` +
              `(${Math.floor(leftMs / 1000)} s left): run it again once the flood has stopped`,
          };
        options.onRetry?.(`${throttled.state}; retrying in ${throttled.retryAfterMs / 1000} s`);
        return { done: false, ...throttled };
      }
      if (answer.status !== 200) return { failed: true, reason: `refused, ${describeAnswer(answer)}` };
      return accept(answer);
    },
  );
}

const isText = (value: unknown): value is string => typeof value === "string" && value !== "";

/**
 * Checks that the issued certificate is for this consumer and this CSR's key, so that a confused
 * or hostile service cannot hand over an identity that would not work (or would be someone else's).
 */
function checkIssued(certificatePem: string, csrPem: string, consumerClusterId: string): string | undefined {
  try {
    const cert = forge.pki.certificateFromPem(certificatePem);
    const csr = forge.pki.certificationRequestFromPem(csrPem);
    const cn = cert.subject.getField("CN") as { value?: string } | null;
    if (cn?.value !== consumerUserName(consumerClusterId))
      return `certificate is for "${cn?.value ?? "(no CN)"}", not ${consumerUserName(consumerClusterId)}`;
    if (forge.pki.publicKeyToPem(cert.publicKey) !== forge.pki.publicKeyToPem(csr.publicKey!))
      return "certificate does not carry the CSR's public key";
    return undefined;
  } catch (error) {
    return `certificate is not readable PEM (${(error as Error).message})`;
  }
}

/**
 * Presents the token and the CSR to the provider's auth service over TLS (verified with
 * `authCaPem`) and returns the identity it issued. Errors name the step, the auth URL (host and
 * port) and the service's reason or the last network error.
 */
export async function requestIdentity(args: RequestIdentityArgs): Promise<Identity> {
  const endpoint = parseAuthUrl(args.authUrl, STEP);
  const body: IdentityRequestBody = {
    token: args.token,
    clusterId: args.consumerClusterId,
    clusterName: args.consumerClusterName,
    csr: args.csrPem,
  };
  return callAuthService(
    `identity for consumer ${args.consumerClusterId}`,
    endpoint,
    args,
    (timeoutMs) =>
      postToAuthService({
        endpoint,
        path: IDENTITY_PATH,
        caPem: args.authCaPem,
        ...(args.authServerName ? { serverName: args.authServerName } : {}),
        body,
        timeoutMs,
        signal: args.signal,
      }),
    (answer): CheckResult<Identity> => {
      const b = (answer.body ?? {}) as Partial<Record<keyof IdentityResponseBody, unknown>>;
      if (
        !isText(b.certificate) ||
        !isText(b.apiServerUrl) ||
        !isText(b.apiServerCa) ||
        !isText(b.tenantNamespace) ||
        !isText(b.providerClusterId) ||
        typeof b.providerClusterName !== "string"
      ) {
        return {
          failed: true,
          reason:
            "answer lacks certificate, apiServerUrl, apiServerCa, tenantNamespace, providerClusterId or providerClusterName",
        };
      }
      const wrong = checkIssued(b.certificate, args.csrPem, args.consumerClusterId);
      if (wrong) return { failed: true, reason: wrong };
      return {
        done: true,
        value: {
          certificatePem: b.certificate,
          apiServerUrl: b.apiServerUrl,
          apiServerCaPem: b.apiServerCa,
          tenantNamespace: b.tenantNamespace,
          providerClusterId: b.providerClusterId,
          providerClusterName: b.providerClusterName,
        },
      };
    },
  );
}

/**
 * A kubeconfig for the provider's API server as this identity (secret: it embeds the key). With
 * `via`, it points at another URL for the same API server (in-band: its address inside the
 * tunnel) and verifies the certificate under a name it carries.
 */
export function forgeIdentityKubeconfig(
  identity: Identity,
  keyPem: string,
  via?: { readonly server: string; readonly tlsServerName: string },
): string {
  return forgeKubeconfig({
    name: `pulumi-liqo-${identity.providerClusterId}`,
    server: via?.server ?? identity.apiServerUrl,
    caPem: identity.apiServerCaPem,
    certPem: identity.certificatePem,
    keyPem,
    ...(via ? { tlsServerName: via.tlsServerName } : {}),
  });
}

/** Input of {@link revokeIdentity}. */
export interface RevokeIdentityArgs extends AuthCallBounds {
  /** The provider's auth service. */
  readonly authUrl: string;
  /** PEM CA that signed the auth service's certificate. */
  readonly authCaPem: string;
  /** The identity's certificate: it authenticates the revocation (mutual TLS). */
  readonly certificatePem: string;
  /** Its private key (secret). */
  readonly keyPem: string;
}

/** What {@link revokeIdentity} returns. */
export interface RevokeIdentityResult {
  /** Whether the provider still had something of this consumer (false: already revoked). */
  readonly revoked: boolean;
  /** The tenant namespace that the provider removed. */
  readonly tenantNamespace: string;
}

/**
 * Asks the provider to remove this consumer's tenant namespace, RBAC and CSRs, proving who it is
 * with the identity's own certificate. Idempotent: revoking twice succeeds with `revoked: false`.
 */
export async function revokeIdentity(args: RevokeIdentityArgs): Promise<RevokeIdentityResult> {
  const endpoint = parseAuthUrl(args.authUrl, STEP);
  return callAuthService(
    "identity revocation",
    endpoint,
    args,
    (timeoutMs) =>
      postToAuthService({
        endpoint,
        path: REVOKE_PATH,
        caPem: args.authCaPem,
        body: {},
        certPem: args.certificatePem,
        keyPem: args.keyPem,
        timeoutMs,
        signal: args.signal,
      }),
    (answer): CheckResult<RevokeIdentityResult> => {
      const b = (answer.body ?? {}) as Partial<Record<keyof RevokeResponseBody, unknown>>;
      if (typeof b.revoked !== "boolean" || !isText(b.tenantNamespace))
        return { failed: true, reason: "answer lacks revoked or tenantNamespace" };
      return { done: true, value: { revoked: b.revoked, tenantNamespace: b.tenantNamespace } };
    },
  );
}

/**
 * Waits until the auth service at `authUrl` presents a certificate signed by `authCaPem`: after a
 * `Cluster` (re)installs its TLS material, the running agent picks it up within seconds.
 */
export async function waitForAuthService(
  authUrl: string,
  authCaPem: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const endpoint = parseAuthUrl(authUrl, "authentication");
  await poll(
    {
      step: "authentication",
      object: "auth service serving the cluster's certificate",
      endpoint: `${authUrl} (${endpoint.hostPort})`,
    },
    { timeoutMs, intervalMs: 500, ...(signal ? { signal } : {}) },
    async () => {
      await probeAuthService(endpoint, authCaPem, Math.min(5000, timeoutMs));
      return { done: true, value: undefined };
    },
  );
}

/** Input of {@link renewIdentity}. */
export interface RenewIdentityArgs extends AuthCallBounds {
  /** The provider's auth service. */
  readonly authUrl: string;
  /** PEM CA that signed the auth service's certificate. */
  readonly authCaPem: string;
  /** Name to verify the auth service's certificate under (in-band). @default the URL's host */
  readonly authServerName?: string;
  /** The identity's current certificate: it authenticates the renewal (mutual TLS). */
  readonly certificatePem: string;
  /** Its private key (secret): the new certificate carries the same one. */
  readonly keyPem: string;
  /** The consumer's cluster id (the certificate's user is named after it). */
  readonly consumerClusterId: string;
}

/**
 * Trades the identity the consumer holds for a new certificate of the same user and key, proving
 * who it is with the current certificate; no token is needed. Resolves the new certificate (PEM).
 * A revoked or expired identity is refused (HTTP 401/403): only a peering token brings it back.
 */
export async function renewIdentity(args: RenewIdentityArgs): Promise<string> {
  const endpoint = parseAuthUrl(args.authUrl, STEP);
  const { csrPem } = forgeIdentityRequest(args.consumerClusterId, args.keyPem);
  const body: RenewRequestBody = { csr: csrPem };
  return callAuthService(
    `renewal of the identity of consumer ${args.consumerClusterId}`,
    endpoint,
    args,
    (timeoutMs) =>
      postToAuthService({
        endpoint,
        path: RENEW_PATH,
        caPem: args.authCaPem,
        ...(args.authServerName ? { serverName: args.authServerName } : {}),
        body,
        certPem: args.certificatePem,
        keyPem: args.keyPem,
        timeoutMs,
        signal: args.signal,
      }),
    (answer): CheckResult<string> => {
      const b = (answer.body ?? {}) as Partial<Record<keyof RenewResponseBody, unknown>>;
      if (!isText(b.certificate)) return { failed: true, reason: "answer lacks certificate" };
      const wrong = checkIssued(b.certificate, csrPem, args.consumerClusterId);
      return wrong ? { failed: true, reason: wrong } : { done: true, value: b.certificate };
    },
  );
}

/** When a certificate (PEM) starts and stops being valid. */
export interface CertificateValidity {
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** The validity period of a certificate (PEM); throws when it does not parse (the PEM is never quoted). */
export function certificateValidity(certificatePem: string): CertificateValidity {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certificatePem);
  } catch {
    throw new Error(`${STEP}: the identity's certificate is not a readable PEM certificate`);
  }
  return { notBefore: cert.validFromDate, notAfter: cert.validToDate };
}
