/**
 * The virtual nodes' kubelet API, as far as `kubectl logs`, `exec`, `attach` (and so `run -i`),
 * `port-forward` and metrics-server (`/metrics/resource`, kubelet-metrics.ts) need it: the API server calls a node's kubelet for them (`/containerLogs/…`,
 * `/exec/…`, `/attach/…`, `/portForward/…`), and each virtual node announces this endpoint as its
 * kubelet's (heartbeat.ts). Each call is forwarded to the pod's provider, to its API server's
 * `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward`, with the identity the peering
 * issued, which may do so only to the pods of the namespaces the provider made for this consumer.
 * The streaming calls are upgraded connections (SPDY or WebSocket), joined byte for byte.
 *
 * A caller is who the API server says: the user of a client certificate of this cluster's client
 * CA, or of a bearer token (a TokenReview), and must be allowed `nodes/proxy` on the pod's node
 * (`nodes/metrics` for the metrics; asked of the API server, as a kubelet asks), as for any
 * kubelet. A pod that is not offloaded is not found.
 */
import * as k8s from "@kubernetes/client-node";
import type { IncomingMessage, ServerResponse } from "node:http";
import * as https from "node:https";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import { NAMESPACE_OFFLOADING_NAME, type OutgoingPeering } from "../../core/api/index.js";
import { listOutgoingPeerings } from "../../core/virtual-node/outgoing-peering.js";
import { forgeCertificateAuthority, forgeServingCertificate } from "../../core/pki/x509.js";
import { readNamespaceOffloading } from "../../core/offloading/namespace-offloading.js";
import { readOptional, serverOf } from "../../core/kube/client.js";
import { readClientCa } from "../auth-service/tls-material.js";
import { recentPeeringIdentity } from "../heartbeat.js";
import { OffloadedPodMetrics } from "./kubelet-metrics.js";
import type { Reporter } from "../reporter.js";

const STEP = "kubelet endpoint";

/** What a call is for, once checked: the offloaded pod, where it runs, and as whom to get there. */
interface Target {
  readonly provider: k8s.KubeConfig;
  readonly remoteNamespace: string;
  readonly pod: string;
  /** Empty for a port forward, which is to the pod, not a container. */
  readonly container: string;
}

/** The kubelet's streaming calls, by the first part of their path, and the pod subresource each becomes. */
const STREAMS = { exec: "exec", attach: "attach", portForward: "portforward" } as const;
type StreamKind = keyof typeof STREAMS;

const isStream = (kind: string): kind is StreamKind => Object.prototype.hasOwnProperty.call(STREAMS, kind);

/** A refused call: the status and why, which the API server passes on to `kubectl`. */
class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Who calls, as the API server knows them. */
interface Caller {
  readonly user: string;
  readonly groups: string[];
}

/**
 * The caller, as a kubelet tells: the user and groups of a client certificate this cluster's
 * client CA signed (the API server's), or of a bearer token the API server vouches for (a
 * TokenReview: metrics-server presents its service account's).
 */
async function callerOf(kc: k8s.KubeConfig, request: IncomingMessage): Promise<Caller> {
  const socket = request.socket as TLSSocket;
  if (socket.authorized) {
    const subject = (socket.getPeerCertificate()?.subject ?? {}) as unknown as Record<
      string,
      string | string[] | undefined
    >;
    const user = [subject["CN"]].flat()[0];
    if (user) return { user, groups: [subject["O"] ?? []].flat() };
  }
  const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1];
  if (!token) throw new Refused(401, "a client certificate of this cluster, or a bearer token, is required");
  const review = await kc.makeApiClient(k8s.AuthenticationV1Api).createTokenReview({ body: { spec: { token } } });
  const user = review.status?.authenticated ? review.status.user?.username : undefined;
  if (!user) throw new Refused(401, "the bearer token is not one this cluster's API server vouches for");
  return { user, groups: review.status?.user?.groups ?? [] };
}

/** Whether the API server lets `caller` `verb` node `nodeName`'s kubelet `subresource` (`proxy`, `metrics`), as a kubelet asks. */
async function mayReach(
  kc: k8s.KubeConfig,
  caller: Caller,
  verb: string,
  nodeName: string,
  subresource: "proxy" | "metrics" = "proxy",
): Promise<boolean> {
  const review = await kc.makeApiClient(k8s.AuthorizationV1Api).createSubjectAccessReview({
    body: {
      spec: {
        user: caller.user,
        groups: caller.groups,
        resourceAttributes: { verb, resource: "nodes", subresource, name: nodeName },
      },
    },
  });
  return review.status?.allowed === true;
}

/**
 * Checks a call (`/containerLogs|exec|attach/{namespace}/{pod}/{container}`, or
 * `/portForward/{namespace}/{pod}[/{uid}]`) and finds where it goes.
 */
async function targetOf(kc: k8s.KubeConfig, request: IncomingMessage, path: string[], verb: string): Promise<Target> {
  const [kind, namespace, pod, third] = path;
  const container = kind === "portForward" ? "" : third;
  if (!namespace || !pod || container === undefined || (kind !== "portForward" && !container))
    throw new Refused(404, `no such kubelet path: /${path.join("/")}`);
  const caller = await callerOf(kc, request);
  const live = await readOptional(() => kc.makeApiClient(k8s.CoreV1Api).readNamespacedPod({ name: pod, namespace }));
  const nodeName = live?.spec?.nodeName;
  const peerings = await listOutgoingPeerings(kc);
  const peering: OutgoingPeering | undefined = peerings.find((p) => p.spec.virtualNodeName === nodeName);
  if (!live || !nodeName || !peering)
    throw new Refused(404, `pod ${namespace}/${pod} is on no virtual node of this agent`);
  if (!(await mayReach(kc, caller, verb, nodeName))) {
    throw new Refused(403, `user ${caller.user} may not ${verb} nodes/proxy of ${nodeName}`);
  }
  const offloading = await readNamespaceOffloading(kc, namespace);
  const report = offloading?.status?.remotes?.find((r) => r.virtualNode === nodeName && r.phase === "Ready");
  if (!report)
    throw new Refused(
      404,
      `namespace ${namespace} is not offloaded through ${nodeName} (${NAMESPACE_OFFLOADING_NAME})`,
    );
  return {
    provider: await recentPeeringIdentity(kc, peering, Date.now()),
    remoteNamespace: report.remoteNamespace,
    pod,
    container,
  };
}

/** The provider API URL of a pod's `sub` (`log`, or a streaming one), with `query`. */
function providerUrl(target: Target, sub: "log" | (typeof STREAMS)[StreamKind], query: URLSearchParams): URL {
  const url = new URL(
    `${serverOf(target.provider)}/api/v1/namespaces/${encodeURIComponent(target.remoteNamespace)}/pods/${encodeURIComponent(target.pod)}/${sub}`,
  );
  url.search = query.toString();
  return url;
}

/** The kubelet's log query, in the API's terms (the same names, and the container). */
function logQuery(incoming: URLSearchParams, container: string): URLSearchParams {
  const query = new URLSearchParams({ container });
  for (const key of ["follow", "previous", "timestamps", "tailLines", "sinceSeconds", "sinceTime", "limitBytes"]) {
    const value = incoming.get(key);
    if (value !== null) query.set(key, value);
  }
  return query;
}

/**
 * The kubelet's query of a streaming call in the API's terms: for exec and attach, `input`,
 * `output`, `error` become `stdin`, `stdout`, `stderr` (exec keeps its `command`); a port forward
 * keeps the ports asked for in the query (WebSocket; over SPDY they come in each stream's headers).
 */
function streamQuery(kind: StreamKind, incoming: URLSearchParams, container: string): URLSearchParams {
  if (kind === "portForward") {
    const query = new URLSearchParams();
    for (const port of incoming.getAll("port")) query.append("ports", port);
    return query;
  }
  const query = new URLSearchParams({ container });
  if (kind === "exec") for (const command of incoming.getAll("command")) query.append("command", command);
  const flag = (key: string): string => (["1", "true"].includes(incoming.get(key) ?? "") ? "true" : "false");
  query.set("stdin", flag("input"));
  query.set("stdout", flag("output"));
  query.set("stderr", flag("error"));
  query.set("tty", flag("tty"));
  return query;
}

function refuse(response: ServerResponse, error: unknown): void {
  const status = error instanceof Refused ? error.status : 502;
  if (!response.headersSent) response.writeHead(status, { "Content-Type": "text/plain" });
  response.end(`${(error as Error).message}\n`);
}

/** Forwards a log request, streaming (`follow`) or not. */
async function forwardLogs(kc: k8s.KubeConfig, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? "/", "https://kubelet");
  const path = url.pathname.split("/").filter(Boolean);
  const target = await targetOf(kc, request, path, "get");
  const options: https.RequestOptions = { method: "GET" };
  await target.provider.applyToHTTPSOptions(options);
  const upstream = https.request(
    providerUrl(target, "log", logQuery(url.searchParams, target.container)),
    options,
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, { "Content-Type": answer.headers["content-type"] ?? "text/plain" });
      answer.pipe(response);
    },
  );
  upstream.on("error", (error) =>
    refuse(response, new Error(`provider ${serverOf(target.provider)}: ${error.message}`)),
  );
  request.on("close", () => upstream.destroy());
  upstream.end();
}

/** Serves `/metrics/resource` of the virtual nodes the caller may read the metrics of (`nodes/metrics`). */
async function serveMetrics(
  kc: k8s.KubeConfig,
  metrics: OffloadedPodMetrics,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const caller = await callerOf(kc, request);
  const text = await metrics.scrape((node) => mayReach(kc, caller, "get", node, "metrics"));
  if (text === undefined)
    throw new Refused(403, `user ${caller.user} may not get nodes/metrics of any virtual node here`);
  response.writeHead(200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
  response.end(text);
}

/** Headers of an upgrade that go on to the provider: the protocol ones, not the caller's credentials. */
function upgradeHeaders(request: IncomingMessage): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { Connection: "Upgrade" };
  for (const [key, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (key === "upgrade" || key.startsWith("x-stream-protocol") || key.startsWith("sec-websocket"))
      headers[key] = value;
  }
  return headers;
}

/**
 * Forwards an exec, attach or port forward (an upgraded connection, SPDY or WebSocket) to the
 * provider and joins the two streams.
 */
async function forwardStream(
  kc: k8s.KubeConfig,
  kind: StreamKind,
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const url = new URL(request.url ?? "/", "https://kubelet");
  const path = url.pathname.split("/").filter(Boolean);
  const target = await targetOf(kc, request, path, "create");
  const options: https.RequestOptions = { method: request.method ?? "POST", headers: upgradeHeaders(request) };
  await target.provider.applyToHTTPSOptions(options);
  const upstream = https.request(
    providerUrl(target, STREAMS[kind], streamQuery(kind, url.searchParams, target.container)),
    options,
  );
  upstream.on("upgrade", (answer, remote, remoteHead) => {
    const lines = [`HTTP/1.1 101 ${answer.statusMessage ?? "Switching Protocols"}`];
    for (let i = 0; i < answer.rawHeaders.length; i += 2)
      lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
    socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (remoteHead.length) socket.write(remoteHead);
    if (head.length) remote.write(head);
    socket.pipe(remote).pipe(socket);
    socket.on("error", () => remote.destroy());
    remote.on("error", () => socket.destroy());
  });
  upstream.on("response", (answer) => {
    // No upgrade: the provider refused (its status and message go back as they are).
    socket.write(
      `HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n`,
    );
    answer.pipe(socket);
  });
  upstream.on("error", (error) => {
    socket.end(
      `HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\nprovider ${serverOf(target.provider)}: ${error.message}\n`,
    );
  });
  upstream.end();
}

/** Where and as whom the endpoint runs. */
export interface KubeletEndpointOptions {
  readonly kc: k8s.KubeConfig;
  /** The agent pod's address: the serving certificate names it. */
  readonly address: string;
  readonly port: number;
  readonly reporter: Reporter;
  readonly signal: AbortSignal;
}

/** Starts the endpoint; resolves once it listens. It closes when `signal` aborts. */
export async function startKubeletEndpoint(options: KubeletEndpointOptions): Promise<void> {
  const { kc, reporter } = options;
  const clientCa = await readClientCa(kc);
  if (!clientCa)
    reporter.warn(`${STEP}: this cluster's client CA is not readable; every call is refused until the agent restarts`);
  // The API server does not check a kubelet's serving certificate unless told to; a key of its own is enough here.
  const ca = forgeCertificateAuthority("pulumi-liqo virtual kubelet");
  const serving = forgeServingCertificate(ca, "pulumi-liqo virtual kubelet", [], [options.address]);
  // Without the client CA, the throwaway CA above (it signs no client) is the only one trusted: no
  // `ca` at all would make Node trust its public roots, and let in anyone whose name they vouch for.
  const trusted = clientCa || ca.cert;
  const metrics = new OffloadedPodMetrics(kc, reporter);
  const server = https.createServer(
    // A certificate is asked for, not required: a caller without one may present a bearer token
    // (callerOf); one that presents a certificate no trusted CA signed is only not authorized by it.
    { cert: serving.cert, key: serving.key, ca: trusted, requestCert: true, rejectUnauthorized: false },
    (request, response) => {
      const path = new URL(request.url ?? "/", "https://kubelet").pathname;
      const serve =
        path === "/metrics/resource"
          ? serveMetrics(kc, metrics, request, response)
          : path.startsWith("/containerLogs/")
            ? forwardLogs(kc, request, response)
            : Promise.reject(new Refused(404, `no such kubelet path: ${path}`));
      serve.catch((error: unknown) => {
        if (!(error instanceof Refused)) reporter.warn(`${STEP}: ${path}: ${(error as Error).message}`);
        refuse(response, error);
      });
    },
  );
  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(request.url ?? "/", "https://kubelet").pathname;
    const fail = (error: unknown): void => {
      const status = error instanceof Refused ? error.status : 502;
      socket.end(
        `HTTP/1.1 ${status} Refused\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${(error as Error).message}\n`,
      );
    };
    const kind = path.split("/")[1] ?? "";
    if (!isStream(kind)) return fail(new Refused(404, `no such kubelet path: ${path}`));
    forwardStream(kc, kind, request, socket, head).catch(fail);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "0.0.0.0", () => resolve());
  });
  options.signal.addEventListener("abort", () => server.close(), { once: true });
  reporter.info(
    `${STEP}: serving the virtual nodes' logs, exec, attach, port-forward and resource metrics on ${options.address}:${options.port}`,
  );
}
