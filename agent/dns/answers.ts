/**
 * DNS messages of the answerer, built from the decisions of core/offloading/dns-names.ts: the
 * question a pod asked, the question put to the provider's cluster DNS, and the answer the pod gets
 * back, its names as the pod's consumer knows them and every record naming something else dropped.
 * Pure: packets in, packets out.
 */
import { isIPv6 } from "node:net";
import type { Answer, DecodedPacket, Packet, Question } from "dns-packet";
import { nameAsSeen, normalizedName, type ClusterDomains, type ConsumerZone } from "../../core/offloading/dns-names.js";

/** Response codes the answerer sets itself (RFC 1035 §4.1.1). */
export const RCODE = { formatError: 1, serverFailure: 2, nameError: 3, refused: 5 } as const;

/** Header bits (RFC 1035 §4.1.1, RFC 4035 §3.2.3). */
const RECURSION_DESIRED = 0x0100;
const RECURSION_AVAILABLE = 0x0080;
const TRUNCATED = 0x0200;
const OPCODE_MASK = 0x7800;

/** The one question of a standard query, or undefined for anything else (more questions, another opcode, a response). */
export function soleQuestion(query: DecodedPacket): Question | undefined {
  const opcode = ((query.flags ?? 0) & OPCODE_MASK) >> 11;
  if (query.type !== "query" || opcode !== 0 || query.questions?.length !== 1) return undefined;
  const [question] = query.questions;
  return question && typeof question.name === "string" ? question : undefined;
}

/** A response to `query` with no records and response code `rcode`. */
export function emptyResponse(query: Packet, rcode: number): Packet {
  return {
    type: "response",
    id: query.id ?? 0,
    flags: ((query.flags ?? 0) & RECURSION_DESIRED) | RECURSION_AVAILABLE | rcode,
    questions: query.questions ?? [],
  };
}

/** The largest UDP answer the answerer asks of the provider's DNS, and offers to pods that use EDNS. */
export const EDNS_PAYLOAD = 4096;

/** An EDNS record offering `udpPayloadSize` (RFC 6891). */
const optRecord = (udpPayloadSize: number): Answer => ({ type: "OPT", name: ".", udpPayloadSize, flags: 0 }) as Answer;

/**
 * The question to put to the provider's cluster DNS for `question`, asked as `name`: with EDNS, so
 * that the whole answer comes back over UDP and the answerer decides how much the pod gets.
 */
export function upstreamQuery(id: number, question: Question, name: string): Packet {
  return {
    type: "query",
    id,
    flags: RECURSION_DESIRED,
    questions: [{ type: question.type, class: question.class ?? "IN", name }],
    additionals: [optRecord(EDNS_PAYLOAD)],
  };
}

/**
 * How large a response `query` may get over UDP: 512 bytes, or what its EDNS record offers (up to
 * {@link EDNS_PAYLOAD}); undefined over TCP, where any fits.
 */
export function udpLimitOf(query: Packet): number {
  const opt = (query.additionals ?? []).find((r) => r.type === "OPT") as { udpPayloadSize?: number } | undefined;
  return opt ? Math.min(Math.max(opt.udpPayloadSize ?? 512, 512), EDNS_PAYLOAD) : 512;
}

/** `response` with the EDNS record a query that had one expects back. */
export function withEdnsOf(query: Packet, response: Packet): Packet {
  const asked = (query.additionals ?? []).some((r) => r.type === "OPT");
  return asked ? { ...response, additionals: [...(response.additionals ?? []), optRecord(EDNS_PAYLOAD)] } : response;
}

/** The answer to `query` when the whole one would not fit: empty, truncated, so that the pod asks over TCP. */
export function truncatedResponse(query: Packet): Packet {
  const empty = emptyResponse(query, 0);
  return withEdnsOf(query, { ...empty, flags: empty.flags! | TRUNCATED });
}

/** Record types whose data is a name of the provider's DNS (CNAME's is the consumer's: see recordAsSeen). */
const NAME_DATA = new Set(["DNAME", "NS", "PTR"]);

/** `record` as the consumer's pod is to see it, or undefined when it names anything the pod may not see. */
export function recordAsSeen(record: Answer, zone: ConsumerZone, domains: ClusterDomains): Answer | undefined {
  if (record.type === "OPT") return undefined; // Hop by hop: the pod's own query carries its own.
  const name = nameAsSeen(record.name, zone, domains);
  if (name === undefined) return undefined;
  const seen = (data: string): string | undefined => nameAsSeen(data, zone, domains);
  // A CNAME keeps its target as written: in the consumer's namespaces here only an ExternalName of
  // the consumer's could make one, and outside the cluster domains it is the world's. A target in a
  // cluster domain is followed as the pod would ask it (server.ts), never by what the provider's DNS
  // found there.
  if (record.type === "CNAME") return { ...record, name };
  if (NAME_DATA.has(record.type)) {
    const data = seen(record.data as string);
    return data === undefined ? undefined : ({ ...record, name, data } as Answer);
  }
  if (record.type === "SRV") {
    const target = seen(record.data.target);
    return target === undefined ? undefined : { ...record, name, data: { ...record.data, target } };
  }
  if (record.type === "MX") {
    const exchange = seen(record.data.exchange);
    return exchange === undefined ? undefined : { ...record, name, data: { ...record.data, exchange } };
  }
  // A zone's own records (its SOA with a negative answer) speak of the provider: the pod gets none.
  if (record.type === "SOA") return undefined;
  return { ...record, name } as Answer;
}

/** An answer as the pod is to see it: its response code and records. */
export interface SeenAnswer {
  readonly rcode: number;
  /** The provider's DNS could not send it whole. */
  readonly truncated: boolean;
  readonly answers: readonly Answer[];
  readonly authorities: readonly Answer[];
  readonly additionals: readonly Answer[];
}

/** The provider DNS's `upstream` answer as the pod is to see it: the records it may see, named as it knows them. */
export function answerAsSeen(upstream: DecodedPacket, zone: ConsumerZone, domains: ClusterDomains): SeenAnswer {
  const keep = (records: readonly Answer[] | undefined): Answer[] =>
    (records ?? []).flatMap((r) => recordAsSeen(r, zone, domains) ?? []);
  return {
    rcode: (upstream.flags ?? 0) & 0xf,
    truncated: ((upstream.flags ?? 0) & TRUNCATED) !== 0,
    answers: keep(upstream.answers),
    authorities: keep(upstream.authorities),
    additionals: keep(upstream.additionals),
  };
}

/**
 * The provider DNS's `upstream` answer to the reverse name `asked` as the pod is to see it: the
 * PTR records of that name that name one of the consumer's own Services (or their endpoints by
 * hostname), named as the consumer knows them. Anything else, the provider's own Services and pods
 * included, is a name that does not exist, as for an address that is nobody's: the pod cannot tell
 * the provider's addresses from free ones.
 */
export function reverseAnswerAsSeen(
  upstream: DecodedPacket,
  asked: string,
  zone: ConsumerZone,
  domains: ClusterDomains,
): SeenAnswer {
  const answers = (upstream.answers ?? []).flatMap((record): Answer[] => {
    if (record.type !== "PTR" || normalizedName(record.name) !== asked) return [];
    const data = nameAsSeen(record.data, zone, domains);
    return data === undefined ? [] : [{ ...record, name: asked, data }];
  });
  const truncated = ((upstream.flags ?? 0) & TRUNCATED) !== 0;
  return {
    rcode: answers.length > 0 || truncated ? 0 : RCODE.nameError,
    truncated: answers.length === 0 && truncated,
    answers,
    authorities: [],
    additionals: [],
  };
}

/** How long a pod may keep what the answerer says itself (an ExternalName's CNAME, an address it knows): CoreDNS's default for Services. */
const OWN_ANSWER_TTL_SECONDS = 5;

/** The answer of an ExternalName of the consumer's: `name` is a CNAME to `target`. */
export function aliasAnswer(name: string, target: string): SeenAnswer {
  const owner = normalizedName(name);
  return {
    rcode: 0,
    truncated: false,
    answers: [{ type: "CNAME", name: owner, ttl: OWN_ANSWER_TTL_SECONDS, data: target }],
    authorities: [],
    additionals: [],
  };
}

/**
 * The answer for `name`, whose address the answerer knows itself: that address, to a question of
 * its family (`A` for IPv4, `AAAA` for IPv6, or `ANY`); to any other type, no records (the name
 * exists, as it does at home).
 */
export function addressAnswer(name: string, type: string, address: string): SeenAnswer {
  const family = isIPv6(address) ? "AAAA" : "A";
  const answers: Answer[] =
    type === family || type === "ANY"
      ? [{ type: family, name: normalizedName(name), ttl: OWN_ANSWER_TTL_SECONDS, data: address }]
      : [];
  return { rcode: 0, truncated: false, answers, authorities: [], additionals: [] };
}

/**
 * The response to the pod's `query`: its own question, name as it asked it, and `answer`. The
 * answerer changed the records, so it vouches for none of them (no AD bit).
 */
export function responseOf(query: Packet, answer: SeenAnswer): Packet {
  const empty = emptyResponse(query, answer.rcode);
  return withEdnsOf(query, {
    ...empty,
    flags: empty.flags! | (answer.truncated ? TRUNCATED : 0),
    answers: [...answer.answers],
    authorities: [...answer.authorities],
    additionals: [...answer.additionals],
  });
}

/**
 * The CNAME targets in `response` that it holds no records of yet and that are in a cluster domain:
 * the names the answerer asks again for the pod, as the pod would.
 */
export function targetsToFollow(answer: SeenAnswer, domains: ClusterDomains): string[] {
  const answers = answer.answers;
  const owners = new Set(answers.map((r) => r.name.toLowerCase()));
  const inCluster = (name: string): boolean =>
    [domains.consumer, domains.provider].some((d) => name === d || name.endsWith(`.${d}`));
  return answers
    .flatMap((r) => (r.type === "CNAME" ? [normalizedName(r.data)] : []))
    .filter((target) => inCluster(target) && !owners.has(target));
}
