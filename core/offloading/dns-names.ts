/**
 * The names an offloaded pod resolves, as at home. Its pod on the provider asks the provider's
 * agent (agent/dns), which answers for one consumer only, the one that sent the pod: a name of the
 * consumer's cluster domain under `svc` is asked of the provider's cluster DNS with the consumer's
 * namespace swapped for its namespace on this provider, and the answer's names swapped back; an
 * address's reverse name is asked as it is, and only the names of the consumer's own Services come
 * back (agent/dns/answers.ts); any other name of a cluster domain (the provider's own, pods' names,
 * the reverse zones themselves) is unknown; a name outside them is asked as it is.
 *
 * Why names served on the provider, not the consumer's DNS through the tunnel: the consumer's DNS
 * answers with its Services' ClusterIPs, which nothing on the provider routes, while each Service an
 * offloaded pod needs is reflected on the provider with a ClusterIP there and endpoints on both sides
 * (service-reflection.ts). The provider's pods, and what its DNS knows of its own namespaces, stay
 * out of a consumer's reach: a name is only ever looked up in one of that consumer's namespaces
 * here, and an answer naming anything else is dropped.
 */

/** The cluster domain both sides are taken to have (kubelet's `clusterDomain` default). */
export const CLUSTER_DOMAIN = "cluster.local";

/** What the answerer knows of one consumer: its namespaces offloaded here. */
export interface ConsumerZone {
  /** The consumer's cluster id. */
  readonly consumer: string;
  /** Each consumer namespace offloaded here, by its name on the consumer, to its name here. */
  readonly namespaces: ReadonlyMap<string, string>;
  /** The consumer's ExternalName Services, by `<service>.<consumer namespace>`, to their hosts. */
  readonly aliases?: ReadonlyMap<string, string>;
  /**
   * Where the consumer's API server answers its pods here (its gateway's end of the tunnel), once
   * known: the address of `kubernetes.default`, the one Service of a namespace never offloaded
   * that every pod may ask for.
   */
  readonly apiAddress?: string;
  /**
   * Each of the consumer's pods here with a hostname and a subdomain, by address, to its own name
   * (`<hostname>.<subdomain>.<namespace>.svc.<domain>`, its namespace as the consumer's): the line
   * kubelet writes into its `/etc/hosts` at home, which here names the namespace it has here.
   */
  readonly ownNames?: ReadonlyMap<string, string>;
}

/** The cluster domains: the consumer's, which its pods' names are in, and the provider's own. */
export interface ClusterDomains {
  readonly consumer: string;
  readonly provider: string;
}

/** What to do with a question's name. */
export type QuestionDecision =
  /** Ask the provider's cluster DNS this name (the question's own, or its consumer namespace swapped). */
  | { readonly kind: "ask"; readonly name: string }
  /** Answer that the name does not exist: no Service of this consumer's is behind it. */
  | { readonly kind: "unknown" }
  /** Answer with a CNAME to `target` (an ExternalName of the consumer's), then follow it as the pod would ask it. */
  | { readonly kind: "alias"; readonly target: string }
  /** Ask the provider's cluster DNS this address's reverse name, and keep only what names the consumer's own Services. */
  | { readonly kind: "reverse"; readonly name: string }
  /** Answer with this address, asking no one: a name whose address the answerer knows itself. */
  | { readonly kind: "address"; readonly address: string };

/** Reverse lookups: unfiltered, they would name the provider's pods and Services. */
const REVERSE_ZONES = ["in-addr.arpa", "ip6.arpa"];

/** The reverse name of one whole address: four decimal bytes under `in-addr.arpa`, or 32 nibbles under `ip6.arpa`. */
export function isAddressReverseName(name: string): boolean {
  const v4 = labelsUnder(name, "in-addr.arpa");
  if (v4) return v4.length === 4 && v4.every((label) => /^(0|[1-9][0-9]{0,2})$/.test(label) && Number(label) <= 255);
  const v6 = labelsUnder(name, "ip6.arpa");
  return v6 !== undefined && v6.length === 32 && v6.every((label) => /^[0-9a-f]$/.test(label));
}

/** `name` in lower case, without its final dot: names compare so whatever case and final dot they were written with. */
export function normalizedName(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}

/** The labels of `name` before `domain`, or undefined when `name` is not in it (`[]` for the domain itself). */
function labelsUnder(name: string, domain: string): string[] | undefined {
  if (name === domain) return [];
  return name.endsWith(`.${domain}`) ? name.slice(0, -domain.length - 1).split(".") : undefined;
}

/** Whether `name` is in one of the zones no consumer may have asked of the provider's DNS. */
function isClusterInternal(name: string, domains: ClusterDomains): boolean {
  return [domains.consumer, domains.provider, ...REVERSE_ZONES].some((zone) => labelsUnder(name, zone) !== undefined);
}

/** A DNS label, as a namespace name is one. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A pod's name by its IPv4 address, as `pods insecure` answers it at home: `10-1-2-3`. */
const DASHED_V4 = /^(0|[1-9][0-9]{0,2})-(0|[1-9][0-9]{0,2})-(0|[1-9][0-9]{0,2})-(0|[1-9][0-9]{0,2})$/;

/** The address a dashed label spells (`10-1-2-3` is `10.1.2.3`), or undefined when it spells none. */
function dashedAddress(label: string): string | undefined {
  const bytes = DASHED_V4.exec(label)?.slice(1);
  return bytes && bytes.every((b) => Number(b) <= 255) ? bytes.join(".") : undefined;
}

/**
 * The names whose address the answerer knows itself, asked by the pod at `asker`: `kubernetes.default`
 * (the consumer's API server, as the pod reaches it here), a pod name `<a-b-c-d>.<namespace>.pod`
 * (its address spelled out, as at home), and the asking pod's own name (what its `/etc/hosts` holds
 * at home). Each names only what the asker knows or could reach anyway.
 */
function knownAddress(labels: readonly string[], asked: string, zone: ConsumerZone, asker: string | undefined) {
  if (labels.join(".") === "kubernetes.default.svc") return zone.apiAddress;
  if (labels.length === 3 && labels[2] === "pod" && DNS_LABEL.test(labels[1]!)) return dashedAddress(labels[0]!);
  return asker !== undefined && zone.ownNames?.get(asker) === asked ? asker : undefined;
}

/**
 * What to ask for `name`, asked by a pod of `zone`'s consumer (at address `asker`): `<…>.<namespace>.svc.<consumer
 * domain>` in one of its offloaded namespaces becomes the same name in that namespace here.
 */
export function decideQuestion(
  name: string,
  zone: ConsumerZone,
  domains: ClusterDomains,
  asker?: string,
): QuestionDecision {
  const asked = normalizedName(name);
  // A name that is no name (an empty or overlong label) would be read otherwise by the provider's DNS.
  if (asked.split(".").some((label) => label.length === 0 || label.length > 63)) return { kind: "unknown" };
  const labels = labelsUnder(asked, domains.consumer);
  const known = labels && knownAddress(labels, asked, zone, asker);
  if (known) return { kind: "address", address: known };
  if (labels && labels.length >= 3 && labels.at(-1) === "svc") {
    const target = labels.length === 3 ? zone.aliases?.get(`${labels[0]}.${labels[1]}`) : undefined;
    if (target !== undefined) return { kind: "alias", target };
    const here = zone.namespaces.get(labels.at(-2)!);
    if (here) return { kind: "ask", name: [...labels.slice(0, -2), here, "svc", domains.provider].join(".") };
  }
  // As at home, a Service's address names the Service (a client checking whom it reached asks it).
  if (isAddressReverseName(asked)) return { kind: "reverse", name: asked };
  return isClusterInternal(asked, domains) ? { kind: "unknown" } : { kind: "ask", name: asked };
}

/**
 * A name in the provider DNS's answer, as the consumer's pod is to see it: a name in one of the
 * zone's namespaces here becomes the consumer's; a name outside the cluster domains stays; any other
 * (the provider's own Services and pods, a reverse name) is undefined, and its record is dropped.
 */
export function nameAsSeen(name: string, zone: ConsumerZone, domains: ClusterDomains): string | undefined {
  const answered = normalizedName(name);
  const labels = labelsUnder(answered, domains.provider);
  if (labels && labels.length >= 3 && labels.at(-1) === "svc") {
    const namespace = labels.at(-2)!;
    for (const [theirs, here] of zone.namespaces)
      if (here === namespace) return [...labels.slice(0, -2), theirs, "svc", domains.consumer].join(".");
    return undefined;
  }
  return isClusterInternal(answered, domains) ? undefined : answered;
}

/**
 * A pod's own name, as kubelet writes it into its `/etc/hosts` at home: `<hostname>.<subdomain>.<namespace>.svc.<domain>`,
 * for a pod with both a hostname and a subdomain (each a DNS label), else undefined.
 */
export function podOwnName(
  hostname: string | undefined,
  subdomain: string | undefined,
  namespace: string,
  domain: string,
): string | undefined {
  if (!hostname || !subdomain || !DNS_LABEL.test(hostname) || !DNS_LABEL.test(subdomain)) return undefined;
  return `${hostname}.${subdomain}.${namespace}.svc.${domain}`;
}

/** The search list of an offloaded pod of consumer namespace `namespace`, as kubelet writes it at home. */
export function searchesOf(namespace: string, domain: string): string[] {
  return [`${namespace}.svc.${domain}`, `svc.${domain}`, domain];
}

/** The cluster domain a resolv.conf's search list names (`svc.<domain>`), if any. */
export function clusterDomainOf(resolvConf: string): string | undefined {
  const searches = resolvConf
    .split("\n")
    .filter((line) => /^\s*search\s/.test(line))
    .flatMap((line) => line.trim().split(/\s+/).slice(1));
  const svc = searches.find((s) => s.startsWith("svc."));
  return svc ? normalizedName(svc.slice("svc.".length)) : undefined;
}

/** The first nameserver a resolv.conf names, if any. */
export function nameserverOf(resolvConf: string): string | undefined {
  const line = resolvConf.split("\n").find((l) => /^\s*nameserver\s/.test(l));
  return line?.trim().split(/\s+/)[1];
}

/**
 * The consumer namespace that namespace `here` mirrors, as its RemoteNamespace claims it: the
 * claim is the consumer's to write, so it only names the search list and the names of that
 * consumer's own pods; one that is no namespace name is not used (the name here stands for it).
 */
export function consumerNamespaceOf(here: string, claimed: string | undefined): string {
  return claimed !== undefined && DNS_LABEL.test(claimed) ? claimed : here;
}

/** A namespace made here for a consumer: its name, whose it is, and the consumer namespace it mirrors. */
export interface MirroredNamespace {
  readonly here: string;
  readonly consumer: string;
  readonly consumerNamespace: string;
}

/**
 * Each consumer's zone from the namespaces made here for it. Two that claim the same consumer
 * namespace: the first by name here wins, so that the answer does not change from pass to pass.
 */
export function zonesOf(
  namespaces: readonly MirroredNamespace[],
  externalNames: readonly HeldExternalName[] = [],
): Map<string, ConsumerZone> {
  const zones = new Map<string, Map<string, string>>();
  for (const ns of [...namespaces].sort((a, b) => a.here.localeCompare(b.here))) {
    const zone = zones.get(ns.consumer) ?? new Map<string, string>();
    if (!zone.has(ns.consumerNamespace)) zone.set(ns.consumerNamespace, ns.here);
    zones.set(ns.consumer, zone);
  }
  return new Map(
    [...zones].map(([consumer, names]) => {
      const theirs = new Map([...names].map(([theirName, here]) => [here, theirName]));
      const aliases = new Map(
        externalNames.flatMap((held) => {
          const namespace = held.consumer === consumer ? theirs.get(held.here) : undefined;
          return namespace ? [[`${held.service}.${namespace}`, held.target] as const] : [];
        }),
      );
      return [consumer, { consumer, namespaces: names, ...(aliases.size > 0 ? { aliases } : {}) }];
    }),
  );
}

/** An ExternalName Service a consumer's request holds in one of its namespaces here. */
export interface HeldExternalName {
  readonly consumer: string;
  /** The namespace here. */
  readonly here: string;
  readonly service: string;
  /** Its host. */
  readonly target: string;
}
