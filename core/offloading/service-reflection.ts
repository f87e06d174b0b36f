/**
 * Services across a peering, decided from specs alone (pure, no I/O): what a consumer asks a
 * provider to hold for one Service of an offloaded namespace, and what the provider accepts.
 *
 * The consumer's Service `echo` of namespace `shop` becomes Service `echo` of the remote
 * namespace on the provider, with the same ports, selector, type and session affinity (headless
 * stays headless). The provider assigns its own ClusterIP, but gives the consumer's when that
 * address is free in the provider's own service range and outside the band kept for addresses
 * assigned by hand ({@link keptClusterIP}): two clusters on kubeadm's default range then know
 * the Service by one address, which a client that reads it from the consumer's API dials. The provider's own endpoint controller lists the offloaded
 * pods that run there (the selector matches them in the remote namespace); those of the consumer's
 * own pods come as one EndpointSlice, which the consumer lists at its pods' own addresses and the
 * provider translates to the addresses its side of the tunnel reaches them by (remapped when the
 * two pod ranges overlap), not ready while the tunnel is down. Endpoints on other providers are
 * left out: this provider has no tunnel to them.
 *
 * The provider trusts none of it: a Service whose type or fields would reach past the remote
 * namespace (a NodePort or LoadBalancer opens the provider's nodes; ExternalName and externalIPs
 * redirect traffic of the whole cluster) is refused, and so is an endpoint outside the consumer's
 * pod range as this provider's tunnel knows it (which would point the provider's pods, by a trusted
 * name, at its own API server, nodes or other tenants' pods). An accepted address is never used as
 * given: it is translated into the range that only the tunnel leads to.
 */
import type { V1Endpoint, V1EndpointSlice, V1Service, V1ServicePort } from "@kubernetes/client-node";
import { MANAGED_BY, MANAGED_BY_LABEL, REMOTE_CLUSTER_LABEL } from "../api/names.js";
import { Cidr, parseIpv4 } from "../net/cidr.js";
import { translateAddress } from "../network-fabric/remap.js";
import type { Refusal } from "./pod-policy.js";
import type { PodAddressView } from "./reflection.js";

/** Most ports a reflected Service may have (Kubernetes has no limit; a request this big is not a Service of an app). */
export const MAX_SERVICE_PORTS = 64;
/** Most endpoints one reflected Service may list from outside the provider (one EndpointSlice holds up to 1000). */
export const MAX_OUTSIDE_ENDPOINTS = 1000;

/** One port of a reflected Service. */
export interface ServicePortRequest {
  readonly name?: string;
  readonly protocol: "TCP" | "UDP" | "SCTP";
  readonly port: number;
  /** A number, or the name of a container port of the selected pods. */
  readonly targetPort: number | string;
}

/** An endpoint of a reflected Service that lives on the consumer, at the consumer's own address for it. */
export interface OutsideEndpoint {
  readonly address: string;
  readonly ready: boolean;
  /** The pod it is on the consumer (shown, never trusted). */
  readonly podName?: string;
}

/** What a consumer asks a provider to hold for one Service of an offloaded namespace. */
export interface ServiceRequest {
  /** The Service's name, the same on both sides. */
  readonly name: string;
  /** `ClusterIP`, or headless (`clusterIP: None`). */
  readonly headless: boolean;
  readonly ports: readonly ServicePortRequest[];
  /** The selector, which on the provider matches the offloaded pods of the remote namespace. */
  readonly selector?: Readonly<Record<string, string>>;
  /** The endpoints on the consumer, at the consumer's addresses for them. */
  readonly outside: readonly OutsideEndpoint[];
  /** The consumer's ClusterIP for it (not headless): the provider's copy gets it when {@link keptClusterIP} allows. */
  readonly clusterIP?: string;
  /** `ClientIP`: each client's connections go to one endpoint, for {@link sessionAffinityTimeoutSeconds}. */
  readonly sessionAffinity?: "ClientIP";
  /** How long a client sticks to its endpoint under `ClientIP` affinity (Kubernetes' default: 10800). */
  readonly sessionAffinityTimeoutSeconds?: number;
  /**
   * An ExternalName Service's host: the provider makes no Service of it, its agent answers the
   * Service's name with this CNAME to the consumer's pods only (core/offloading/dns-names.ts).
   */
  readonly externalName?: string;
}

/** The longest session affinity Kubernetes allows, a day. */
const MAX_AFFINITY_SECONDS = 86_400;
/** Kubernetes' session affinity when a Service names none, three hours. */
const DEFAULT_AFFINITY_SECONDS = 10_800;

const PROTOCOLS = new Set(["TCP", "UDP", "SCTP"]);

/** The request for `service`, or why it is not reflected (a type that stays on the consumer). Pure. */
export function serviceRequestOf(
  service: V1Service,
  slices: readonly V1EndpointSlice[],
  offloadedHere: (endpoint: V1Endpoint) => boolean,
  ownPods: Cidr | undefined,
): ServiceRequest | { readonly skipped: string } {
  const spec = service.spec ?? {};
  const name = service.metadata?.name ?? "";
  const type = spec.type ?? "ClusterIP";
  if (type === "ExternalName")
    return {
      name,
      headless: false,
      ports: [],
      outside: [],
      externalName: (spec.externalName ?? "").toLowerCase().replace(/\.$/, ""),
    };
  const ports = (spec.ports ?? []).map((p: V1ServicePort): ServicePortRequest => ({
    ...(p.name ? { name: p.name } : {}),
    protocol: (p.protocol ?? "TCP") as ServicePortRequest["protocol"],
    port: p.port,
    targetPort: p.targetPort ?? p.port,
  }));
  // Without its own range (no tunnel yet) the consumer cannot tell its pods' addresses: none is listed.
  const outside: OutsideEndpoint[] = [];
  if (ownPods) {
    for (const slice of slices) {
      if (slice.addressType !== "IPv4") continue;
      for (const endpoint of slice.endpoints ?? []) {
        const pod = endpoint.targetRef?.kind === "Pod" ? endpoint.targetRef.name : undefined;
        // Offloaded to this provider: its own controller lists the real pod there.
        if (offloadedHere(endpoint)) continue;
        for (const address of endpoint.addresses) {
          if (!safeContains(ownPods, address)) continue; // Not a pod of the consumer's: not reachable through the tunnel.
          outside.push({
            address,
            ready: endpoint.conditions?.ready !== false,
            ...(pod ? { podName: pod } : {}),
          });
        }
      }
    }
  }
  const headless = spec.clusterIP === "None";
  const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  return {
    name,
    headless,
    ports,
    ...(spec.selector && Object.keys(spec.selector).length > 0 ? { selector: { ...spec.selector } } : {}),
    outside,
    ...(!headless && spec.clusterIP ? { clusterIP: spec.clusterIP } : {}),
    ...(spec.sessionAffinity === "ClientIP"
      ? { sessionAffinity: "ClientIP" as const, ...(timeout ? { sessionAffinityTimeoutSeconds: timeout } : {}) }
      : {}),
  };
}

/**
 * The address the provider gives its copy of a Service: `requested` (the consumer's ClusterIP)
 * when it is an IPv4 address of `providerServices` (the provider's own service range) outside the
 * lowest band, which Kubernetes keeps for addresses an administrator assigns by hand (the first
 * min(max(16, size / 16), 256) addresses), and not the range's last. Otherwise undefined: the
 * provider's API server picks one. A consumer can so take no address the provider's own admins
 * would choose, and none outside the range; one already in use is refused by the API server, and
 * the copy then gets an address of the provider's choosing. Pure.
 */
export function keptClusterIP(requested: string | undefined, providerServices: Cidr | undefined): string | undefined {
  if (requested === undefined || providerServices === undefined || !safeContains(providerServices, requested))
    return undefined;
  const offset = parseIpv4(requested) - providerServices.network;
  const staticBand = Math.min(Math.max(16, providerServices.size / 16), 256);
  return offset >= staticBand && offset < providerServices.size - 1 ? requested : undefined;
}

/** Marks every outside endpoint not ready: what a provider's copy must say while the tunnel is down. Pure. */
export function withTunnelDown(request: ServiceRequest): ServiceRequest {
  return { ...request, outside: request.outside.map((e) => ({ ...e, ready: false })) };
}

/** Port numbers, names and protocols a Service port may have. */
function refusePort(port: ServicePortRequest, index: number): Refusal | undefined {
  const where = `ports[${index}]`;
  if (!PROTOCOLS.has(port.protocol))
    return {
      reason: "Invalid",
      message: `${where}.protocol: ${JSON.stringify(port.protocol)} is not TCP, UDP or SCTP`,
    };
  if (!Number.isInteger(port.port) || port.port < 1 || port.port > 65535)
    return { reason: "Invalid", message: `${where}.port: ${JSON.stringify(port.port)} is not a port` };
  const target = port.targetPort;
  const validTarget =
    typeof target === "number"
      ? Number.isInteger(target) && target >= 1 && target <= 65535
      : typeof target === "string" && /^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$/.test(target);
  if (!validTarget)
    return {
      reason: "Invalid",
      message: `${where}.targetPort: ${JSON.stringify(target)} is neither a port nor a port name`,
    };
  return undefined;
}

/**
 * Why a provider refuses a consumer's Service request, or undefined when it may hold it: only the
 * fields of {@link ServiceRequest} exist (a type, external IPs, node ports, an external name, a
 * load balancer are refused by name, whatever their value), and every outside endpoint must be in
 * `consumerPods`, the consumer's real pod range as this provider's tunnel knows it. Pure.
 */
export function refuseServiceRequest(request: unknown, consumerPods: Cidr | undefined): Refusal | undefined {
  if (typeof request !== "object" || request === null) return { reason: "Invalid", message: "not an object" };
  const fields = request as Record<string, unknown>;
  const known = new Set([
    "name",
    "headless",
    "ports",
    "selector",
    "outside",
    "clusterIP",
    "sessionAffinity",
    "sessionAffinityTimeoutSeconds",
    "externalName",
  ]);
  const extra = Object.keys(fields).find((key) => !known.has(key));
  if (extra !== undefined) {
    const reason = ["type", "externalIPs", "loadBalancerIP", "nodePort"].includes(extra) ? "ServiceType" : "Invalid";
    return {
      reason,
      message: `${extra}: a reflected Service is ClusterIP, headless or ExternalName only, with nothing else`,
    };
  }
  if (fields["externalName"] !== undefined) return refuseExternalName(fields);
  if (typeof fields["name"] !== "string" || !/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(fields["name"]))
    return { reason: "Invalid", message: `name: ${JSON.stringify(fields["name"])} is not a Service name` };
  if (typeof fields["headless"] !== "boolean") return { reason: "Invalid", message: "headless: must be true or false" };
  const ports = fields["ports"];
  if (!Array.isArray(ports) || ports.length > MAX_SERVICE_PORTS)
    return { reason: "Invalid", message: `ports: must be a list of at most ${MAX_SERVICE_PORTS}` };
  for (const [index, port] of ports.entries()) {
    if (typeof port !== "object" || port === null)
      return { reason: "Invalid", message: `ports[${index}]: not an object` };
    const nodePort = (port as Record<string, unknown>)["nodePort"];
    if (nodePort !== undefined)
      return { reason: "ServiceType", message: `ports[${index}].nodePort: node ports are not reflected` };
    const refused = refusePort(port as ServicePortRequest, index);
    if (refused) return refused;
  }
  if (ports.length === 0 && !fields["headless"])
    return { reason: "Invalid", message: "ports: a Service that is not headless needs at least one" };
  const selector = fields["selector"];
  if (
    selector !== undefined &&
    (typeof selector !== "object" || selector === null || Object.values(selector).some((v) => typeof v !== "string"))
  )
    return { reason: "Invalid", message: "selector: must be a map of label keys to values" };
  const clusterIP = fields["clusterIP"];
  if (clusterIP !== undefined && (typeof clusterIP !== "string" || fields["headless"] || !isIpv4(clusterIP)))
    return {
      reason: "Invalid",
      message: `clusterIP: ${JSON.stringify(clusterIP)} is not the IPv4 address of a Service that is not headless`,
    };
  if (fields["sessionAffinity"] !== undefined && fields["sessionAffinity"] !== "ClientIP")
    return {
      reason: "Invalid",
      message: `sessionAffinity: ${JSON.stringify(fields["sessionAffinity"])} is not ClientIP`,
    };
  const timeout = fields["sessionAffinityTimeoutSeconds"];
  if (
    timeout !== undefined &&
    (fields["sessionAffinity"] !== "ClientIP" ||
      !Number.isInteger(timeout) ||
      (timeout as number) < 1 ||
      (timeout as number) > MAX_AFFINITY_SECONDS)
  )
    return {
      reason: "Invalid",
      message: `sessionAffinityTimeoutSeconds: ${JSON.stringify(timeout)} is not 1 to ${MAX_AFFINITY_SECONDS} seconds of ClientIP affinity`,
    };
  const outside = fields["outside"];
  if (!Array.isArray(outside) || outside.length > MAX_OUTSIDE_ENDPOINTS)
    return { reason: "Invalid", message: `outside: must be a list of at most ${MAX_OUTSIDE_ENDPOINTS} endpoints` };
  for (const [index, endpoint] of outside.entries()) {
    const address = (endpoint as Record<string, unknown> | null)?.["address"];
    if (typeof address !== "string" || !consumerPods || !safeContains(consumerPods, address)) {
      return {
        reason: "EndpointOutsideConsumer",
        message:
          `outside[${index}].address: ${JSON.stringify(address)} is not in the consumer's pod range as this provider's ` +
          `tunnel knows it (${consumerPods?.toString() ?? "no tunnel yet"}): an endpoint may only be one of the consumer's pods`,
      };
    }
  }
  return undefined;
}

/** A DNS name of lower-case labels, as Kubernetes takes an ExternalName's. */
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

/**
 * Why an ExternalName request is refused: its host must be a DNS name, its name a Service name, and
 * it carries nothing else (no selector, address, affinity or endpoint: nothing is made of it here).
 */
function refuseExternalName(fields: Record<string, unknown>): Refusal | undefined {
  const host = fields["externalName"];
  if (typeof host !== "string" || !DNS_NAME.test(host))
    return { reason: "Invalid", message: `externalName: ${JSON.stringify(host)} is not a DNS name` };
  if (typeof fields["name"] !== "string" || !/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(fields["name"]))
    return { reason: "Invalid", message: `name: ${JSON.stringify(fields["name"])} is not a Service name` };
  const carried = ["selector", "clusterIP", "sessionAffinity", "sessionAffinityTimeoutSeconds"].find(
    (key) => fields[key] !== undefined,
  );
  if (carried) return { reason: "Invalid", message: `${carried}: an ExternalName Service has none` };
  if (fields["headless"] !== false) return { reason: "Invalid", message: "headless: an ExternalName Service is not" };
  for (const key of ["ports", "outside"])
    if (!Array.isArray(fields[key]) || (fields[key] as unknown[]).length > 0)
      return { reason: "Invalid", message: `${key}: an ExternalName Service has none` };
  return undefined;
}

/** Whether `text` is a dotted IPv4 address. */
function isIpv4(text: string): boolean {
  try {
    parseIpv4(text);
    return true;
  } catch {
    return false;
  }
}

/** Whether `address` is a dotted IPv4 address inside `range` (anything else is not). */
function safeContains(range: Cidr, address: string): boolean {
  try {
    return range.contains(address);
  } catch {
    return false;
  }
}

/** The EndpointSlice controller of this project, which Kubernetes' own leaves alone. */
export const ENDPOINT_SLICE_MANAGER = "peering.pulumi-liqo.dev";

/** The label that ties an EndpointSlice to its Service (Kubernetes'). */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/** The name of the provider's EndpointSlice of a Service's endpoints on the consumer. */
export const outsideSliceName = (serviceName: string): string =>
  `${serviceName}-outside`.slice(0, 63).replace(/-+$/, "");

/** The labels of what a provider makes for a consumer's Service: the project's, and whose it is. */
export const reflectedLabels = (consumerClusterId: string): Record<string, string> => ({
  [MANAGED_BY_LABEL]: MANAGED_BY,
  [REMOTE_CLUSTER_LABEL]: consumerClusterId,
});

/**
 * The provider's Service for an accepted request, in `remoteNamespace`: headless, or ClusterIP at
 * `clusterIP` (from {@link keptClusterIP}; when creating it only, as a ClusterIP never changes) or
 * of the provider's choosing. Pure.
 */
export function forgeReflectedService(
  request: ServiceRequest,
  remoteNamespace: string,
  consumerClusterId: string,
  clusterIP?: string,
): V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: request.name, namespace: remoteNamespace, labels: reflectedLabels(consumerClusterId) },
    spec: {
      type: "ClusterIP",
      ...(request.headless ? { clusterIP: "None" } : clusterIP ? { clusterIP } : {}),
      sessionAffinity: request.sessionAffinity ?? "None",
      // Always with its timeout: this side then owns the field, and a later apply without affinity removes it.
      ...(request.sessionAffinity
        ? {
            sessionAffinityConfig: {
              clientIP: { timeoutSeconds: request.sessionAffinityTimeoutSeconds ?? DEFAULT_AFFINITY_SECONDS },
            },
          }
        : {}),
      ports: request.ports.map((p) => ({
        ...(p.name ? { name: p.name } : {}),
        protocol: p.protocol,
        port: p.port,
        targetPort: p.targetPort as never,
      })),
      ...(request.selector ? { selector: { ...request.selector } } : {}),
    },
  };
}

/**
 * The provider's EndpointSlice of an accepted request's outside endpoints, beside the slices its
 * own controller makes of the offloaded pods there: kube-proxy and cluster DNS join them by the
 * Service's name. Each address is translated from the consumer's range into the one this side of
 * the tunnel reaches it by (`view`); call it with an accepted request only (its addresses are in
 * `view.real`). A port by name is resolved by the consumer's pods themselves, which the provider
 * cannot see: such a port is listed by its Service port's number. Pure.
 */
export function forgeOutsideSlice(
  request: ServiceRequest,
  remoteNamespace: string,
  consumerClusterId: string,
  view: PodAddressView,
): V1EndpointSlice {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: outsideSliceName(request.name),
      namespace: remoteNamespace,
      labels: {
        ...reflectedLabels(consumerClusterId),
        [SERVICE_NAME_LABEL]: request.name,
        "endpointslice.kubernetes.io/managed-by": ENDPOINT_SLICE_MANAGER,
      },
    },
    addressType: "IPv4",
    endpoints: request.outside.map((e) => ({
      addresses: [translateAddress(e.address, view.real, view.asSeen)],
      conditions: { ready: e.ready },
    })),
    ports: request.ports.map((p) => ({
      ...(p.name ? { name: p.name } : {}),
      protocol: p.protocol,
      port: typeof p.targetPort === "number" ? p.targetPort : p.port,
    })),
  };
}
