/**
 * The DNS answerer of offloaded pods, on the provider: UDP and TCP at one port, each question
 * answered for the consumer whose pod asked it (told by the pod's address), as
 * core/offloading/dns-names.ts decides, through the provider's own cluster DNS. Every byte comes
 * from a consumer's workload: a message that does not decode is dropped, one that is not a single
 * standard question is answered FORMERR, an address of no consumer's pod REFUSED.
 */
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { isIPv6 } from "node:net";
import { createServer, type Server, type Socket as TcpSocket } from "node:net";
import { randomInt } from "node:crypto";
import { decode, encode, type DecodedPacket, type Packet, type Question } from "dns-packet";
import { decideQuestion, type ClusterDomains, type ConsumerZone } from "../../core/offloading/dns-names.js";
import type { Reporter } from "../reporter.js";
import {
  addressAnswer,
  aliasAnswer,
  answerAsSeen,
  reverseAnswerAsSeen,
  emptyResponse,
  RCODE,
  responseOf,
  soleQuestion,
  targetsToFollow,
  type SeenAnswer,
  truncatedResponse,
  udpLimitOf,
  upstreamQuery,
} from "./answers.js";

/** Where and for whom the answerer answers. */
export interface ConsumerDnsOptions {
  /** Address and port of both listeners. */
  readonly listen: { readonly host: string; readonly port: number };
  /** The provider's cluster DNS, asked every question the answerer lets through. */
  readonly upstream: { readonly address: string; readonly port: number };
  readonly domains: ClusterDomains;
  /** The zone of the consumer whose pod has this address, if any (zones.ts). */
  readonly zoneOf: (address: string) => Promise<ConsumerZone | undefined>;
  /** Closes both listeners. */
  readonly signal: AbortSignal;
  readonly reporter: Reporter;
  /** How long the provider's DNS may take to answer. @default 2000 */
  readonly upstreamTimeoutMs?: number;
}

/** The ports the answerer listens at (the asked one, or what the system gave for 0). */
export interface ConsumerDnsListeners {
  readonly udpPort: number;
  readonly tcpPort: number;
}

/** A TCP message's two-byte length prefix (RFC 1035 §4.2.2). */
const TCP_PREFIX = 2;
/** A TCP connection idle this long is closed. */
const TCP_IDLE_MS = 10_000;

/** An IPv4 address as a dual-stack socket reports it, as the pod has it. */
const plainAddress = (address: string): string => address.replace(/^::ffff:(?=\d+\.)/, "");

/** Asks the provider's DNS `packet`, over UDP, and resolves with its response, or undefined after the timeout. */
function askUpstream(packet: Packet, options: ConsumerDnsOptions): Promise<DecodedPacket | undefined> {
  const { address, port } = options.upstream;
  return new Promise((resolve) => {
    const socket = createSocket(isIPv6(address) ? "udp6" : "udp4");
    const done = (answer: DecodedPacket | undefined): void => {
      clearTimeout(timer);
      socket.close();
      resolve(answer);
    };
    const timer = setTimeout(() => done(undefined), options.upstreamTimeoutMs ?? 2000);
    socket.on("error", () => done(undefined));
    socket.on("message", (message, from) => {
      if (from.address !== address || from.port !== port) return;
      try {
        const answer = decode(message);
        if (answer.type === "response" && answer.id === packet.id) done(answer);
      } catch {
        // Not a DNS message: keep waiting for the real answer.
      }
    });
    socket.send(encode(packet), port, address);
  });
}

/**
 * The answer to `message` from the pod at `from`, encoded, or undefined when there is none to give.
 * `udpLimit`: the largest answer the transport carries (UDP), undefined over TCP.
 */
export async function answerMessage(
  message: Buffer,
  from: string,
  udpLimit: boolean,
  options: ConsumerDnsOptions,
): Promise<Buffer | undefined> {
  let query: DecodedPacket;
  try {
    query = decode(message);
  } catch {
    return undefined;
  }
  if (query.type !== "query") return undefined;
  const question = soleQuestion(query);
  if (!question) return encode(emptyResponse(query, RCODE.formatError));
  let zone: ConsumerZone | undefined;
  try {
    zone = await options.zoneOf(plainAddress(from));
  } catch (error) {
    options.reporter.warn(`consumer DNS: whose pod asks cannot be told: ${(error as Error).message}`);
    return encode(emptyResponse(query, RCODE.serverFailure));
  }
  if (!zone) return encode(emptyResponse(query, RCODE.refused));
  const answer = await lookUp(question, question.name, { zone, address: plainAddress(from) }, options, 0);
  if (!answer) return encode(emptyResponse(query, RCODE.serverFailure));
  const response = encode(responseOf(query, answer));
  return udpLimit && response.length > udpLimitOf(query) ? encode(truncatedResponse(query)) : response;
}

/** How many CNAME targets in a row the answerer follows: a chain that loops ends there. */
const MAX_FOLLOWED = 8;

/** The pod that asked: its consumer's zone, and its own address. */
interface Asker {
  readonly zone: ConsumerZone;
  readonly address: string;
}

/**
 * The answer for `name` (the question's, or a CNAME target of it) as the asking pod is to see it,
 * with the ExternalName targets in the cluster domain followed as that pod would ask them;
 * undefined when the provider's DNS did not answer.
 */
async function lookUp(
  question: Question,
  name: string,
  asker: Asker,
  options: ConsumerDnsOptions,
  depth: number,
): Promise<SeenAnswer | undefined> {
  const zone = asker.zone;
  const decision = decideQuestion(name, zone, options.domains, asker.address);
  if (decision.kind === "address") return addressAnswer(name, question.type, decision.address);
  if (decision.kind === "unknown")
    return { rcode: RCODE.nameError, truncated: false, answers: [], authorities: [], additionals: [] };
  if (decision.kind === "alias") {
    const alias = aliasAnswer(name, decision.target);
    if (question.type === "CNAME" || depth >= MAX_FOLLOWED) return alias;
    const followed = await lookUp(question, decision.target, asker, options, depth + 1);
    return followed && { ...followed, answers: [...alias.answers, ...followed.answers] };
  }
  const upstream = await askUpstream(upstreamQuery(randomInt(0, 65536), question, decision.name), options);
  if (!upstream) return undefined;
  if (decision.kind === "reverse") return reverseAnswerAsSeen(upstream, decision.name, zone, options.domains);
  const answer = answerAsSeen(upstream, zone, options.domains);
  const [target] = targetsToFollow(answer, options.domains);
  if (target === undefined || question.type === "CNAME" || depth >= MAX_FOLLOWED) return answer;
  const followed = await lookUp(question, target, asker, options, depth + 1);
  if (!followed) return undefined;
  return { ...followed, answers: [...answer.answers, ...followed.answers] };
}

/** Serves one TCP connection: length-prefixed messages, answered in turn. */
function serveTcp(connection: TcpSocket, options: ConsumerDnsOptions): void {
  let buffered = Buffer.alloc(0);
  let busy = Promise.resolve();
  connection.setTimeout(TCP_IDLE_MS, () => connection.destroy());
  connection.on("error", () => connection.destroy());
  connection.on("data", (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= TCP_PREFIX && buffered.length >= TCP_PREFIX + buffered.readUInt16BE(0)) {
      const message = buffered.subarray(TCP_PREFIX, TCP_PREFIX + buffered.readUInt16BE(0));
      buffered = buffered.subarray(TCP_PREFIX + message.length);
      busy = busy.then(async () => {
        const answer = await answerMessage(message, connection.remoteAddress ?? "", false, options);
        if (!answer || connection.destroyed) return;
        const prefix = Buffer.alloc(TCP_PREFIX);
        prefix.writeUInt16BE(answer.length);
        connection.write(Buffer.concat([prefix, answer]));
      });
    }
  });
}

/** Starts the answerer; both listeners close when `options.signal` aborts. */
export async function serveConsumerDns(options: ConsumerDnsOptions): Promise<ConsumerDnsListeners> {
  const { host, port } = options.listen;
  const udp: Socket = createSocket({ type: isIPv6(host) ? "udp6" : "udp4" });
  udp.on("message", (message: Buffer, from: RemoteInfo) => {
    void answerMessage(message, from.address, true, options).then((answer) => {
      if (answer) udp.send(answer, from.port, from.address);
    });
  });
  udp.on("error", (error) => options.reporter.warn(`consumer DNS: UDP ${host}:${port}: ${error.message}`));
  await new Promise<void>((resolve, reject) => {
    udp.once("error", reject);
    udp.bind(port, host, () => {
      udp.off("error", reject);
      resolve();
    });
  });
  const tcp: Server = createServer((connection) => serveTcp(connection, options));
  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject);
    tcp.listen(port, host, () => {
      tcp.off("error", reject);
      resolve();
    });
  });
  const close = (): void => {
    udp.close();
    tcp.close();
  };
  if (options.signal.aborted) close();
  else options.signal.addEventListener("abort", close, { once: true });
  const tcpAddress = tcp.address();
  return {
    udpPort: udp.address().port,
    tcpPort: typeof tcpAddress === "object" && tcpAddress ? tcpAddress.port : port,
  };
}
