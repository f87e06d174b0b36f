/**
 * How the auth service answers one HTTPS request: first what is refused at the door (an unknown
 * endpoint, a method other than POST), then the body read within its limit, then whom the request
 * is charged to (callers.ts: a consumer by its certificate, a known token, or the address) and
 * whether that budget is spent (429), then the endpoint's protocol step (issue, renew, revoke).
 * The answer is written out as JSON; a refusal counts against the caller and against its address.
 */
import type * as k8s from "@kubernetes/client-node";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import { IDENTITY_PATH, MAX_BODY_BYTES, RENEW_PATH, REVOKE_PATH } from "../../core/authentication/protocol.js";
import { describeKubeError } from "../../core/kube/errors.js";
import type { Reporter } from "../reporter.js";
import { closeLingering, readBody } from "../http-body.js";
import { parsePeeringToken } from "../../core/authentication/tokens.js";
import { fail, refuse, type Answer } from "./answer.js";
import { callerOf, sourceCaller, type Caller } from "./callers.js";
import type { FailureLimiter } from "./failure-limiter.js";
import type { KnownTokenIds } from "./known-tokens.js";
import { issueIdentity } from "./issue-identity.js";
import { renewConsumerIdentity } from "./renew-identity.js";
import {
  consumerOfCertificate,
  revokeConsumerIdentity,
  splitPemBundle,
  type PeerCertificate,
} from "./revoke-identity.js";

/** Step name of the auth service's log lines and errors. */
export const STEP = "auth service";

/** What answering a request needs. */
export interface RequestContext {
  /** Client of the provider cluster. */
  readonly kc: k8s.KubeConfig;
  /** Where refusals and failures go; never given a token, a key or a certificate. */
  readonly log: Reporter;
  /** Current time in ms. */
  readonly now: () => number;
  /** Counts refusals per caller (see callers.ts) and throttles a caller that has too many. */
  readonly limiter: FailureLimiter;
  /** The ids of the tokens this provider holds: a request naming one is charged to that token. */
  readonly knownTokens: KnownTokenIds;
  /** How long to wait for the cluster's signer. */
  readonly certificateTimeoutMs: number;
  /** Lifetime of the certificates issued and renewed, in seconds. */
  readonly lifetimeSeconds: number;
  /** The cluster's client CA bundle (PEM) as served right now: a reload of the TLS material changes it. */
  clientCa(): string;
}

/** How long a revocation waits for the consumer's tenant namespace to be gone. */
const TENANT_REMOVAL_TIMEOUT_MS = 60_000;

/** What each endpoint does, for a server error's message. */
const ACTIONS: Readonly<Record<string, string>> = {
  [IDENTITY_PATH]: "issuing the identity",
  [REVOKE_PATH]: "revoking the identity",
  [RENEW_PATH]: "renewing the identity",
};

/** What the TLS layer saw of the client's certificate (revocation and renewal authenticate by it). */
function peerOf(socket: TLSSocket): PeerCertificate {
  const peer = socket.getPeerCertificate();
  return {
    ...(peer?.raw ? { raw: peer.raw } : {}),
    authorized: socket.authorized,
    ...(socket.authorizationError ? { authorizationError: String(socket.authorizationError) } : {}),
  };
}

function write(res: ServerResponse, answer: Answer): void {
  const payload = JSON.stringify(answer.body);
  res.writeHead(answer.status, { "content-type": "application/json", "cache-control": "no-store", ...answer.headers });
  res.end(payload);
}

/**
 * The answer to a request for no endpoint (404) or with another method than POST (405), or
 * undefined when it may go on. Not counted: no step ran, and nothing was guessed.
 */
function refuseMisdirected(method: string | undefined, path: string): Answer | undefined {
  if (!Object.hasOwn(ACTIONS, path))
    return fail(404, `no such endpoint; use POST ${IDENTITY_PATH}, POST ${RENEW_PATH} or POST ${REVOKE_PATH}`);
  if (method !== "POST") return { ...fail(405, `${path} accepts POST only`), headers: { allow: "POST" } };
  return undefined;
}

/**
 * Whom the request is charged to: on `/v1/identity`, the token its body names if the provider
 * holds it; on `/v1/renew` and `/v1/revoke`, the consumer its client certificate proves; else its
 * address (see callers.ts).
 */
async function identifyCaller(
  ctx: RequestContext,
  path: string,
  socket: TLSSocket,
  body: unknown,
  source: string,
): Promise<Caller> {
  if (path === IDENTITY_PATH) {
    const token = parsePeeringToken(
      typeof body === "object" && body !== null ? (body as { token?: unknown }).token : undefined,
    );
    const known = token !== undefined && (await ctx.knownTokens.has(token.tokenId));
    return callerOf({ source, ...(known ? { knownTokenId: token.tokenId } : {}) });
  }
  const who = consumerOfCertificate(peerOf(socket), splitPemBundle(ctx.clientCa()), ctx.now());
  return callerOf({ source, ...("clusterId" in who ? { consumerClusterId: who.clusterId } : {}) });
}

/** The 429 for a caller whose budget is spent (not counted again), or undefined when it is heard. */
function throttled(ctx: RequestContext, caller: Caller): Answer | undefined {
  const blockedMs = ctx.limiter.blockedFor(caller.key, ctx.now());
  if (blockedMs === undefined) return undefined;
  const seconds = Math.ceil(blockedMs / 1000);
  return {
    ...refuse(429, `too many refused requests from ${caller.description}; retry after ${seconds} s`, {
      "retry-after": String(seconds),
    }),
    countsAsFailure: false,
  };
}

/**
 * Counts a refusal against `caller` and against the address it came from, and says so once when
 * that spends a budget (each 429 that follows is not logged: a flood would flood the log).
 */
export function recordRefusal(ctx: RequestContext, caller: Caller, source: string): void {
  const now = ctx.now();
  const callers = caller.key === sourceCaller(source).key ? [caller] : [caller, sourceCaller(source)];
  for (const charged of callers) {
    const wasBlocked = ctx.limiter.blockedFor(charged.key, now) !== undefined;
    ctx.limiter.recordFailure(charged.key, now);
    const blockedMs = ctx.limiter.blockedFor(charged.key, now);
    if (!wasBlocked && blockedMs !== undefined)
      ctx.log.warn(
        `${STEP}: throttling ${charged.description} for ${Math.ceil(blockedMs / 1000)} s after repeated refusals`,
      );
  }
}

/** The request's JSON body (`{}` when empty), or the refusal of one too large (413) or not JSON (400). */
async function readJsonBody(req: IncomingMessage): Promise<{ readonly value: unknown } | { readonly refusal: Answer }> {
  const raw = await readBody(req, MAX_BODY_BYTES);
  if (raw === undefined) {
    closeLingering(req.socket);
    return { refusal: refuse(413, `request body larger than ${MAX_BODY_BYTES} bytes`, { connection: "close" }) };
  }
  try {
    return { value: raw.length === 0 ? {} : JSON.parse(raw.toString("utf8")) };
  } catch {
    return { refusal: refuse(400, "request body is not JSON") };
  }
}

/** Runs the protocol step of endpoint `path` on a parsed body. */
function runEndpoint(
  ctx: RequestContext,
  path: string,
  body: unknown,
  socket: TLSSocket,
  source: string,
): Promise<Answer> {
  const { kc, now, log, certificateTimeoutMs, lifetimeSeconds } = ctx;
  if (path === IDENTITY_PATH)
    return issueIdentity({ kc, now, log, certificateTimeoutMs, lifetimeSeconds }, body, source);
  const clientCaPems = splitPemBundle(ctx.clientCa());
  if (path === RENEW_PATH)
    return renewConsumerIdentity(
      { kc, now, log, clientCaPems, certificateTimeoutMs, lifetimeSeconds },
      peerOf(socket),
      body,
      source,
    );
  return revokeConsumerIdentity(
    { kc, now, log, clientCaPems, removalTimeoutMs: TENANT_REMOVAL_TIMEOUT_MS },
    peerOf(socket),
    source,
  );
}

/** The endpoint's answer, or a 500 naming what failed. */
async function answerEndpoint(
  ctx: RequestContext,
  path: string,
  body: unknown,
  socket: TLSSocket,
  source: string,
): Promise<Answer> {
  try {
    return await runEndpoint(ctx, path, body, socket, source);
  } catch (error) {
    // Errors of the steps name the step, the object and the API server; they carry no secret.
    const reason = describeKubeError(error);
    ctx.log.warn(`${STEP}: ${path} from ${source} failed: ${reason}`);
    return fail(500, `${ACTIONS[path]} failed on the provider: ${reason}`);
  }
}

/**
 * Answers one request and writes the answer. The body is read before the budget is checked, as
 * it may name the token the request is charged to; it is small (bounded by MAX_BODY_BYTES).
 */
async function answerRequest(ctx: RequestContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const source = req.socket.remoteAddress ?? "unknown";
  const path = (req.url ?? "").split("?")[0] ?? "";
  const misdirected = refuseMisdirected(req.method, path);
  if (misdirected) return write(res, misdirected);
  const socket = req.socket as TLSSocket;
  const body = await readJsonBody(req);
  const caller = await identifyCaller(ctx, path, socket, "value" in body ? body.value : undefined, source);
  const busy = throttled(ctx, caller);
  // An unread body (413) closes the connection whatever the answer.
  if (busy)
    return write(res, "refusal" in body ? { ...busy, headers: { ...busy.headers, ...body.refusal.headers } } : busy);
  const answer = "refusal" in body ? body.refusal : await answerEndpoint(ctx, path, body.value, socket, source);
  if (answer.countsAsFailure) recordRefusal(ctx, caller, source);
  write(res, answer);
}

/** The server's request listener: answers each request, and a failure to answer with a bare 500. */
export function requestListener(ctx: RequestContext): RequestListener {
  return (req, res) => {
    answerRequest(ctx, req, res).catch((error: unknown) => {
      ctx.log.warn(`${STEP}: answering failed: ${(error as Error)?.message ?? String(error)}`);
      if (!res.headersSent) write(res, fail(500, "internal error"));
    });
  };
}
