/**
 * Kubernetes clients from kubeconfig text, and the one create-or-replace helper every `ensure*`
 * step uses: read, create on 404, otherwise update when different; anything else is rethrown.
 */
import * as k8s from "@kubernetes/client-node";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import * as https from "node:https";
import { describeConnectionFailure, describeKubeError, statusOf } from "./errors.js";
import { KubeconfigError, parseProblem, readKubeconfig } from "./kubeconfig-text.js";

export { KubeconfigError } from "./kubeconfig-text.js";

/** The private hook of client-node's KubeConfig that builds a request's connection pool. */
type DispatcherFactory = (cluster: k8s.Cluster | null, agentOptions: Record<string, unknown>) => unknown;

/**
 * Makes `kc` keep its connections: client-node builds a new connection pool (so a new TLS
 * handshake) for every request, which measured 5 ms of CPU a call against 1 ms when reused, and
 * that is most of what an idle agent polling its API server spends. Pools are keyed by the TLS
 * material, which each request reads anew, so rotated credentials get a pool of their own; a
 * bearer token travels in a header and needs none.
 */
export function reuseConnections(kc: k8s.KubeConfig): k8s.KubeConfig {
  const hooked = kc as unknown as { createDispatcher: DispatcherFactory };
  const build = hooked.createDispatcher.bind(kc);
  const pools = new Map<string, unknown>();
  hooked.createDispatcher = (cluster, agentOptions) => {
    const material = ["ca", "cert", "key", "pfx", "passphrase", "servername", "rejectUnauthorized"].map((name) =>
      String(agentOptions[name] ?? ""),
    );
    const key = createHash("sha256")
      .update(JSON.stringify([cluster?.server, cluster?.proxyUrl, ...material]))
      .digest("hex");
    if (!pools.has(key)) pools.set(key, build(cluster, agentOptions));
    return pools.get(key);
  };
  return kc;
}

/**
 * Parses kubeconfig text; `input` names where it came from (e.g. `Cluster "a": kubeconfig`) so the
 * error says which property to fix. Requires a current context with a cluster and a user.
 */
export function loadKubeconfig(text: string, input: string): k8s.KubeConfig {
  // Judged first as text (kubeconfig-text.ts), where a check that needs no cluster judges it too.
  readKubeconfig(text, input);
  const kc = new k8s.KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (error) {
    throw new KubeconfigError(input, parseProblem(error));
  }
  return reuseConnections(kc);
}

/** Kubeconfig files already loaded, by path, with the text each held then. */
const loadedFiles = new Map<string, { readonly text: string; readonly kc: k8s.KubeConfig }>();

/**
 * A client configuration from kubeconfig file `path`, as {@link loadKubeconfig} makes it. The same
 * file with the same text gives the same configuration, and so the same connections: a test or
 * a lab step that polls through a file's client would otherwise pay a TLS handshake per call.
 */
export function loadKubeconfigFile(path: string): k8s.KubeConfig {
  const text = readFileSync(path, "utf8");
  const known = loadedFiles.get(path);
  if (known?.text === text) return known.kc;
  const kc = loadKubeconfig(text, `kubeconfig file ${path}`);
  loadedFiles.set(path, { text, kc });
  return kc;
}

/** The API server URL a kubeconfig points at. */
export function serverOf(kc: k8s.KubeConfig): string {
  return kc.getCurrentCluster()!.server;
}

/** Whether a client call failed with 404 Not Found. */
export function isNotFound(error: unknown): boolean {
  return statusOf(error) === 404;
}

/** Runs a read that may 404; resolves undefined when the object does not exist. */
export async function readOptional<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Deletes, treating "already gone" as success. Resolves whether something was deleted. */
export async function deleteOptional(remove: () => Promise<unknown>): Promise<boolean> {
  try {
    await remove();
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/** Rethrows a client error as an Error whose message says what was attempted where. */
export function describeFailure(action: string, endpoint: string): (error: unknown) => never {
  return (error) => {
    // The status stays readable (httpStatusOf): a refused identity is reported, not thrown, on read.
    throw Object.assign(new Error(`${action} at ${endpoint}: ${describeKubeError(error)}`), {
      httpStatus: statusOf(error),
    });
  };
}

/** Field manager under which this project applies objects. */
export const FIELD_MANAGER = "pulumi-liqo";

/**
 * Creates or updates `object` by server-side apply: idempotent, and it touches only the fields this
 * project manages, so a second run (or a run after a crash) converges instead of failing.
 */
export async function ensureObject<T extends k8s.KubernetesObject>(kc: k8s.KubeConfig, object: T): Promise<T> {
  return objectClient(kc).patch(object, undefined, undefined, FIELD_MANAGER, true, k8s.PatchStrategy.ServerSideApply);
}

/** One object client per kubeconfig: each keeps the API's resource lists it looked up (a kind it has not seen is looked up again). */
const objectClients = new WeakMap<k8s.KubeConfig, k8s.KubernetesObjectApi>();

/**
 * The object client of `kc`. A client made anew for each call would ask the API server for the
 * kind's resource list before every write: twice the requests, at hundreds of pods.
 */
export function objectClient(kc: k8s.KubeConfig): k8s.KubernetesObjectApi {
  let client = objectClients.get(kc);
  if (!client) objectClients.set(kc, (client = k8s.KubernetesObjectApi.makeApiClient(kc)));
  return client;
}

/** How long {@link probeApiServer} gives the connection's TLS handshake: a live API server answers in milliseconds. */
export const PROBE_TIMEOUT_MS = 3_000;
/**
 * How long {@link probeApiServer} then gives the API server to answer its one request: `/readyz`
 * checks its storage within its own 2 s, so a server still doing handshakes with its storage gone
 * (etcd stopped) says so here instead of holding every later request for a minute.
 */
export const PROBE_ANSWER_TIMEOUT_MS = 5_000;

/** The checks a `/readyz?verbose` answer lists as failing (`[-]etcd failed: …`), by name. */
export function failingReadyChecks(body: string): string[] {
  return [...body.matchAll(/^\[-\](\S+) failed/gm)].map((m) => m[1]!);
}

/**
 * One short look at the API server `kc` points at: a TLS handshake verified against its CA, then
 * one `GET /readyz` with `kc`'s credentials. Resolves undefined when the server answers ready (or
 * refuses the look itself, 401/403: it answers, and some clusters hide `/readyz`), otherwise why
 * it is out of reach: `connection refused (…)`, `timed out (…)`, `TLS: unknown authority (…)`, a
 * server that completed the handshake but answered nothing, or one that says it is not ready and
 * which of its checks fail (its storage, typically). The look taken before a long wait on a
 * cluster that may be gone; it needs no rights.
 */
export async function probeApiServer(kc: k8s.KubeConfig, timeoutMs = PROBE_TIMEOUT_MS): Promise<string | undefined> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) return "the kubeconfig's current context names no cluster";
  const url = new URL("/readyz?verbose", cluster.server);
  const options: https.RequestOptions = { method: "GET", agent: false };
  try {
    await kc.applyToHTTPSOptions(options);
  } catch (error) {
    return `its credentials could not be read: ${(error as Error).message}`;
  }
  return new Promise((resolve) => {
    let settled = false;
    // client-node has set the CA, the credentials and the kubeconfig's tls-server-name.
    const request = https.request(url, options);
    const done = (outcome: string | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(outcome);
    };
    let timer = setTimeout(
      () =>
        done(
          describeConnectionFailure(
            Object.assign(new Error(`no TLS handshake within ${timeoutMs} ms`), { code: "ETIMEDOUT" }),
          ),
        ),
      timeoutMs,
    );
    request.once("socket", (socket) =>
      socket.once("secureConnect", () => {
        clearTimeout(timer);
        timer = setTimeout(
          () =>
            done(
              `no answer: it completed the TLS handshake but answered no request within ${PROBE_ANSWER_TIMEOUT_MS / 1000} s ` +
                "(its storage or the server itself is stuck)",
            ),
          PROBE_ANSWER_TIMEOUT_MS,
        );
      }),
    );
    request.once("response", (response) => {
      const status = response.statusCode ?? 0;
      if (status < 300 || status === 401 || status === 403) return done(undefined);
      let body = "";
      response.setEncoding("utf8");
      // Only the list of checks is read; a body past that is not kept.
      response.on("data", (chunk: string) => {
        if (body.length < 16_384) body += chunk;
      });
      response.once("end", () => {
        const failing = failingReadyChecks(body);
        done(
          `not ready: /readyz answered HTTP ${status}` +
            (failing.length > 0 ? ` (failing: ${failing.join(", ")})` : ""),
        );
      });
      response.once("error", () => done(`not ready: /readyz answered HTTP ${status}`));
    });
    request.once("error", (error) => done(describeConnectionFailure(error) ?? error.message));
    request.end();
  });
}
