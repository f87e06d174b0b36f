/**
 * Kubernetes clients from kubeconfig text, and the one create-or-replace helper every `ensure*`
 * step uses: read, create on 404, otherwise update when different; anything else is rethrown.
 */
import * as k8s from "@kubernetes/client-node";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { connect } from "node:tls";
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
  const client = k8s.KubernetesObjectApi.makeApiClient(kc);
  return client.patch(object, undefined, undefined, FIELD_MANAGER, true, k8s.PatchStrategy.ServerSideApply);
}

/** How long {@link probeApiServer} gives one connection attempt: a live API server answers a handshake in milliseconds. */
export const PROBE_TIMEOUT_MS = 3_000;

/**
 * One TLS handshake with the API server `kc` points at, verified against its CA: resolves
 * undefined when the server answers, or why it cannot be reached (`connection refused (…)`,
 * `timed out (…)`, `TLS: unknown authority (…)`). Sends no request, so it needs no rights; it
 * is the short look taken before a long wait on a cluster that may be gone.
 */
export function probeApiServer(kc: k8s.KubeConfig, timeoutMs = PROBE_TIMEOUT_MS): Promise<string | undefined> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) return Promise.resolve("the kubeconfig's current context names no cluster");
  const url = new URL(cluster.server);
  const ca = cluster.caData
    ? Buffer.from(cluster.caData, "base64")
    : cluster.caFile
      ? readFileSync(cluster.caFile)
      : undefined;
  const servername = cluster.tlsServerName ?? (isIP(url.hostname) ? undefined : url.hostname);
  return new Promise((resolve) => {
    const socket = connect({
      host: url.hostname,
      port: Number(url.port || 443),
      ...(ca ? { ca } : {}),
      ...(servername ? { servername } : {}),
      rejectUnauthorized: !cluster.skipTLSVerify,
    });
    const timer = setTimeout(
      () => socket.destroy(Object.assign(new Error(`no TLS handshake within ${timeoutMs} ms`), { code: "ETIMEDOUT" })),
      timeoutMs,
    );
    const done = (outcome: string | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    socket.once("secureConnect", () => done(undefined));
    socket.once("error", (error) => done(describeConnectionFailure(error) ?? error.message));
  });
}
