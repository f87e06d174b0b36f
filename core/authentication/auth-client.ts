/**
 * One HTTPS POST to a provider's auth service, verifying its certificate against the CA the token
 * came with. It neither retries nor interprets the answer; {@link ./identity.ts} does.
 */
import { request } from "node:https";
import { isIP } from "node:net";
import { connect } from "node:tls";
import { explainConnectionError } from "../kube/errors.js";

/** Where the auth service is and how to reach it. */
export interface AuthEndpoint {
  /** Scheme, host and port, e.g. `https://172.29.1.10:7443`; host and port are named in errors. */
  readonly url: URL;
  /** `host:port` of {@link url}, the default port filled in. */
  readonly hostPort: string;
}

/**
 * Parses an auth URL; throws naming the step and the bad value (a URL is not secret). Only
 * `https:` is accepted: the token travels in the request.
 */
export function parseAuthUrl(authUrl: string, step: string): AuthEndpoint {
  let url: URL;
  try {
    url = new URL(authUrl);
  } catch {
    throw new Error(`${step}: auth URL "${authUrl}" is not a URL`);
  }
  if (url.protocol !== "https:") throw new Error(`${step}: auth URL "${authUrl}" must use https`);
  const port = url.port || "443";
  return { url, hostPort: `host ${url.hostname}, port ${port}` };
}

/** One request to the auth service. */
export interface AuthPost {
  /** Base URL of the service (path appended). */
  readonly endpoint: AuthEndpoint;
  /** Path, e.g. `/v1/identity`. */
  readonly path: string;
  /** PEM CA that must have signed the service's certificate. */
  readonly caPem: string;
  /**
   * Name to verify the certificate under, when the URL's host is not one it names (in-band, the
   * service is reached at an address inside the tunnel). @default the URL's host
   */
  readonly serverName?: string;
  /** JSON body. */
  readonly body: unknown;
  /** Client certificate for mutual TLS (revocation). */
  readonly certPem?: string;
  /** Its private key (secret). */
  readonly keyPem?: string;
  /** Abort the request after this long. */
  readonly timeoutMs: number;
  /** Ends the request early. */
  readonly signal?: AbortSignal;
}

/** The service's answer. */
export interface AuthAnswer {
  /** HTTP status. */
  readonly status: number;
  /** Parsed JSON body (undefined when the body was not JSON). */
  readonly body: unknown;
  /** Seconds from a `Retry-After` header, if any. */
  readonly retryAfterSeconds?: number;
}

const MAX_ANSWER_BYTES = 1024 * 1024;

/** Sends the request; rejects with the network error (connection refused, TLS failure, timeout). */
export function postToAuthService(post: AuthPost): Promise<AuthAnswer> {
  const base = post.endpoint.url;
  const url = new URL(`${base.pathname.replace(/\/+$/, "")}${post.path}`, base);
  const payload = Buffer.from(JSON.stringify(post.body), "utf8");
  return new Promise<AuthAnswer>((resolve, reject) => {
    const signals = [AbortSignal.timeout(Math.max(1, post.timeoutMs)), ...(post.signal ? [post.signal] : [])];
    const req = request(
      url,
      {
        method: "POST",
        ca: post.caPem,
        ...(post.serverName ? { servername: post.serverName } : {}),
        ...(post.certPem ? { cert: post.certPem } : {}),
        ...(post.keyPem ? { key: post.keyPem } : {}),
        // A fresh connection per call: no pooled socket keeps the process alive or reuses a context.
        agent: false,
        headers: {
          "content-type": "application/json",
          "content-length": String(payload.length),
          accept: "application/json",
        },
        signal: AbortSignal.any(signals),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            req.destroy(new Error(`answer larger than ${MAX_ANSWER_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          const retryAfter = Number(res.headers["retry-after"]);
          resolve({
            status: res.statusCode ?? 0,
            body,
            ...(Number.isFinite(retryAfter) ? { retryAfterSeconds: retryAfter } : {}),
          });
        });
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => {
      // An abort by our own timeout reads "This operation was aborted": say what it was.
      if (error.name === "AbortError")
        reject(
          new Error(post.signal?.aborted ? "operation deadline reached" : `no answer within ${post.timeoutMs} ms`),
        );
      else reject(explainConnectionError(error));
    });
    req.end(payload);
  });
}

/**
 * Opens a TLS connection to the auth service and resolves once its certificate verifies against
 * `caPem` (then closes it); rejects with the TLS or network error. Sends nothing, so it never
 * counts against the service's failure budget.
 */
export function probeAuthService(endpoint: AuthEndpoint, caPem: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: endpoint.url.hostname,
      port: Number(endpoint.url.port || 443),
      ca: caPem,
      servername: isIP(endpoint.url.hostname) ? undefined : endpoint.url.hostname,
      timeout: timeoutMs,
    });
    socket.once("secureConnect", () => {
      socket.end();
      resolve();
    });
    socket.once("timeout", () =>
      socket.destroy(Object.assign(new Error(`no TLS handshake within ${timeoutMs} ms`), { code: "ETIMEDOUT" })),
    );
    socket.once("error", (error) => reject(explainConnectionError(error)));
  });
}
