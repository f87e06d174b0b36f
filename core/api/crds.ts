/**
 * The project's custom resources, as CustomResourceDefinitions (pure builders, no I/O) and as
 * TypeScript types of the objects.
 *
 * - `ResourceRequest` (provider side, tenant namespace): the consumer asks for resources.
 * - `ResourceOffer` (provider side, tenant namespace): the provider's agent answers.
 * - `OutgoingPeering` (consumer side, system namespace): what the consumer's agent keeps alive
 *   (the virtual node's heartbeat) and follows (offer changes).
 * - `TunnelEndpoint` (both sides: the consumer's in its system namespace, the provider's in the
 *   consumer's tenant namespace out-of-band, in its system namespace in-band): what the cluster's
 *   gateway must set up toward one peer; the gateway answers in its status.
 * - The offloading kinds (`NamespaceOffloading`, `RemoteNamespace`, `OffloadedPod`): offloading.ts.
 */
import type { V1CustomResourceDefinition, V1ObjectMeta } from "@kubernetes/client-node";
import { atomic, crd, int, obj, port, str, stringMap } from "./crd-schema.js";
import { forgeOffloadingDefinitions } from "./offloading.js";

/** Resources asked for: a share of the provider's free capacity, or fixed amounts. */
export interface ResourceAsk {
  /** Percentage (1-100) of the provider's free allocatable capacity; exclusive with the fixed amounts. */
  readonly sharePercent?: number;
  /** Fixed CPU quantity, e.g. `2` or `500m`. */
  readonly cpu?: string;
  /** Fixed memory quantity, e.g. `4Gi`. */
  readonly memory?: string;
  /** Fixed pod count. */
  readonly pods?: number;
}

/** Amounts a provider offers. */
export interface OfferedResources {
  /** CPU quantity. */
  readonly cpu: string;
  /** Memory quantity. */
  readonly memory: string;
  /** Pod count. */
  readonly pods: number;
}

/** A consumer's request for resources, in its tenant namespace on the provider. */
export interface ResourceRequest {
  apiVersion: string;
  kind: "ResourceRequest";
  metadata: V1ObjectMeta;
  spec: { consumerClusterId: string; consumerClusterName: string; resources: ResourceAsk };
}

/** A provider's answer to a ResourceRequest of the same name. */
export interface ResourceOffer {
  apiVersion: string;
  kind: "ResourceOffer";
  metadata: V1ObjectMeta;
  spec: {
    providerClusterId: string;
    providerClusterName: string;
    resources: OfferedResources;
    labels?: Record<string, string>;
    /** Generation of the ResourceRequest this offer answers: older offers are not the answer yet. */
    requestGeneration: number;
  };
}

/**
 * In-band, what the consumer's agent needs to authenticate and negotiate itself, through the
 * tunnel: the provider's auth service and API server at their in-tunnel address, verified under
 * names their certificates carry.
 */
export interface InBandAccess {
  /** The auth service inside the tunnel. @example "https://169.254.72.213:8443" */
  authUrl: string;
  /** Name the auth service's certificate is verified under. */
  authServerName: string;
  /** PEM CA of the auth service. */
  authCaPem: string;
  /** The API server inside the tunnel; the identity's kubeconfig points there. @example "https://169.254.72.213:6443" */
  apiServerUrl: string;
  /** Name the API server's certificate is verified under. @example "kubernetes.default" */
  apiServerName: string;
  /** Secret in the system namespace holding a one-time peering token (`token`), deleted once used. */
  tokenSecret: string;
  /** What to ask for. */
  resources: ResourceAsk;
}

/** The consumer's record of one peering, which its agent keeps alive. */
export interface OutgoingPeering {
  apiVersion: string;
  kind: "OutgoingPeering";
  metadata: V1ObjectMeta;
  spec: {
    providerClusterId: string;
    providerClusterName: string;
    /** Secret in the system namespace holding the identity's kubeconfig for the provider. */
    identitySecret: string;
    /** Tenant namespace on the provider. */
    tenantNamespace: string;
    /** Name of the ResourceRequest and ResourceOffer in the tenant namespace. */
    requestName: string;
    /** The virtual node standing for the offer. */
    virtualNodeName: string;
    /** In-band only: the agent authenticates and negotiates itself, through the tunnel. */
    inBand?: InBandAccess;
    /** Out-of-band: the provider's auth service, where the agent renews the identity. */
    auth?: AuthServiceAccess;
  };
  /** In-band: how far the agent got; both: the identity's lifetime and renewal. */
  status?: {
    /** The identity the consumer holds, as the agent's renewal last saw it. */
    identity?: IdentityStatus;
    /**
     * `Authenticating`, `Negotiating`, `Negotiated`, `Error` (tried again), or `Failed`: the
     * provider refused or said asking again will not help, so whoever waits stops at once.
     */
    phase?: string;
    /** Why. */
    message?: string;
    /** The spec generation this status answers. */
    observedGeneration?: number;
    /** The offer accepted for that generation. */
    offer?: OfferedResources;
  };
}

/** Where a consumer's agent reaches the provider's auth service (out-of-band: as the handover said). */
export interface AuthServiceAccess {
  /** The auth service's URL. @example "https://172.29.1.10:8443" */
  url: string;
  /** PEM CA of the auth service. */
  caPem: string;
}

/** An OutgoingPeering's identity: when it expires, and how its renewal goes. */
export interface IdentityStatus {
  /** When the certificate held now expires (RFC 3339). */
  expiresAt?: string;
  /** When the agent renews it, or tries again after a failure (RFC 3339). */
  renewAt?: string;
  /** When it was last renewed (RFC 3339). */
  renewedAt?: string;
  /** Renewals failed in a row; absent once one succeeds. */
  renewalFailures?: number;
  /** Why the last renewal failed; absent once one succeeds. Never holds a secret. */
  renewalError?: string;
}

/** Which end of a tunnel listens for the other: the reachable one when the other is behind NAT. */
export type TunnelRole = "server" | "client";

/** What one side tells the other's gateway about itself. */
export interface TunnelRemote {
  /** The remote gateway's WireGuard public key (never a private key). */
  publicKey?: string;
  /** `host:port` where the remote gateway listens; only when the remote is the server. */
  endpoint?: string;
  /** The remote cluster's real pod CIDR. */
  podCidr?: string;
  /** The remote cluster's real external CIDR, when it exposes one. */
  externalCidr?: string;
}

/** What a gateway must set up toward one peer: written by the `Tunnel` steps. */
export interface TunnelEndpointSpec {
  /** The peer's cluster id. */
  remoteClusterId: string;
  /** The peer's human-readable name. */
  remoteClusterName: string;
  /** Whether this gateway listens (server) or connects (client). */
  role: TunnelRole;
  /** UDP port the gateway listens on. */
  listenPort: number;
  /** MTU of the tunnel interface, the same on both ends. */
  mtu: number;
  /** Seconds between keepalives the client sends (keeps a NAT mapping open); 0 sends none. */
  keepaliveSeconds: number;
  /** The /30 holding both ends' tunnel addresses: the server has the first, the client the second. */
  linkCidr: string;
  /** What the peer announced; incomplete until the peer's gateway has answered. */
  remote: TunnelRemote;
  /**
   * Ports at which this end's gateway serves its own cluster's API server and auth service on its
   * tunnel address, for the peer's agent: set on the provider's end of an in-band peering, by the
   * provider's admin only (a consumer's endpoint asking for it is refused). Absent: the tunnel
   * carries pod traffic only.
   */
  inBandPorts?: InBandPorts;
  /**
   * The port at which this end's gateway serves its own cluster's API server on its tunnel
   * address, to the pods it offloads to the peer (their `kubernetes.default`; see
   * POD_API_PORT): set on the consumer's end of every tunnel, by its admin only (a consumer's
   * endpoint in a provider's tenant namespace asking for it is refused).
   */
  podApiPort?: number;
}

/**
 * The port of a consumer's API server on its gateway's tunnel address, for the pods it offloads:
 * the API server's usual port, so that where a gateway works in the API server's own network (the
 * host agents of local clusters, which relay nothing) the API server itself answers there.
 */
export const POD_API_PORT = 6443;

/** The ports a gateway serves its cluster's control plane at, on its tunnel address. */
export interface InBandPorts {
  /** Port of the API server, as the peer's agent dials it. @example 6443 */
  apiServer: number;
  /** Port of the auth service, as the peer's agent dials it. @example 8443 */
  auth: number;
}

/** A gateway's answer: its public key, its view of the peer, and the tunnel's health. */
export interface TunnelEndpointStatus {
  /**
   * `Pending` (waiting for the peer's data), `Connected` (handshake and probe succeeded), `Error`
   * (the gateway failed; it retries) or `Refused` (the spec claims what its writer may not: the
   * message names the field; nothing was changed for it, and nothing is retried until the spec changes).
   */
  phase?: "Pending" | "Connected" | "Error" | "Refused";
  /** Why the phase is what it is. */
  message?: string;
  /** The spec generation this status answers. */
  observedGeneration?: number;
  /** This gateway's WireGuard public key. */
  publicKey?: string;
  /**
   * `host:port` where peers reach this gateway, when it serves: its cluster's gateway endpoint as
   * the install recorded it (read back from the load balancer). The client dials it when its
   * Tunnel gives no server address, once the client's side has read it (it comes from the other cluster).
   */
  endpoint?: string;
  /** This cluster's real pod CIDR. */
  podCidr?: string;
  /** This cluster's real external CIDR, when it has one. */
  externalCidr?: string;
  /** The peer's pod CIDR as this cluster sees it (remapped when it overlaps a local range). */
  remotePodCidrAsSeen?: string;
  /** The peer's external CIDR as this cluster sees it. */
  remoteExternalCidrAsSeen?: string;
  /**
   * The peer's address on the tunnel's link, which this cluster's route agents send to the
   * gateway's node (the peer's control plane answers there in an in-band peering).
   */
  remoteTunnelAddress?: string;
  /** The WireGuard interface's name. */
  interfaceName?: string;
  /** The peer's slot on this gateway (its packet marks and routing table). */
  slot?: number;
  /** Time of the latest completed handshake, RFC 3339. */
  latestHandshake?: string;
  /** Round-trip time of the latest probe across the tunnel, milliseconds. */
  rttMs?: number;
}

/** One side of a tunnel. */
export interface TunnelEndpoint {
  apiVersion: string;
  kind: "TunnelEndpoint";
  metadata: V1ObjectMeta;
  spec: TunnelEndpointSpec;
  status?: TunnelEndpointStatus;
}

const resourceAsk = obj({
  sharePercent: { type: "integer", minimum: 1, maximum: 100 },
  cpu: str,
  memory: str,
  pods: { type: "integer", minimum: 1 },
});
const offered = obj({ cpu: str, memory: str, pods: int }, ["cpu", "memory", "pods"]);

/** The CustomResourceDefinitions every participating cluster needs. */
export function forgeCustomResourceDefinitions(): V1CustomResourceDefinition[] {
  return [
    crd(
      "ResourceRequest",
      "resourcerequests",
      obj({ consumerClusterId: str, consumerClusterName: str, resources: resourceAsk }, [
        "consumerClusterId",
        "resources",
      ]),
    ),
    crd(
      "ResourceOffer",
      "resourceoffers",
      obj(
        {
          providerClusterId: str,
          providerClusterName: str,
          resources: offered,
          labels: stringMap,
          requestGeneration: int,
        },
        ["providerClusterId", "resources", "requestGeneration"],
      ),
    ),
    crd(
      "OutgoingPeering",
      "outgoingpeerings",
      obj(
        {
          providerClusterId: str,
          providerClusterName: str,
          identitySecret: str,
          tenantNamespace: str,
          requestName: str,
          virtualNodeName: str,
          inBand: obj(
            {
              authUrl: str,
              authServerName: str,
              authCaPem: str,
              apiServerUrl: str,
              apiServerName: str,
              tokenSecret: str,
              resources: resourceAsk,
            },
            ["authUrl", "authCaPem", "apiServerUrl", "tokenSecret", "resources"],
          ),
          auth: obj({ url: str, caPem: str }, ["url", "caPem"]),
        },
        ["providerClusterId", "identitySecret", "tenantNamespace", "requestName", "virtualNodeName"],
      ),
      obj({
        phase: str,
        message: str,
        observedGeneration: int,
        offer: offered,
        identity: obj({ expiresAt: str, renewAt: str, renewedAt: str, renewalFailures: int, renewalError: str }),
      }),
    ),
    crd(
      "TunnelEndpoint",
      "tunnelendpoints",
      obj(
        {
          remoteClusterId: str,
          remoteClusterName: str,
          role: { type: "string", enum: ["server", "client"] },
          listenPort: port,
          mtu: { type: "integer", minimum: 1280, maximum: 9000 },
          keepaliveSeconds: { type: "integer", minimum: 0, maximum: 65535 },
          linkCidr: str,
          // Written whole from what the server announces, which may be nothing yet (a tunnel made again).
          remote: atomic(obj({ publicKey: str, endpoint: str, podCidr: str, externalCidr: str })),
          inBandPorts: obj({ apiServer: port, auth: port }, ["apiServer", "auth"]),
          podApiPort: port,
        },
        ["remoteClusterId", "role", "listenPort", "mtu", "keepaliveSeconds", "linkCidr", "remote"],
      ),
      obj({
        phase: str,
        message: str,
        observedGeneration: int,
        publicKey: str,
        endpoint: str,
        podCidr: str,
        externalCidr: str,
        remotePodCidrAsSeen: str,
        remoteExternalCidrAsSeen: str,
        remoteTunnelAddress: str,
        interfaceName: str,
        slot: int,
        latestHandshake: str,
        rttMs: { type: "number" },
      }),
    ),
    ...forgeOffloadingDefinitions(),
  ];
}
