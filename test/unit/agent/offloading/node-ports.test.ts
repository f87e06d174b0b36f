/**
 * The node-port relay over real sockets on the loopback: a TCP and a UDP echo server stand for a
 * Service's cluster IP; the forwarder answers its node ports, follows a changed target, closes what
 * no Service names any more, and says once why a port it cannot take is not answered.
 */
import { createSocket, type Socket } from "node:dgram";
import { once } from "node:events";
import { connect, createServer, type AddressInfo, type Server } from "node:net";
import { NodePortForwarder } from "../../../../agent/offloading/node-ports.js";
import type { NodePortForward } from "../../../../core/offloading/node-ports.js";
import type { Reporter } from "../../../../agent/reporter.js";

const HOST = "127.0.0.1";

/** A TCP server answering each connection with `greeting`. */
async function tcpServer(greeting: string): Promise<Server> {
  const server = createServer((socket) => socket.end(greeting));
  server.listen(0, HOST);
  await once(server, "listening");
  return server;
}

/** A UDP server answering each datagram with `prefix` and the datagram. */
async function udpServer(prefix: string): Promise<Socket> {
  const server = createSocket("udp4");
  server.on("message", (message, from) => server.send(`${prefix}${message}`, from.port, from.address));
  server.bind(0, HOST);
  await once(server, "listening");
  return server;
}

/** A port free on the loopback now. */
async function freePort(): Promise<number> {
  const probe = createServer().listen(0, HOST);
  await once(probe, "listening");
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, "close");
  return port;
}

/** What a TCP client reads from `port` until the server ends; the error code if it cannot connect. */
function tcpRead(port: number): Promise<string> {
  return new Promise((resolve) => {
    let read = "";
    const socket = connect(port, HOST);
    socket.on("data", (chunk) => (read += chunk));
    socket.on("end", () => resolve(read));
    socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** The answer to one datagram sent to `port`. */
async function udpAsk(port: number, text: string): Promise<string> {
  const client = createSocket("udp4");
  try {
    client.send(text, port, HOST);
    const [reply] = (await once(client, "message", { signal: AbortSignal.timeout(5000) })) as [Buffer];
    return reply.toString();
  } finally {
    client.close();
  }
}

const portOf = (server: Server | Socket): number => (server.address() as AddressInfo).port;

describe("NodePortForwarder", () => {
  const warnings: string[] = [];
  const reporter: Reporter = { info: () => undefined, warn: (line) => warnings.push(line) };
  let servers: (Server | Socket)[] = [];
  let forwarder: NodePortForwarder;

  beforeEach(() => {
    warnings.length = 0;
    forwarder = new NodePortForwarder(HOST, reporter);
  });
  afterEach(() => {
    forwarder.close();
    for (const server of servers) server.close();
    servers = [];
  });

  test("GIVEN a TCP and a UDP node port WHEN served THEN each relays to its Service; a new target is followed; a port no longer named is closed", async () => {
    const [first, second, dns] = [await tcpServer("first"), await tcpServer("second"), await udpServer("dns:")];
    servers = [first, second, dns];
    const [tcpPort, udpPort] = [await freePort(), await freePort()];
    const tcp: NodePortForward = {
      nodePort: tcpPort,
      protocol: "TCP",
      target: { host: HOST, port: portOf(first) },
      service: "shop/web",
    };
    const udp: NodePortForward = {
      nodePort: udpPort,
      protocol: "UDP",
      target: { host: HOST, port: portOf(dns) },
      service: "shop/dns",
    };

    forwarder.serve([tcp, udp]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await tcpRead(tcpPort)).toBe("first");
    expect(await udpAsk(udpPort, "who")).toBe("dns:who");

    forwarder.serve([{ ...tcp, target: { host: HOST, port: portOf(second) } }, udp]);
    expect(await tcpRead(tcpPort)).toBe("second");

    forwarder.serve([udp]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await tcpRead(tcpPort)).toBe("ECONNREFUSED");
    expect(warnings).toEqual([]);
  });

  test("GIVEN a node port another listener holds WHEN served at every pass THEN it is not answered, and why is said once", async () => {
    const holder = await tcpServer("holder");
    const target = await tcpServer("service");
    servers = [holder, target];
    const taken: NodePortForward = {
      nodePort: portOf(holder),
      protocol: "TCP",
      target: { host: HOST, port: portOf(target) },
      service: "shop/taken",
    };

    forwarder.serve([taken]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    forwarder.serve([taken]);
    await new Promise((resolve) => setTimeout(resolve, 100));

    expect(await tcpRead(portOf(holder))).toBe("holder");
    const port = portOf(holder);
    expect(warnings).toEqual([
      `node ports: cannot answer TCP node port ${port} of Service shop/taken at ${HOST}: ` +
        `listen EADDRINUSE: address already in use ${HOST}:${port}`,
    ]);
  });
});
