/**
 * The answerer over real UDP and TCP sockets on the loopback, with a recording DNS in the place of
 * the provider's cluster DNS (the local clusters' CoreDNS answers the integration test,
 * test/integration/consumer-dns.test.ts): what it asks, what the pod gets, and what a stranger, a
 * hostile message or an ExternalName aimed at the provider's own names get.
 */
import { createSocket, type Socket } from "node:dgram";
import { connect } from "node:net";
import { decode, encode, type Answer, type DecodedPacket, type Packet } from "dns-packet";
import { serveConsumerDns, type ConsumerDnsListeners } from "../../../../agent/dns/server.js";
import type { ConsumerZone } from "../../../../core/offloading/dns-names.js";

const withoutReach: ConsumerZone = {
  consumer: "b-id",
  namespaces: new Map([["store", "store-b-id"]]),
  aliases: new Map([
    ["vault.store", "kubernetes.default.svc.cluster.local"],
    ["web.store", "db.store.svc.cluster.local"],
  ]),
};
/** The zone the answerer is given: without the consumer's API address and pod names, but in the test that sets them. */
let zone = withoutReach;
const POD = "127.0.0.1";
const STRANGER = "127.0.0.2";

/** What the provider's DNS stand-in answers per name asked, and what it was asked. */
const records: Record<string, { rcode?: number; answers: Answer[] }> = {};
const asked: string[] = [];
let upstream: Socket;
let listeners: ConsumerDnsListeners;
const stop = new AbortController();
const warnings: string[] = [];

beforeAll(async () => {
  upstream = createSocket("udp4");
  upstream.on("message", (message, from) => {
    const query = decode(message);
    const name = query.questions![0]!.name;
    asked.push(name);
    const record = records[name] ?? { rcode: 3, answers: [] };
    const response: Packet = {
      type: "response",
      id: query.id,
      flags: 0x0180 | (record.rcode ?? 0),
      questions: query.questions,
      answers: record.answers,
    };
    upstream.send(encode(response), from.port, from.address);
  });
  await new Promise<void>((resolve) => upstream.bind(0, "127.0.0.1", resolve));
  listeners = await serveConsumerDns({
    listen: { host: "127.0.0.1", port: 0 },
    upstream: { address: "127.0.0.1", port: upstream.address().port },
    domains: { consumer: "cluster.local", provider: "cluster.local" },
    zoneOf: async (address) => (address === POD ? zone : undefined),
    signal: stop.signal,
    reporter: { info: () => undefined, warn: (line: string) => void warnings.push(line) } as never,
    upstreamTimeoutMs: 1000,
  });
});

afterAll(() => {
  stop.abort();
  upstream.close();
});

beforeEach(() => {
  asked.length = 0;
  for (const name of Object.keys(records)) delete records[name];
});

/** Sends `message` over UDP from `from` and resolves with the answer, or undefined after 1.5 s. */
function overUdp(message: Buffer, from = POD): Promise<DecodedPacket | undefined> {
  return new Promise((resolve) => {
    const client = createSocket("udp4");
    const timer = setTimeout(() => finish(undefined), 1500);
    function finish(answer: DecodedPacket | undefined): void {
      clearTimeout(timer);
      client.close();
      resolve(answer);
    }
    client.on("message", (reply) => finish(decode(reply)));
    client.bind(0, from, () => client.send(message, listeners.udpPort, "127.0.0.1"));
  });
}

/** Sends `message` over TCP and resolves with the answer. */
function overTcp(message: Buffer): Promise<DecodedPacket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port: listeners.tcpPort, localAddress: POD });
    let received = Buffer.alloc(0);
    socket.on("error", reject);
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) {
        socket.destroy();
        resolve(decode(received.subarray(2, 2 + received.readUInt16BE(0))));
      }
    });
    const prefix = Buffer.alloc(2);
    prefix.writeUInt16BE(message.length);
    socket.write(Buffer.concat([prefix, message]));
  });
}

const query = (name: string, id = 4242, type: "A" | "SRV" | "PTR" = "A"): Buffer =>
  encode({ type: "query", id, flags: 0x0100, questions: [{ type, name }] });
const a = (name: string, data: string): Answer => ({ type: "A", name, ttl: 5, data });

describe("the answerer of offloaded pods", () => {
  test("GIVEN a consumer's pod asking a name of its namespace THEN the provider's DNS is asked it here, and the pod gets its own names", async () => {
    records["db.store-b-id.svc.cluster.local"] = { answers: [a("db.store-b-id.svc.cluster.local", "10.96.5.5")] };
    const answer = await overUdp(query("db.store.svc.cluster.local"));
    expect(asked).toEqual(["db.store-b-id.svc.cluster.local"]);
    expect(answer).toMatchObject({ id: 4242, type: "response", rcode: "NOERROR" });
    expect(answer!.questions).toEqual([{ type: "A", class: "IN", name: "db.store.svc.cluster.local" }]);
    expect(answer!.answers!.map((r) => [r.name, r.type, (r as { data: unknown }).data])).toEqual([
      ["db.store.svc.cluster.local", "A", "10.96.5.5"],
    ]);
    // The same over TCP, as a pod asks after a truncated answer.
    expect((await overTcp(query("db.store.svc.cluster.local"))).answers!.map((r) => r.name)).toEqual([
      "db.store.svc.cluster.local",
    ]);
  });

  test("GIVEN an address of no consumer's pod THEN it is REFUSED and the provider's DNS is asked nothing", async () => {
    records["db.store-b-id.svc.cluster.local"] = { answers: [a("db.store-b-id.svc.cluster.local", "10.96.5.5")] };
    const answer = await overUdp(query("db.store.svc.cluster.local"), STRANGER);
    expect(answer).toMatchObject({ rcode: "REFUSED", answers: [] });
    expect(asked).toEqual([]);
  });

  test("GIVEN names of the provider's own Services or pods THEN they do not exist for the pod, unasked", async () => {
    for (const name of [
      "kubernetes.default.svc.cluster.local",
      "kube-dns.kube-system.svc.cluster.local",
      "96.10.in-addr.arpa",
    ])
      expect(await overUdp(query(name))).toMatchObject({ rcode: "NXDOMAIN", answers: [] });
    expect(asked).toEqual([]);
  });

  test("GIVEN kubernetes.default, a pod name or the pod's own name THEN the answerer gives their addresses itself, asking no one", async () => {
    zone = {
      ...zone,
      apiAddress: "10.80.0.2",
      ownNames: new Map([[POD, "db-0.db.store.svc.cluster.local"]]),
    };
    try {
      const addressOf = async (name: string): Promise<unknown[]> =>
        (await overUdp(query(name)))!.answers!.map((r) => [r.name, r.type, (r as { data: unknown }).data]);
      expect(await addressOf("kubernetes.default.svc.cluster.local")).toEqual([
        ["kubernetes.default.svc.cluster.local", "A", "10.80.0.2"],
      ]);
      expect(await addressOf("10-244-1-9.store.pod.cluster.local")).toEqual([
        ["10-244-1-9.store.pod.cluster.local", "A", "10.244.1.9"],
      ]);
      expect(await addressOf("db-0.db.store.svc.cluster.local")).toEqual([
        ["db-0.db.store.svc.cluster.local", "A", POD],
      ]);
      // Another type of the same name: it exists, with no such records.
      expect(await overUdp(query("kubernetes.default.svc.cluster.local", 4245, "SRV"))).toMatchObject({
        rcode: "NOERROR",
        answers: [],
      });
      expect(asked).toEqual([]);
    } finally {
      zone = withoutReach;
    }
  });

  test("GIVEN addresses' reverse names THEN the pod gets its own Services' names as it knows them, and the provider's own addresses do not exist", async () => {
    const ptr = (name: string, data: string): Answer => ({ type: "PTR", name, ttl: 5, data });
    // The address of a Service of the consumer's, in its namespace here.
    records["5.5.96.10.in-addr.arpa"] = { answers: [ptr("5.5.96.10.in-addr.arpa", "db.store-b-id.svc.cluster.local")] };
    // The provider's own Services and pods: their names are the provider's.
    records["1.0.96.10.in-addr.arpa"] = {
      answers: [ptr("1.0.96.10.in-addr.arpa", "kubernetes.default.svc.cluster.local")],
    };
    records["7.0.244.10.in-addr.arpa"] = {
      answers: [ptr("7.0.244.10.in-addr.arpa", "10-244-0-7.kube-dns.kube-system.svc.cluster.local")],
    };
    // A record for another name, slipped into an answer.
    records["6.5.96.10.in-addr.arpa"] = { answers: [ptr("1.0.96.10.in-addr.arpa", "db.store-b-id.svc.cluster.local")] };
    const ownService = await overUdp(query("5.5.96.10.in-addr.arpa", 4243, "PTR"));
    expect(ownService!.answers!.map((r) => [r.name, r.type, (r as { data: unknown }).data])).toEqual([
      ["5.5.96.10.in-addr.arpa", "PTR", "db.store.svc.cluster.local"],
    ]);
    for (const name of [
      "1.0.96.10.in-addr.arpa",
      "7.0.244.10.in-addr.arpa",
      "6.5.96.10.in-addr.arpa",
      "9.9.9.10.in-addr.arpa",
    ])
      expect(await overUdp(query(name, 4244, "PTR"))).toMatchObject({
        rcode: "NXDOMAIN",
        answers: [],
        authorities: [],
      });
  });

  test("GIVEN a CNAME aimed at a provider's Service THEN the pod gets it and what its own name holds, never the provider's address", async () => {
    // An ExternalName of the consumer's namespace here: the provider's DNS follows its CNAME in its
    // own namespaces (`db.store` is one of the provider's), the answerer as the pod would ask it.
    records["ext.store-b-id.svc.cluster.local"] = {
      answers: [
        { type: "CNAME", name: "ext.store-b-id.svc.cluster.local", ttl: 5, data: "db.store.svc.cluster.local" },
        a("db.store.svc.cluster.local", "10.0.0.99"),
      ],
    };
    records["db.store-b-id.svc.cluster.local"] = { answers: [a("db.store-b-id.svc.cluster.local", "10.96.5.5")] };
    const answer = await overUdp(query("ext.store.svc.cluster.local"));
    expect(answer!.answers!.map((r) => [r.name, r.type, (r as { data: unknown }).data])).toEqual([
      ["ext.store.svc.cluster.local", "CNAME", "db.store.svc.cluster.local"],
      ["db.store.svc.cluster.local", "A", "10.96.5.5"],
    ]);
    expect(asked).toEqual(["ext.store-b-id.svc.cluster.local", "db.store-b-id.svc.cluster.local"]);

    // Aimed at the provider's API: the CNAME, then nothing (the pod's `default` is not offloaded).
    records["api.store-b-id.svc.cluster.local"] = {
      answers: [
        {
          type: "CNAME",
          name: "api.store-b-id.svc.cluster.local",
          ttl: 5,
          data: "kubernetes.default.svc.cluster.local",
        },
        a("kubernetes.default.svc.cluster.local", "10.96.0.1"),
      ],
    };
    const aimed = await overUdp(query("api.store.svc.cluster.local"));
    expect(aimed).toMatchObject({ rcode: "NXDOMAIN" });
    expect(JSON.stringify(aimed!.answers)).not.toContain("10.96.0.1");
  });

  test("GIVEN an ExternalName of the consumer's THEN the pod gets its CNAME and what its target holds as it would ask it", async () => {
    records["db.store-b-id.svc.cluster.local"] = { answers: [a("db.store-b-id.svc.cluster.local", "10.96.5.5")] };
    const answer = await overUdp(query("web.store.svc.cluster.local"));
    expect(answer!.answers!.map((r) => [r.name, r.type, (r as { data: unknown }).data])).toEqual([
      ["web.store.svc.cluster.local", "CNAME", "db.store.svc.cluster.local"],
      ["db.store.svc.cluster.local", "A", "10.96.5.5"],
    ]);
    expect(asked).toEqual(["db.store-b-id.svc.cluster.local"]);
    // Aimed at the provider's API server: the CNAME, and that the name does not exist for the pod, unasked.
    asked.length = 0;
    const aimed = await overUdp(query("vault.store.svc.cluster.local"));
    expect(aimed).toMatchObject({ rcode: "NXDOMAIN" });
    expect(aimed!.answers!.map((r) => r.type)).toEqual(["CNAME"]);
    expect(asked).toEqual([]);
  });

  test("GIVEN records naming the provider's own namespaces in an answer THEN they are dropped", async () => {
    records["_http._tcp.web.store-b-id.svc.cluster.local"] = {
      answers: [
        {
          type: "SRV",
          name: "_http._tcp.web.store-b-id.svc.cluster.local",
          ttl: 5,
          data: { priority: 0, weight: 100, port: 80, target: "web.store-b-id.svc.cluster.local" },
        },
        {
          type: "SRV",
          name: "_http._tcp.web.store-b-id.svc.cluster.local",
          ttl: 5,
          data: { priority: 0, weight: 100, port: 80, target: "secret.payments.svc.cluster.local" },
        },
      ],
    };
    const answer = await overUdp(query("_http._tcp.web.store.svc.cluster.local", 7, "SRV"));
    expect(answer!.answers!.map((r) => (r as { data: { target: string } }).data.target)).toEqual([
      "web.store.svc.cluster.local",
    ]);
  });

  test("GIVEN hostile messages THEN garbage gets no answer, several questions FORMERR, and the answerer keeps answering", async () => {
    expect(await overUdp(Buffer.from("not a dns message at all"))).toBeUndefined();
    // A name pointer aimed at itself, in a well-formed header.
    const loop = Buffer.from([0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1]);
    expect(await overUdp(loop)).toBeUndefined();
    const two = encode({
      type: "query",
      id: 9,
      flags: 0x0100,
      questions: [
        { type: "A", name: "a.store.svc.cluster.local" },
        { type: "A", name: "b.store.svc.cluster.local" },
      ],
    });
    expect(await overUdp(two)).toMatchObject({ id: 9, rcode: "FORMERR" });
    records["db.store-b-id.svc.cluster.local"] = { answers: [a("db.store-b-id.svc.cluster.local", "10.96.5.5")] };
    expect((await overUdp(query("db.store.svc.cluster.local")))!.answers).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  test("GIVEN an answer larger than 512 bytes to a query without EDNS THEN UDP carries it truncated and TCP whole", async () => {
    const many = Array.from({ length: 40 }, (_, i) => a("big.store-b-id.svc.cluster.local", `10.96.7.${i + 1}`));
    records["big.store-b-id.svc.cluster.local"] = { answers: many };
    const udp = await overUdp(query("big.store.svc.cluster.local"));
    expect(udp).toMatchObject({ flag_tc: true, answers: [] });
    expect((await overTcp(query("big.store.svc.cluster.local"))).answers).toHaveLength(40);
  });
});
