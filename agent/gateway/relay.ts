/**
 * The gateway's relay of its cluster's control plane into a tunnel: the gateway serves its
 * cluster's API server (and auth service) on its own tunnel address, at the ports the endpoint
 * names, so that whoever dials them through the tunnel reaches them whichever node they run on:
 * on the provider's end of an in-band peering, the consumer's agent (`spec.inBandPorts`); on a
 * consumer's end, the pods it offloads to the peer, whose `kubernetes.default` it is
 * (`spec.podApiPort`).
 *
 * Why the gateway terminates these connections rather than forwarding packets: a packet forwarded
 * to a Service is DNATed by kube-proxy, whose masquerade then takes the place of the gateway's
 * source NETMAP, and the answer, addressed to the peer's real pod address, is delivered inside this
 * cluster whenever the two pod CIDRs overlap. A connection that ends here takes the INPUT path,
 * where the peer already arrives under its remapped address (the gateway rewrote it), and the
 * gateway's own connection onward is a plain one from its node. TLS passes through untouched: the
 * peer verifies the API server's and the auth service's certificates itself.
 */
import * as k8s from "@kubernetes/client-node";
import * as net from "node:net";
import { SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { AGENT_NAME } from "../../core/cluster/agent-components.js";
import { describeFailure, serverOf } from "../../core/kube/client.js";
import type { Reporter } from "../reporter.js";

const STEP = "gateway";

/**
 * Connections one relayed port holds at once: an agent needs a handful (its client's pool, a
 * watch); beyond this a peer is refused more, so that it cannot exhaust the gateway's sockets.
 */
export const RELAY_MAX_CONNECTIONS = 64;

/** Where a relayed port leads. */
export interface RelayTarget {
  readonly host: string;
  readonly port: number;
}

/** What the relay serves on one address: the API server on some ports, the auth service on one. */
export interface RelayAsk {
  /** The tunnel address to listen on. */
  readonly address: string;
  /** The ports that lead to the API server (an in-band peer's agent's, the offloaded pods'). */
  readonly apiServer: readonly number[];
  /** The port that leads to the auth service (an in-band peer's agent's). */
  readonly auth?: number;
}

/** The ports of an endpoint's spec to relay, or undefined when it asks for none. */
export function relayPorts(spec: {
  readonly inBandPorts?: { readonly apiServer: number; readonly auth: number };
  readonly podApiPort?: number;
}): Omit<RelayAsk, "address"> | undefined {
  const apiServer = [...new Set([spec.inBandPorts?.apiServer, spec.podApiPort])].filter(
    (port): port is number => port !== undefined,
  );
  // In-band ports always name an API server port, so none here means nothing to relay.
  if (apiServer.length === 0) return undefined;
  return { apiServer, ...(spec.inBandPorts ? { auth: spec.inBandPorts.auth } : {}) };
}

/** The API server as the gateway itself reaches it (in a pod: the `kubernetes` Service). */
export function apiServerTarget(kc: k8s.KubeConfig): RelayTarget {
  const url = new URL(serverOf(kc));
  return { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || "443") };
}

/** The auth service: the cluster address and port of the agent's Service. */
export async function authServiceTarget(kc: k8s.KubeConfig): Promise<RelayTarget> {
  const service = await kc
    .makeApiClient(k8s.CoreV1Api)
    .readNamespacedService({ name: AGENT_NAME, namespace: SYSTEM_NAMESPACE })
    .catch(
      describeFailure(`${STEP}: reading the auth service's Service ${SYSTEM_NAMESPACE}/${AGENT_NAME}`, serverOf(kc)),
    );
  const host = service.spec?.clusterIP;
  const port = service.spec?.ports?.find((p) => p.name === "auth")?.port;
  if (!host || host === "None" || !port)
    throw new Error(
      `${STEP}: Service ${SYSTEM_NAMESPACE}/${AGENT_NAME} has no cluster address with an "auth" port to relay to`,
    );
  return { host, port };
}

/** One relayed port: its server, or none where the node already serves the port on every address. */
interface Listening {
  readonly what: string;
  readonly server: net.Server | undefined;
  /** Its open connections, cut when it stops. */
  readonly connections: Set<net.Socket>;
}

/** The relays of a gateway, one set per endpoint that asks for them. */
export class InBandRelay {
  private readonly running = new Map<string, { readonly key: string; readonly listening: readonly Listening[] }>();

  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly reporter: Reporter,
  ) {}

  /** Serves `ask` for endpoint `uid` (replacing what served it before, if that differs). Idempotent. */
  async ensure(uid: string, peer: string, ask: RelayAsk): Promise<void> {
    const key = JSON.stringify(ask);
    if (this.running.get(uid)?.key === key) return;
    await this.stop(uid);
    const targets: readonly (readonly [string, number, () => Promise<RelayTarget>])[] = [
      ...ask.apiServer.map((port) => ["API server", port, async () => apiServerTarget(this.kc)] as const),
      ...(ask.auth === undefined ? [] : [["auth service", ask.auth, () => authServiceTarget(this.kc)] as const]),
    ];
    const listening: Listening[] = [];
    try {
      for (const [what, port, target] of targets)
        listening.push(await this.listen(`${what} for ${peer} on ${ask.address}:${port}`, ask.address, port, target));
    } catch (error) {
      await Promise.all(listening.map(closeListening));
      throw error;
    }
    this.running.set(uid, { key, listening });
  }

  /** Stops the relays of endpoint `uid`, if any; open connections are cut. */
  async stop(uid: string): Promise<void> {
    const running = this.running.get(uid);
    this.running.delete(uid);
    await Promise.all((running?.listening ?? []).map(closeListening));
  }

  /** Stops every relay (the gateway shutting down). */
  async stopAll(): Promise<void> {
    for (const uid of [...this.running.keys()]) await this.stop(uid);
  }

  private listen(what: string, address: string, port: number, target: () => Promise<RelayTarget>): Promise<Listening> {
    const connections = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      connections.add(socket);
      socket.once("close", () => connections.delete(socket));
      this.relay(what, socket, target);
    });
    server.maxConnections = RELAY_MAX_CONNECTIONS;
    return new Promise((resolve, reject) => {
      server.once("error", (error: NodeJS.ErrnoException) => {
        if (error.code === "EADDRINUSE") {
          // Something of this node listens on the port at every address (an API server or an
          // agent on the node's own network): the peer reaches it at the tunnel address as it is.
          this.reporter.info(`${STEP}: relay of the ${what}: the port is served on this node already; not relayed`);
          resolve({ what, server: undefined, connections });
        } else reject(new Error(`${STEP}: relaying the ${what}: ${error.message}`));
      });
      server.listen({ host: address, port }, () => {
        this.reporter.info(`${STEP}: relaying the ${what}`);
        resolve({ what, server, connections });
      });
    });
  }

  private relay(what: string, socket: net.Socket, target: () => Promise<RelayTarget>): void {
    socket.on("error", () => socket.destroy());
    socket.pause();
    target().then(
      ({ host, port }) => {
        const upstream = net.connect({ host, port });
        upstream.on("error", (error) => {
          this.reporter.warn(`${STEP}: relay of the ${what}: ${host}:${port}: ${error.message}`);
          socket.destroy();
        });
        socket.on("close", () => upstream.destroy());
        upstream.on("close", () => socket.destroy());
        socket.pipe(upstream);
        upstream.pipe(socket);
        socket.resume();
      },
      (error: Error) => {
        this.reporter.warn(`${STEP}: relay of the ${what}: ${error.message}`);
        socket.destroy();
      },
    );
  }
}

/** Closes a relayed port's server and cuts its connections. */
function closeListening(listening: Listening): Promise<void> {
  const { server, connections } = listening;
  if (!server) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    for (const socket of connections) socket.destroy();
  });
}
