/**
 * The provider's auth service: HTTPS, with its certificate from the auth TLS Secret that `Cluster`
 * installs, and the cluster's client CA to check identities that come back to revoke themselves.
 * Starting it is four steps: wait for the TLS material, serve with it, listen, and keep it fresh;
 * how one request is answered lives in requests.ts, the protocol steps in the handlers.
 */
import type * as k8s from "@kubernetes/client-node";
import { createServer, type Server } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { SecureContextOptions } from "node:tls";
import { IDENTITY_EXPIRATION_SECONDS } from "../../core/authentication/certificates.js";
import { serverOf } from "../../core/kube/client.js";
import { describeKubeError } from "../../core/kube/errors.js";
import type { Reporter } from "../reporter.js";
import { listPeeringTokenIds } from "../../core/authentication/tokens.js";
import { sourceCaller } from "./callers.js";
import { FailureLimiter, type FailureLimiterOptions } from "./failure-limiter.js";
import { KnownTokenIds } from "./known-tokens.js";
import { recordRefusal, requestListener, STEP, type RequestContext } from "./requests.js";
import { CERTIFICATE_WAIT_MS } from "./sign-certificate.js";
import { readTlsMaterial, tlsMaterialChanged, waitForTlsMaterial, type TlsMaterial } from "./tls-material.js";

/** Options of {@link startAuthService}. */
export interface AuthServiceOptions {
  /** Client of the provider cluster, allowed to read the auth Secret and token Secrets, manage namespaces, RBAC and CSRs. */
  readonly kc: k8s.KubeConfig;
  /** Address to listen on. @example { host: "0.0.0.0", port: 7443 } (port 0: any free port) */
  readonly listen: { readonly host: string; readonly port: number };
  /** Where progress (issued, revoked) and warnings (refusals, failures) go. Never given a token, a key or a certificate. */
  readonly log: Reporter;
  /** Current time in ms; tests move it to step past rate-limit windows. @default Date.now */
  readonly now?: () => number;
  /** How long to wait for the auth TLS Secret at start. @default 600000 */
  readonly tlsWaitTimeoutMs?: number;
  /** How often TLS material and the client CA are re-read, so a renewed certificate is served without restart. @default 30000 */
  readonly refreshIntervalMs?: number;
  /** Told when a new certificate is served (after a refresh found one). */
  readonly onReload?: () => void;
  /** How long to wait for the cluster's signer. @default {@link CERTIFICATE_WAIT_MS} */
  readonly certificateTimeoutMs?: number;
  /** Failure limiter knobs. @default 5 refusals per minute per caller (consumer, token id or source IP: see callers.ts) */
  readonly failureLimit?: FailureLimiterOptions;
  /** Lifetime of the certificates issued and renewed, in seconds (the CSR API's minimum is 600). @default IDENTITY_EXPIRATION_SECONDS (30 days) */
  readonly identityLifetimeSeconds?: number;
}

/** A running auth service. */
export interface RunningAuthService {
  /** Port it listens on (the chosen one when asked for port 0). */
  readonly port: number;
  /** The serving certificate (PEM) in use right now. */
  servingCertificate(): string;
  /** Re-reads the TLS material now (e.g. when a watch saw its Secrets change); never rejects. */
  refresh(): Promise<void>;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/** The certificate, key and client CA a server serves with. */
function secureContextOf(tls: TlsMaterial): SecureContextOptions {
  return { cert: tls.cert, key: tls.key, ...(tls.clientCa ? { ca: tls.clientCa } : {}) };
}

/**
 * The HTTPS server. It asks for a client certificate (revocation, renewal) without requiring one
 * (identity requests have none); the revoke and renew handlers decide. Without a client CA, no
 * certificate can pass (see consumerOfCertificate).
 *
 * A connection that fails before a request is read (a TLS handshake the client cannot complete, a
 * request that is not HTTP) is answered by the layer that failed (a TLS alert; a 400), said once
 * in the log with the peer's address and the cause, and counted against that address like any
 * refusal: otherwise it would be a way to probe the service that nothing limits or records.
 */
function createAuthServer(tls: TlsMaterial, ctx: RequestContext): Server {
  const server = createServer(
    { ...secureContextOf(tls), requestCert: true, rejectUnauthorized: false },
    requestListener(ctx),
  );
  const refused = (what: string, error: Error & { code?: string }, address: string | undefined): void => {
    const source = address ?? "unknown";
    ctx.log.warn(`${STEP}: ${what} from ${source} failed: ${error.code ?? error.message}`);
    recordRefusal(ctx, sourceCaller(source), source);
  };
  server.on("tlsClientError", (error, socket) => refused("TLS handshake", error, socket.remoteAddress));
  server.on("clientError", (error: Error & { code?: string }, socket: Socket) => {
    // A connection reset or a timeout is the client going away, not a malformed request.
    if (error.code !== "ECONNRESET" && error.code !== "ERR_HTTP_REQUEST_TIMEOUT")
      refused("reading the request", error, socket.remoteAddress);
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
    else socket.destroy();
  });
  return server;
}

/** Listens on `listen`; resolves the port (the chosen one when asked for port 0). */
function listenOn(server: Server, listen: AuthServiceOptions["listen"]): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Re-reads the TLS material and, if it differs from what is `served`, hands it to `server` and to
 * `reloaded`, so that a renewed certificate or a rotated CA is served without restart. Never
 * rejects: a failed read keeps what is served, and says so.
 */
async function reloadTlsMaterial(
  server: Server,
  kc: k8s.KubeConfig,
  log: Reporter,
  served: () => TlsMaterial,
  reloaded: (fresh: TlsMaterial) => void,
): Promise<void> {
  try {
    const fresh = await readTlsMaterial(kc);
    if (!fresh || !tlsMaterialChanged(served(), fresh)) return;
    server.setSecureContext(secureContextOf(fresh));
    reloaded(fresh);
  } catch (error) {
    log.warn(`${STEP}: could not re-read TLS material at ${serverOf(kc)}: ${describeKubeError(error)}`);
  }
}

/**
 * Starts the auth service: waits for its TLS Secret, listens, and serves `POST /v1/identity`,
 * `POST /v1/renew` and `POST /v1/revoke`. Resolves once it listens.
 */
export async function startAuthService(options: AuthServiceOptions): Promise<RunningAuthService> {
  const { kc, log } = options;
  const endpoint = serverOf(kc);
  let tls = await waitForTlsMaterial(kc, STEP, options.tlsWaitTimeoutMs ?? 600_000);
  if (!tls.clientCa)
    log.warn(
      `${STEP}: client CA not readable at ${endpoint} (kube-system/extension-apiserver-authentication); revocations are refused until it is`,
    );

  const now = options.now ?? Date.now;
  const server = createAuthServer(tls, {
    kc,
    log,
    now,
    limiter: new FailureLimiter(options.failureLimit),
    knownTokens: new KnownTokenIds({
      list: () => listPeeringTokenIds(kc),
      now,
      onListFailure: (error) => log.warn(`${STEP}: ${describeKubeError(error)}`),
    }),
    certificateTimeoutMs: options.certificateTimeoutMs ?? CERTIFICATE_WAIT_MS,
    lifetimeSeconds: options.identityLifetimeSeconds ?? IDENTITY_EXPIRATION_SECONDS,
    clientCa: () => tls.clientCa,
  });
  const port = await listenOn(server, options.listen);
  log.info(`${STEP}: listening on https://${options.listen.host}:${port} for cluster ${endpoint}`);

  const reload = (): Promise<void> =>
    reloadTlsMaterial(
      server,
      kc,
      log,
      () => tls,
      (fresh) => {
        tls = fresh;
        log.info(`${STEP}: reloaded TLS material`);
        options.onReload?.();
      },
    );
  const refresh = setInterval(() => void reload(), options.refreshIntervalMs ?? 30_000);
  refresh.unref();

  return {
    port,
    servingCertificate: () => tls.cert,
    refresh: reload,
    close: async () => {
      clearInterval(refresh);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
