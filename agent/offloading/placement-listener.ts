/**
 * The agent's placement webhook, where the API server serves no MutatingAdmissionPolicy
 * (Kubernetes 1.35): HTTPS on {@link PLACEMENT_PORT}, with the certificate of the Secret the
 * Cluster's install made there, answering the API server's admission reviews of pods in offloaded
 * namespaces (core/offloading/placement-webhook.ts decides each answer).
 *
 * It listens only once that Secret exists (a cluster on 1.36 or later has none, and the listener
 * never starts), and serves a renewed certificate without a restart. Anyone in the cluster can
 * reach it: a review that is too large, not JSON or not a pod review is refused (413, 400) and
 * changes nothing; the refusals are said in the log, the first one a minute.
 */
import type * as k8s from "@kubernetes/client-node";
import type { IncomingMessage, ServerResponse } from "node:http";
import * as https from "node:https";
import { PLACEMENT_PORT, PLACEMENT_TLS_SECRET, SYSTEM_NAMESPACE } from "../../core/api/names.js";
import {
  answerPlacementReview,
  PLACEMENT_REVIEW_LIMIT_BYTES,
  policyOfPath,
} from "../../core/offloading/placement-webhook.js";
import { readServingTls } from "../auth-service/tls-material.js";
import { closeLingering, readBody } from "../http-body.js";
import type { Reporter } from "../reporter.js";

const STEP = "placement webhook";
/** How often a refusal is said in the log at most: a flood of forged reviews would flood it. */
const REFUSAL_LOG_INTERVAL_MS = 60_000;

/** Where and as whom the listener runs. */
export interface PlacementListenerOptions {
  readonly kc: k8s.KubeConfig;
  readonly reporter: Reporter;
  /** Closes the listener. */
  readonly signal: AbortSignal;
  /** The port. @default PLACEMENT_PORT */
  readonly port?: number;
}

/** A placement listener that may not listen yet. */
export interface PlacementListener {
  /** Re-reads the TLS Secret: starts listening once it exists, serves a new certificate when it changed; never rejects. */
  refresh(): Promise<void>;
  /** The port it listens on, once it does. */
  port(): number | undefined;
}

/** Writes a JSON answer. */
function answer(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  response.end(JSON.stringify(body));
}

/** Answers one request; resolves why it was refused, or undefined when it was answered with a review. */
async function serve(request: IncomingMessage, response: ServerResponse): Promise<string | undefined> {
  const path = new URL(request.url ?? "/", "https://placement").pathname;
  const policy = policyOfPath(path);
  if (request.method !== "POST" || !policy) {
    answer(response, 404, { error: `no such path: ${request.method ?? "?"} ${path}` });
    return `${request.method ?? "?"} ${path}: no such path`;
  }
  const raw = await readBody(request, PLACEMENT_REVIEW_LIMIT_BYTES);
  if (raw === undefined) {
    closeLingering(request.socket);
    answer(response, 413, { error: `review larger than ${PLACEMENT_REVIEW_LIMIT_BYTES} bytes` });
    return "a review too large";
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.toString("utf8"));
  } catch {
    answer(response, 400, { error: "the body is not JSON" });
    return "a body that is not JSON";
  }
  const answered = answerPlacementReview(body, policy);
  if (!answered.ok) {
    answer(response, 400, { error: answered.reason });
    return answered.reason;
  }
  answer(response, 200, answered.review);
  return undefined;
}

/** Starts the listener (listening at once if its Secret exists); it closes when `signal` aborts. */
export async function startPlacementListener(options: PlacementListenerOptions): Promise<PlacementListener> {
  const { kc, reporter, signal } = options;
  let server: https.Server | undefined;
  let servedCert = "";
  let lastRefusalLogged = 0;
  const refused = (source: string | undefined, why: string): void => {
    const now = Date.now();
    if (now - lastRefusalLogged < REFUSAL_LOG_INTERVAL_MS) return;
    lastRefusalLogged = now;
    reporter.warn(`${STEP}: refused a request from ${source ?? "unknown"}: ${why}`);
  };
  const listen = async (tls: { cert: string; key: string }): Promise<void> => {
    const started = https.createServer({ cert: tls.cert, key: tls.key }, (request, response) => {
      serve(request, response).then(
        (why) => why && refused(request.socket.remoteAddress, why),
        (error: unknown) => {
          reporter.warn(`${STEP}: ${(error as Error).message}`);
          if (!response.headersSent) answer(response, 500, { error: "the review could not be answered" });
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      started.once("error", reject);
      started.listen(options.port ?? PLACEMENT_PORT, "0.0.0.0", () => resolve());
    });
    signal.addEventListener("abort", () => started.close(), { once: true });
    server = started;
    reporter.info(
      `${STEP}: placing the pods of offloaded namespaces, on port ${(started.address() as { port: number }).port}`,
    );
  };
  const refresh = async (): Promise<void> => {
    if (signal.aborted) return;
    try {
      const tls = await readServingTls(kc, PLACEMENT_TLS_SECRET);
      if (!tls || tls.cert === servedCert) return;
      if (server) server.setSecureContext({ cert: tls.cert, key: tls.key });
      else await listen(tls);
      servedCert = tls.cert;
    } catch (error) {
      reporter.warn(`${STEP}: reading Secret ${SYSTEM_NAMESPACE}/${PLACEMENT_TLS_SECRET}: ${(error as Error).message}`);
    }
  };
  await refresh();
  return { refresh, port: () => (server?.address() as { port: number } | null)?.port };
}
