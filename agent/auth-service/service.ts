/**
 * The provider's auth service: HTTPS, with its certificate from the auth TLS Secret that `Cluster`
 * installs, and the cluster's client CA to check identities that come back to revoke themselves.
 * Routing, body limits and the failure limiter live here; the protocol steps live in the handlers.
 */
import * as k8s from "@kubernetes/client-node";
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { AUTH_TLS_SECRET, SYSTEM_NAMESPACE } from "../../provider/api/names.js";
import { IDENTITY_EXPIRATION_SECONDS } from "../../provider/authentication/certificates.js";
import { IDENTITY_PATH, MAX_BODY_BYTES, RENEW_PATH, REVOKE_PATH } from "../../provider/authentication/protocol.js";
import { readOptional, serverOf } from "../../provider/kube/client.js";
import { describeKubeError } from "../../provider/kube/errors.js";
import { poll } from "../../provider/wait/poll.js";
import type { Reporter } from "../reporter.js";
import { fail, refuse, type Answer } from "./answer.js";
import { FailureLimiter, type FailureLimiterOptions } from "./failure-limiter.js";
import { issueIdentity } from "./issue-identity.js";
import { CERTIFICATE_WAIT_MS } from "./sign-certificate.js";
import { renewConsumerIdentity } from "./renew-identity.js";
import { revokeConsumerIdentity, splitPemBundle, type PeerCertificate } from "./revoke-identity.js";

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
  /** Failure limiter knobs. @default 5 refusals per minute per source IP */
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

/** TLS material the server needs. */
interface TlsMaterial {
  /** Serving certificate (PEM). */
  readonly cert: string;
  /** Its key (PEM, secret). */
  readonly key: string;
  /** The cluster's client CA bundle (PEM); empty when unreadable. */
  readonly clientCa: string;
}

const STEP = "auth service";

/** Reads the serving certificate and key; undefined while the Secret is not there yet. */
async function readServingTls(kc: k8s.KubeConfig): Promise<{ cert: string; key: string } | undefined> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const secret = await readOptional(() =>
    core.readNamespacedSecret({ name: AUTH_TLS_SECRET, namespace: SYSTEM_NAMESPACE }),
  );
  const decode = (key: string): string => Buffer.from(secret?.data?.[key] ?? "", "base64").toString("utf8");
  const [cert, key] = [decode("tls.crt"), decode("tls.key")];
  return cert && key ? { cert, key } : undefined;
}

/** Reads the client CA the API server trusts (the signer of identities), as the API server publishes it. */
async function readClientCa(kc: k8s.KubeConfig): Promise<string> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const cm = await readOptional(() =>
    core.readNamespacedConfigMap({ name: "extension-apiserver-authentication", namespace: "kube-system" }),
  );
  return cm?.data?.["client-ca-file"] ?? "";
}

async function readTls(kc: k8s.KubeConfig): Promise<TlsMaterial | undefined> {
  const serving = await readServingTls(kc);
  return serving ? { ...serving, clientCa: await readClientCa(kc) } : undefined;
}

/** How long a connection answered 413 still takes (and drops) what its client sends, at most. */
const LINGER_MS = 2_000;

/**
 * Reads a request body up to `limit` bytes; undefined when it is larger. Past the limit nothing
 * more is kept, and the connection is left open for the answer (see {@link closeLingering}).
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const take = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off("data", take);
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", take);
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/**
 * Makes the HTTP layer's close after the answer on `socket` a lingering one: this side ends (the
 * answer, then TLS close_notify and FIN) and drops whatever the client still sends until it ends
 * too, or for {@link LINGER_MS} at most: the staged close of RFC 9112 §9.6. Closed at once with the
 * client's bytes unread, the socket would make the kernel send a reset, which can destroy the
 * answer in the client's buffers before it is read: the client would see a connection reset
 * instead of the 413. (On loopback the answer won that race in every try measured; across a
 * network it need not.)
 */
function closeLingering(socket: Socket): void {
  socket.destroySoon = () => {
    const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once("close", () => clearTimeout(timer));
    socket.once("end", () => socket.destroy());
    socket.end();
    socket.resume();
  };
}

/** What the TLS layer saw of the client's certificate (revocation and renewal authenticate by it). */
function peerOf(socket: TLSSocket): PeerCertificate {
  const peer = socket.getPeerCertificate();
  return {
    ...(peer?.raw ? { raw: peer.raw } : {}),
    authorized: socket.authorized,
    ...(socket.authorizationError ? { authorizationError: String(socket.authorizationError) } : {}),
  };
}

/** What each endpoint does, for a server error's message. */
const ACTIONS: Readonly<Record<string, string>> = {
  [IDENTITY_PATH]: "issuing the identity",
  [REVOKE_PATH]: "revoking the identity",
  [RENEW_PATH]: "renewing the identity",
};

function write(res: ServerResponse, answer: Answer): void {
  const payload = JSON.stringify(answer.body);
  res.writeHead(answer.status, { "content-type": "application/json", "cache-control": "no-store", ...answer.headers });
  res.end(payload);
}

/**
 * Starts the auth service: waits for its TLS Secret, listens, and serves `POST /v1/identity`,
 * `POST /v1/renew` and `POST /v1/revoke`. Resolves once it listens.
 */
export async function startAuthService(options: AuthServiceOptions): Promise<RunningAuthService> {
  const { kc, log } = options;
  const now = options.now ?? Date.now;
  const endpoint = serverOf(kc);
  const limiter = new FailureLimiter(options.failureLimit);
  const lifetimeSeconds = options.identityLifetimeSeconds ?? IDENTITY_EXPIRATION_SECONDS;
  const certificateTimeoutMs = options.certificateTimeoutMs ?? CERTIFICATE_WAIT_MS;

  let tls = await poll(
    { step: STEP, object: `Secret ${SYSTEM_NAMESPACE}/${AUTH_TLS_SECRET}`, endpoint },
    { timeoutMs: options.tlsWaitTimeoutMs ?? 600_000, intervalMs: 1_000 },
    async () => {
      const material = await readTls(kc);
      return material
        ? { done: true, value: material }
        : { done: false, state: "Secret not found (is the Cluster installed?)" };
    },
  );
  if (!tls.clientCa)
    log.warn(
      `${STEP}: client CA not readable at ${endpoint} (kube-system/extension-apiserver-authentication); revocations are refused until it is`,
    );

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const source = req.socket.remoteAddress ?? "unknown";
    const path = (req.url ?? "").split("?")[0];
    if (path === undefined || !Object.hasOwn(ACTIONS, path))
      return write(
        res,
        fail(404, `no such endpoint; use POST ${IDENTITY_PATH}, POST ${RENEW_PATH} or POST ${REVOKE_PATH}`),
      );
    if (req.method !== "POST")
      return write(res, { ...fail(405, `${path} accepts POST only`), headers: { allow: "POST" } });
    const blockedMs = limiter.blockedFor(source, now());
    if (blockedMs !== undefined) {
      const seconds = Math.ceil(blockedMs / 1000);
      log.warn(`${STEP}: throttled ${source} on ${path} for ${seconds} s after repeated refusals`);
      return write(res, {
        ...refuse(429, `too many refused requests from ${source}; retry after ${seconds} s`, {
          "retry-after": String(seconds),
        }),
        countsAsFailure: false,
      });
    }
    let answer: Answer;
    try {
      const raw = await readBody(req, MAX_BODY_BYTES);
      let body: unknown;
      if (raw === undefined) {
        closeLingering(req.socket);
        answer = refuse(413, `request body larger than ${MAX_BODY_BYTES} bytes`, { connection: "close" });
      } else {
        try {
          body = raw.length === 0 ? {} : JSON.parse(raw.toString("utf8"));
        } catch {
          body = undefined;
        }
        if (body === undefined) answer = refuse(400, "request body is not JSON");
        else if (path === IDENTITY_PATH) {
          answer = await issueIdentity({ kc, now, log, certificateTimeoutMs, lifetimeSeconds }, body, source);
        } else if (path === RENEW_PATH) {
          answer = await renewConsumerIdentity(
            { kc, now, log, clientCaPems: splitPemBundle(tls.clientCa), certificateTimeoutMs, lifetimeSeconds },
            peerOf(req.socket as TLSSocket),
            body,
            source,
          );
        } else {
          answer = await revokeConsumerIdentity(
            { kc, now, log, clientCaPems: splitPemBundle(tls.clientCa), removalTimeoutMs: 60_000 },
            peerOf(req.socket as TLSSocket),
            source,
          );
        }
      }
    } catch (error) {
      // Errors of the steps name the step, the object and the API server; they carry no secret.
      const reason = describeKubeError(error);
      log.warn(`${STEP}: ${path} from ${source} failed: ${reason}`);
      answer = fail(500, `${ACTIONS[path]} failed on the provider: ${reason}`);
    }
    if (answer.countsAsFailure) limiter.recordFailure(source, now());
    write(res, answer);
  };

  const server: Server = createServer(
    {
      cert: tls.cert,
      key: tls.key,
      // Ask for a client certificate (revocation, renewal) without requiring one (identity requests
      // have none); the revoke and renew handlers decide. Without a client CA, no certificate can pass (see consumerOfCertificate).
      ...(tls.clientCa ? { ca: tls.clientCa } : {}),
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        log.warn(`${STEP}: answering failed: ${(error as Error)?.message ?? String(error)}`);
        if (!res.headersSent) write(res, fail(500, "internal error"));
      });
    },
  );

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.listen.port, options.listen.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  log.info(`${STEP}: listening on https://${options.listen.host}:${port} for cluster ${endpoint}`);

  // Re-read TLS and the client CA, so a renewed certificate or a rotated CA is used without restart.
  const reload = (): Promise<void> =>
    readTls(kc)
      .then((fresh) => {
        if (!fresh || (fresh.cert === tls.cert && fresh.key === tls.key && fresh.clientCa === tls.clientCa)) return;
        server.setSecureContext({
          cert: fresh.cert,
          key: fresh.key,
          ...(fresh.clientCa ? { ca: fresh.clientCa } : {}),
        });
        tls = fresh;
        log.info(`${STEP}: reloaded TLS material`);
        options.onReload?.();
      })
      .catch((error: unknown) =>
        log.warn(`${STEP}: could not re-read TLS material at ${endpoint}: ${describeKubeError(error)}`),
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
