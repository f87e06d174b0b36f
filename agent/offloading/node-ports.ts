/**
 * The virtual nodes' node ports (core/offloading/node-ports.ts decides which): listeners at the
 * agent pod's address, the virtual nodes' InternalIP, each relaying to its Service's cluster IP.
 * TCP: one connection to the Service per connection accepted. UDP: one socket to the Service per
 * client address and port, closed after a minute without traffic, at most
 * {@link MAX_UDP_SESSIONS} per port (a flood of new sources is dropped, not turned into sockets).
 */
import * as k8s from "@kubernetes/client-node";
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { connect, createServer, isIP, type Server } from "node:net";
import type { NamespaceOffloading } from "../../core/api/index.js";
import { describeFailure, serverOf } from "../../core/kube/client.js";
import { listOffloading } from "../../core/offloading/objects.js";
import { forwardKey, nodePortForwards, type NodePortForward } from "../../core/offloading/node-ports.js";
import type { Reporter } from "../reporter.js";

const STEP = "node ports";

/** UDP clients relayed at once on one node port. */
export const MAX_UDP_SESSIONS = 1024;
/** A UDP client's socket to the Service closes after this long without traffic. */
const UDP_IDLE_MS = 60_000;

/** One open listener and the forward it serves (replaced in place when the Service's target changes). */
interface Listener {
  forward: NodePortForward;
  readonly close: () => void;
}

/** One UDP client's socket to the Service, and its idle timer. */
interface UdpSession {
  readonly socket: Socket;
  idle: NodeJS.Timeout | undefined;
}

/** The listeners at one address; {@link serve} makes them what the Services say. */
export class NodePortForwarder {
  private readonly listeners = new Map<string, Listener>();
  /** Ports that could not be opened, with why: said once, tried again at each pass. */
  private readonly refused = new Map<string, string>();

  constructor(
    private readonly address: string,
    private readonly reporter: Reporter,
  ) {}

  /** Opens a listener per forward not open yet, retargets the changed ones, closes the others. */
  serve(forwards: readonly NodePortForward[]): void {
    const wanted = new Map(forwards.map((forward) => [forwardKey(forward), forward]));
    for (const [key, listener] of this.listeners)
      if (!wanted.has(key)) {
        listener.close();
        this.listeners.delete(key);
      }
    for (const [key, forward] of wanted) {
      const open = this.listeners.get(key);
      if (open) open.forward = forward;
      else this.open(key, forward);
    }
    for (const key of this.refused.keys()) if (!wanted.has(key)) this.refused.delete(key);
  }

  /** Closes every listener. */
  close(): void {
    for (const listener of this.listeners.values()) listener.close();
    this.listeners.clear();
  }

  private open(key: string, forward: NodePortForward): void {
    const fail = (error: Error): void => {
      this.listeners.get(key)?.close();
      this.listeners.delete(key);
      const why = `${STEP}: cannot answer ${forward.protocol} node port ${forward.nodePort} of Service ${forward.service} at ${this.address}: ${error.message}`;
      if (this.refused.get(key) !== why) this.reporter.warn(why);
      this.refused.set(key, why);
    };
    const listener: Listener = forward.protocol === "TCP" ? this.openTcp(forward, fail) : this.openUdp(forward, fail);
    this.listeners.set(key, listener);
  }

  private openTcp(forward: NodePortForward, fail: (error: Error) => void): Listener {
    const listener: Listener = { forward, close: () => server.close() };
    const server: Server = createServer((client) => {
      const { host, port } = listener.forward.target;
      const upstream = connect(port, host);
      const end = (): void => {
        client.destroy();
        upstream.destroy();
      };
      client.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
      client.pipe(upstream).pipe(client);
    });
    server.on("error", fail);
    server.listen(forward.nodePort, this.address);
    return listener;
  }

  private openUdp(forward: NodePortForward, fail: (error: Error) => void): Listener {
    const sessions = new Map<string, UdpSession>();
    const server = createSocket(isIP(this.address) === 6 ? "udp6" : "udp4");
    const listener: Listener = {
      forward,
      close: () => {
        for (const session of sessions.values()) endSession(session);
        sessions.clear();
        server.close();
      },
    };
    const endSession = (session: UdpSession): void => {
      clearTimeout(session.idle);
      session.socket.close();
    };
    server.on("message", (message: Buffer, client: RemoteInfo) => {
      const key = `${client.address}:${client.port}`;
      const { host, port } = listener.forward.target;
      let session = sessions.get(key);
      if (!session) {
        if (sessions.size >= MAX_UDP_SESSIONS) return;
        const socket = createSocket(isIP(host) === 6 ? "udp6" : "udp4");
        // Only the Service's answers go back to the client (kube-proxy gives them its address and port).
        socket.on("message", (reply: Buffer, from: RemoteInfo) => {
          if (from.address === host && from.port === port) server.send(reply, client.port, client.address);
        });
        socket.on("error", () => undefined);
        session = { socket, idle: undefined };
        sessions.set(key, session);
      }
      const current = session;
      clearTimeout(current.idle);
      current.idle = setTimeout(() => {
        endSession(current);
        sessions.delete(key);
      }, UDP_IDLE_MS);
      current.socket.send(message, port, host);
    });
    server.on("error", fail);
    server.bind(forward.nodePort, this.address);
    return listener;
  }
}

/** Reads the Services of the namespaces this cluster offloads, and has `forwarder` answer their node ports. */
export async function answerNodePorts(kc: k8s.KubeConfig, forwarder: NodePortForwarder): Promise<void> {
  const offloadings = (await listOffloading<NamespaceOffloading>(kc, "namespaceoffloadings")) ?? [];
  const namespaces = [...new Set(offloadings.map((offloading) => offloading.metadata.namespace!))];
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const services = await Promise.all(
    namespaces.map(
      async (namespace) =>
        (
          await core
            .listNamespacedService({ namespace })
            .catch(describeFailure(`${STEP}: listing the Services of ${namespace}`, serverOf(kc)))
        ).items,
    ),
  );
  forwarder.serve(nodePortForwards(services.flat()));
}
