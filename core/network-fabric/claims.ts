/**
 * What a `TunnelEndpoint` may ask of the gateway that serves it, decided before the gateway sets
 * anything up. Pure: the gateway reads the namespace's labels and its routes, this module decides.
 *
 * Who wrote an endpoint is told by its namespace. The system namespace is written by the
 * cluster's own admin (the consumer's endpoint, or the provider's in-band) and is trusted for
 * what it names. A tenant namespace is written by a consumer's identity, which must be assumed
 * hostile: a consumer could otherwise name another cluster's address as its link block (the
 * gateway routed that address into its tunnel), or create endpoints at will (each started a
 * wireguard-go and a UDP listener). So a tenant gets exactly one tunnel, the one its peering
 * owns, on the link block both sides derive; anything else is refused and starts nothing.
 * Remote ranges are never refused for overlapping something: they are remapped (remap.ts), with
 * {@link NOT_PRIVATE_SPACE} counted as taken, so no claim can steer traffic meant elsewhere.
 */
import {
  REMOTE_CLUSTER_LABEL,
  SYSTEM_NAMESPACE,
  tenantNamespace,
  type TunnelEndpoint,
  type TunnelEndpointSpec,
} from "../api/index.js";
import { Cidr } from "../net/cidr.js";
import { chooseRemoteView, type RemapError, type RemoteView } from "./remap.js";
import { tunnelEndpointName, tunnelLinkCidr } from "./tunnel-plan.js";

/** Who wrote an endpoint, as its namespace tells. */
export type EndpointOrigin =
  /** The system namespace: the cluster's own admin. */
  | { readonly kind: "system" }
  /** A tenant namespace: the identity of consumer `consumerClusterId`. */
  | { readonly kind: "tenant"; readonly consumerClusterId: string }
  /** Any other namespace: nobody this gateway serves. */
  | { readonly kind: "other" };

/**
 * The origin of an endpoint in `namespace`, given that namespace's labels. A tenant namespace is
 * one whose name is `tenantNamespace(X)` for the consumer X its {@link REMOTE_CLUSTER_LABEL}
 * names: the auth service makes both, and no consumer may write namespaces.
 */
export function endpointOrigin(
  namespace: string,
  namespaceLabels: Readonly<Record<string, string>> | undefined,
): EndpointOrigin {
  if (namespace === SYSTEM_NAMESPACE) return { kind: "system" };
  const consumer = namespaceLabels?.[REMOTE_CLUSTER_LABEL];
  return consumer && tenantNamespace(consumer) === namespace
    ? { kind: "tenant", consumerClusterId: consumer }
    : { kind: "other" };
}

/** The endpoint may be served: what the gateway sets up from, parsed. */
export interface AcceptedClaims {
  readonly accepted: true;
  /** The tunnel's link block: the one both sides derive from the peering's two cluster ids. */
  readonly link: Cidr;
  /** The remote's real pod CIDR as it announces it; undefined until its gateway has answered. */
  readonly remotePodCidr?: Cidr;
  /** The remote's real external CIDR, when it announces one. */
  readonly remoteExternalCidr?: Cidr;
}

/** The endpoint is refused: nothing is set up for it, and its status says why. */
export interface RefusedClaims {
  readonly accepted: false;
  /** The field at fault, as a path in the object. @example "spec.linkCidr" */
  readonly field: string;
  /** Why, naming what was expected. */
  readonly reason: string;
}

/** The verdict on an endpoint's claims. */
export type ClaimsVerdict = AcceptedClaims | RefusedClaims;

/** `value` quoted for a message, cut short: a hostile writer must not fill the status or the log. */
function quoted(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}..."` : text;
}

const refuse = (field: string, reason: string): RefusedClaims => ({ accepted: false, field, reason });

/** The one message of a refusal, as the status and the log carry it. */
export function refusalMessage(refusal: RefusedClaims): string {
  return `refused ${refusal.field}: ${refusal.reason}`;
}

/** The link blocks an endpoint toward `remote` may carry: the tunnel's, whichever way the peering goes. */
function derivedLinks(localClusterId: string, remoteClusterId: string): Cidr[] {
  return [tunnelLinkCidr(remoteClusterId, localClusterId), tunnelLinkCidr(localClusterId, remoteClusterId)];
}

function parseRange(field: string, text: string | undefined): Cidr | RefusedClaims | undefined {
  if (!text) return undefined;
  try {
    return Cidr.parse(text);
  } catch (error) {
    return refuse(field, `${quoted(text)} is not an IPv4 CIDR (${(error as Error).message})`);
  }
}

/**
 * Decides whether the gateway of cluster `localClusterId` may serve `endpoint`, written from
 * `origin`. Checked, in order, each refusal naming its field:
 *
 * - origin: only the system namespace and tenant namespaces are served;
 * - tenant only: the name must be `tunnelEndpointName(X)` and `spec.remoteClusterId` X, for the
 *   consumer X of the namespace: one tunnel per peering, toward the peering's own consumer; and no
 *   `spec.inBandPorts` nor `spec.podApiPort` (only the admin opens the control plane to a peer inside
 *   the tunnel);
 * - `spec.linkCidr`: in a tenant namespace, `tunnelLinkCidr(X, local)` exactly (the consumer
 *   consumes from this cluster); in the system namespace, the block of either direction;
 * - `spec.remote.podCidr`, `spec.remote.externalCidr`: IPv4 CIDRs, not overlapping each other
 *   (translation would be ambiguous). Where they may be seen is decided by the remapping.
 */
export function checkEndpointClaims(
  endpoint: {
    readonly metadata: { readonly name?: string; readonly namespace?: string };
    readonly spec: TunnelEndpointSpec;
  },
  origin: EndpointOrigin,
  localClusterId: string,
): ClaimsVerdict {
  const { spec } = endpoint;
  const namespace = endpoint.metadata.namespace ?? "";
  if (origin.kind === "other") {
    return refuse(
      "metadata.namespace",
      `${quoted(namespace)} is neither ${SYSTEM_NAMESPACE} nor a consumer's tenant namespace: this gateway serves no tunnel from it`,
    );
  }
  let links = derivedLinks(localClusterId, spec.remoteClusterId);
  if (origin.kind === "tenant") {
    const consumer = origin.consumerClusterId;
    const own = tunnelEndpointName(consumer);
    if (endpoint.metadata.name !== own) {
      return refuse(
        "metadata.name",
        `${quoted(endpoint.metadata.name)}: the only tunnel consumer ${consumer} may ask for in ${namespace} is its peering's, named ${own}`,
      );
    }
    if (spec.remoteClusterId !== consumer) {
      return refuse(
        "spec.remoteClusterId",
        `${quoted(spec.remoteClusterId)}: a tunnel in ${namespace} goes to its consumer ${consumer}, and to no other cluster`,
      );
    }
    if (spec.inBandPorts) {
      return refuse(
        "spec.inBandPorts",
        `a tunnel in ${namespace} carries pod traffic only: serving this cluster's API server and auth service inside it is for the cluster's own admin to ask`,
      );
    }
    if (spec.podApiPort !== undefined) {
      return refuse(
        "spec.podApiPort",
        `a tunnel in ${namespace} carries pod traffic only: serving this cluster's API server to the peer's pods is for the cluster's own admin to ask`,
      );
    }
    links = [tunnelLinkCidr(consumer, localClusterId)];
  }
  const link = parseRange("spec.linkCidr", spec.linkCidr);
  if (link && !(link instanceof Cidr)) return link;
  if (!link || !links.some((l) => l.toString() === link.toString())) {
    return refuse(
      "spec.linkCidr",
      `${quoted(spec.linkCidr)} is not the link block derived from the peering's cluster ids (${links.map(String).join(" or ")})`,
    );
  }
  const pod = parseRange("spec.remote.podCidr", spec.remote?.podCidr);
  if (pod && !(pod instanceof Cidr)) return pod;
  const external = parseRange("spec.remote.externalCidr", spec.remote?.externalCidr);
  if (external && !(external instanceof Cidr)) return external;
  if (pod && external?.overlaps(pod)) {
    return refuse(
      "spec.remote.externalCidr",
      `${external} overlaps the remote pod CIDR ${pod}: an address in both could not be translated back to one of them`,
    );
  }
  return {
    accepted: true,
    link,
    ...(pod ? { remotePodCidr: pod } : {}),
    ...(external ? { remoteExternalCidr: external } : {}),
  };
}

/** Private address space: RFC 1918 and the shared address space of RFC 6598, where pod CIDRs live. */
export const PRIVATE_SPACE: readonly Cidr[] = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"].map(
  (c) => Cidr.parse(c),
);

/** The blocks of `within` that overlap none of `keep`, largest first where they can be. */
function outside(within: Cidr, keep: readonly Cidr[]): Cidr[] {
  if (!keep.some((k) => k.overlaps(within))) return [within];
  if (keep.some((k) => k.prefixLength <= within.prefixLength && k.overlaps(within))) return [];
  const half = within.prefixLength + 1;
  return [Cidr.parse(`${within.nth(0)}/${half}`), Cidr.parse(`${within.nth(within.size / 2)}/${half}`)].flatMap((h) =>
    outside(h, keep),
  );
}

/**
 * Every IPv4 address outside {@link PRIVATE_SPACE}: the public internet (reached through a host's
 * default route, which the remapping cannot count as a local route without counting everything),
 * loopback, link-local (the tunnels' own link blocks, cloud metadata at 169.254.169.254) and
 * multicast. The gateway counts it as taken, so a remote range there is always seen remapped,
 * inside the pool: no remote can capture the cluster's traffic to the internet.
 */
export const NOT_PRIVATE_SPACE: readonly Cidr[] = outside(Cidr.parse("0.0.0.0/0"), PRIVATE_SPACE);

/** The local ranges a remote's view must keep clear of. */
export interface LocalRanges {
  /** The local cluster's pod CIDR. */
  readonly podCidr: Cidr;
  /** The local cluster's external CIDR, if it has one. */
  readonly externalCidr?: Cidr;
  /** Everything else in use locally: the service CIDR, the host's routes, other tunnels' views. */
  readonly taken: readonly Cidr[];
}

/**
 * How the local cluster sees the remote whose claims were accepted: remapped wherever a claimed
 * range overlaps a local range, a host route, another tunnel's view or {@link NOT_PRIVATE_SPACE}
 * (which holds every tunnel's link block, 169.254.0.0/16). Undefined while the remote has not
 * announced its pod CIDR. Refused, naming the range, when no block of the claimed size is free.
 */
export function decideRemoteView(
  claims: AcceptedClaims,
  local: LocalRanges,
): { readonly accepted: true; readonly view: RemoteView | undefined } | RefusedClaims {
  if (!claims.remotePodCidr) return { accepted: true, view: undefined };
  try {
    const view = chooseRemoteView({
      localPodCidr: local.podCidr,
      ...(local.externalCidr ? { localExternalCidr: local.externalCidr } : {}),
      remotePodCidr: claims.remotePodCidr,
      ...(claims.remoteExternalCidr ? { remoteExternalCidr: claims.remoteExternalCidr } : {}),
      reserved: [...local.taken, ...NOT_PRIVATE_SPACE],
    });
    return { accepted: true, view };
  } catch (error) {
    const remap = error as Partial<RemapError>;
    if (!remap.isRemapError || remap.kind !== "pool-exhausted") throw error;
    return refuse(remap.range === "external" ? "spec.remote.externalCidr" : "spec.remote.podCidr", remap.message!);
  }
}

/**
 * Each tunnel a gateway serves needs a UDP port of its own (one wireguard-go interface per
 * tunnel): refuses `endpoint` when another served tunnel of the same gateway holds its port,
 * naming that tunnel. A refusal rather than an error, so that whoever waits on the endpoint hears
 * it at once; the gateway decides again on every pass, and serves the endpoint once the port is
 * free or the spec names another.
 */
export function servedPortClash(endpoint: TunnelEndpoint, all: readonly TunnelEndpoint[]): RefusedClaims | undefined {
  if (endpoint.spec.role !== "server") return undefined;
  const holder = all.find(
    (e) =>
      e.metadata.uid !== endpoint.metadata.uid &&
      !e.metadata.deletionTimestamp &&
      e.spec.role === "server" &&
      e.spec.listenPort === endpoint.spec.listenPort &&
      e.status?.interfaceName,
  );
  if (!holder) return undefined;
  return refuse(
    "spec.listenPort",
    `UDP port ${endpoint.spec.listenPort} is already served on this gateway by the tunnel to ` +
      `${quoted(holder.spec.remoteClusterName)}; give each tunnel this cluster serves a port of its own`,
  );
}
