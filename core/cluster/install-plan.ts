/**
 * What a `Cluster`'s install decides before it touches the cluster: where its endpoints are, and
 * whether a delete uninstalls. Pure: no I/O, and light to load (a preview's `diff` runs it).
 */
import type * as k8s from "@kubernetes/client-node";
import type { AgentDeploymentSpec, DeployedAgent } from "./agent-deployment.js";

export type { DeployedAgent } from "./agent-deployment.js";
import type { LoadBalancerSettings, ServiceExposure } from "./agent-workloads.js";
import { mayTake } from "../api/names.js";
import { joinHostPort } from "../net/endpoint.js";

/** Default port of the auth service. */
export const DEFAULT_AUTH_PORT = 8443;
/** Default UDP port of the WireGuard gateway. */
export const DEFAULT_GATEWAY_PORT = 51820;

/** An address and a port, either defaulted. */
export interface EndpointAsked {
  readonly address?: string;
  readonly port?: number;
}

/** How a deployed agent is asked for: its image, and how its auth service's Service is exposed. */
export interface AgentAsked extends LoadBalancerSettings {
  readonly image?: string;
  /** @default "LoadBalancer" */
  readonly exposure?: "LoadBalancer" | "NodePort";
  /** With `NodePort`: the node port to take (and that peers reach). @default one the cluster picks */
  readonly nodePort?: number;
}

/** Where the gateway is reached, and how a deployed one is exposed. */
export interface GatewayAsked extends EndpointAsked, LoadBalancerSettings {
  /** A Service (`LoadBalancer`, `NodePort`) or the port of the gateway's node (`hostPort`). @default "LoadBalancer" */
  readonly exposure?: "LoadBalancer" | "NodePort" | "hostPort";
  /** With `NodePort`: the node port to take (and that peers reach). @default one the cluster picks */
  readonly nodePort?: number;
}

/** What an install is asked to do. */
export interface ClusterInstallRequest {
  /** The cluster's name, recorded in its identity. */
  readonly name: string;
  /** The kubeconfig's text. */
  readonly kubeconfig: string;
  /** Where the kubeconfig came from, for errors (e.g. `Cluster "a": kubeconfig`). */
  readonly kubeconfigInput: string;
  /** The pod CIDR; detected from the cluster when not given (`cidr-detection.ts`). */
  readonly podCidr?: string;
  /** The service CIDR; detected from the cluster when not given. */
  readonly serviceCidr?: string;
  readonly externalCidr?: string;
  /** The API server URL peers use; the kubeconfig's server when not given. */
  readonly apiServerUrl?: string;
  readonly authService?: EndpointAsked;
  readonly gateway?: GatewayAsked;
  /** With an image, the agent is deployed; without one, an agent must already run. */
  readonly agent?: AgentAsked;
  readonly timeoutMs: number;
  /** The URN of the resource that owns the install, when known. */
  readonly owner?: string;
  /** The URN of the resource whose install `owner` took over by an import. */
  readonly takenFrom?: string;
}

/** Where a cluster's install is reached. */
export interface ClusterEndpoints {
  /** The API server URL peers use. */
  readonly apiServerUrl: string;
  /** The host the auth service's certificate must cover. */
  readonly authHost: string;
  /** `https://<host>:<port>` of the auth service. */
  readonly authUrl: string;
  /** `<host>:<port>` where the gateway serves. */
  readonly gatewayEndpoint: string;
}

/**
 * What the cluster gave the agent's Services (load-balancer.ts reads them back): the addresses of
 * their load balancers, or the node ports it picked and the address of a node.
 */
export interface ExposedHosts {
  /** The auth service's address: its load balancer's, or a node's. */
  readonly auth?: string;
  /** The gateway's address: its load balancer's, or a node's. */
  readonly gateway?: string;
  /** The node port the cluster picked for the auth service's Service. */
  readonly authPort?: number;
  /** The node port the cluster picked for the gateway's Service. */
  readonly gatewayPort?: number;
}

/** The port peers reach: a fixed node port of a `NodePort` Service, else the endpoint's own port. */
function reachedAt(
  exposed: { readonly exposure?: string; readonly nodePort?: number } | undefined,
  port: number,
): number {
  return exposed?.exposure === "NodePort" && exposed.nodePort !== undefined ? exposed.nodePort : port;
}

/**
 * The endpoints `asked` resolves to, the kubeconfig pointing at `kubeconfigServer`: an address given
 * by hand, else the one the cluster gave the endpoint's Service (`exposed`, read back: its load
 * balancer's under `LoadBalancer` exposure, on the Service's own port; a node's external address
 * under `NodePort`), else the API server's host; on the default ports unless a port is given, or a
 * node port (fixed, or the one the cluster picked, read back) under `NodePort` exposure.
 */
export function clusterEndpointsOf(
  asked: Pick<ClusterInstallRequest, "apiServerUrl" | "authService" | "gateway" | "agent">,
  kubeconfigServer: string,
  exposed: ExposedHosts = {},
): ClusterEndpoints {
  const apiServerUrl = asked.apiServerUrl ?? kubeconfigServer;
  const host = new URL(apiServerUrl).hostname;
  const authHost = asked.authService?.address ?? exposed.auth ?? host;
  const authPort = asked.authService?.port ?? DEFAULT_AUTH_PORT;
  const gatewayPort = asked.gateway?.port ?? DEFAULT_GATEWAY_PORT;
  const gatewayHost = asked.gateway?.address ?? exposed.gateway ?? host;
  return {
    apiServerUrl,
    authHost,
    authUrl: `https://${joinHostPort(authHost, exposed.authPort ?? (exposed.auth ? authPort : reachedAt(asked.agent, authPort)))}`,
    gatewayEndpoint: joinHostPort(
      gatewayHost,
      exposed.gatewayPort ?? (exposed.gateway ? gatewayPort : reachedAt(asked.gateway, gatewayPort)),
    ),
  };
}

/** How the agent is deployed from `image`, as the request asks: default ports, and `LoadBalancer` Services unless told. */
export function agentDeploymentOf(
  request: Pick<ClusterInstallRequest, "authService" | "gateway" | "agent">,
  image: string,
): AgentDeploymentSpec {
  const { agent, gateway } = request;
  const exposure = (
    type: "LoadBalancer" | "NodePort",
    asked: (LoadBalancerSettings & { readonly nodePort?: number }) | undefined,
  ): ServiceExposure => {
    const loadBalancer = loadBalancerSettingsOf(asked);
    return {
      type,
      ...(type === "NodePort" && asked?.nodePort !== undefined ? { nodePort: asked.nodePort } : {}),
      ...(loadBalancer ? { loadBalancer } : {}),
    };
  };
  const gatewayType = gateway?.exposure ?? "LoadBalancer";
  return {
    image,
    auth: {
      port: request.authService?.port ?? DEFAULT_AUTH_PORT,
      exposure: exposure(agent?.exposure ?? "LoadBalancer", agent),
    },
    gateway: {
      port: gateway?.port ?? DEFAULT_GATEWAY_PORT,
      exposure: gatewayType === "hostPort" ? { type: "hostPort" } : exposure(gatewayType, gateway),
    },
  };
}

/** What a delete does with an install. */
export type Removal =
  | { readonly kind: "uninstall" }
  /** The install is another Cluster resource's (`holder`): this one is only forgotten. */
  | { readonly kind: "forget"; readonly holder: string }
  /** Peerings still use the cluster and `force` is not set. */
  | { readonly kind: "refuse"; readonly users: readonly string[] };

/** What the delete of the Cluster resource `owner` does, given the install's `holder` and the peerings that use it. */
export function removalOf(facts: {
  readonly holder: string | undefined;
  readonly owner: string | undefined;
  /** The resource whose install `owner` took over by an import, if it did. */
  readonly takenFrom?: string;
  readonly users: readonly string[];
  readonly force: boolean;
}): Removal {
  // Recorded before a second Cluster on one cluster was refused: uninstalling would take the other's install.
  if (facts.holder && !mayTake(facts.holder, facts.owner, facts.takenFrom))
    return { kind: "forget", holder: facts.holder };
  if (facts.users.length > 0 && !facts.force) return { kind: "refuse", users: facts.users };
  return { kind: "uninstall" };
}

/** The container port named `name` of `deployment`'s first container. */
const containerPortOf = (deployment: k8s.V1Deployment | undefined, name: string): k8s.V1ContainerPort | undefined =>
  deployment?.spec?.template.spec?.containers[0]?.ports?.find((port) => port.name === name);

/** The load-balancer settings among `asked`, or undefined when it gives none. */
function loadBalancerSettingsOf(asked: LoadBalancerSettings | undefined): LoadBalancerSettings | undefined {
  const { annotations, loadBalancerClass, loadBalancerSourceRanges } = asked ?? {};
  const settings = {
    ...(annotations ? { annotations } : {}),
    ...(loadBalancerClass ? { loadBalancerClass } : {}),
    ...(loadBalancerSourceRanges ? { loadBalancerSourceRanges } : {}),
  };
  return Object.keys(settings).length > 0 ? settings : undefined;
}

/**
 * How a Service is exposed, as `Cluster`'s inputs say it: the default (`LoadBalancer`) left out;
 * its class and source ranges read back, its annotations not (a cloud's controllers add their own).
 */
function exposureOf(service: k8s.V1Service | undefined): {
  exposure?: "NodePort";
  nodePort?: number;
  loadBalancerClass?: string;
  loadBalancerSourceRanges?: string[];
} {
  if (service?.spec?.type === "LoadBalancer") {
    const { loadBalancerClass, loadBalancerSourceRanges } = service.spec;
    return {
      ...(loadBalancerClass ? { loadBalancerClass } : {}),
      ...(loadBalancerSourceRanges?.length ? { loadBalancerSourceRanges } : {}),
    };
  }
  if (service?.spec?.type !== "NodePort") return {};
  const nodePort = service.spec.ports?.[0]?.nodePort;
  return { exposure: "NodePort", ...(nodePort !== undefined ? { nodePort } : {}) };
}

/**
 * The `agent`, `gateway` and `authService` inputs that deploy the agent as `deployed` shows it (the
 * inverse of {@link agentDeploymentOf}): defaults left out, as a program leaves them out. No control
 * Deployment: the agent runs outside the cluster, and nothing is asked. A fixed node port cannot be
 * told from one the cluster picked: it is recovered as fixed. Pure.
 */
export function askedOfDeployment(
  deployed: DeployedAgent,
): Pick<ClusterInstallRequest, "agent" | "gateway" | "authService"> {
  const image = deployed.control?.spec?.template.spec?.containers[0]?.image;
  if (!image) return {};
  const authPort = containerPortOf(deployed.control, "auth")?.containerPort ?? DEFAULT_AUTH_PORT;
  const wireguard = containerPortOf(deployed.gateway, "wireguard");
  const gatewayPort = wireguard?.containerPort ?? DEFAULT_GATEWAY_PORT;
  const gateway = {
    ...(gatewayPort !== DEFAULT_GATEWAY_PORT ? { port: gatewayPort } : {}),
    ...(wireguard?.hostPort !== undefined ? { exposure: "hostPort" as const } : exposureOf(deployed.gatewayService)),
  };
  return {
    agent: { image, ...exposureOf(deployed.authService) },
    ...(Object.keys(gateway).length > 0 ? { gateway } : {}),
    ...(authPort !== DEFAULT_AUTH_PORT ? { authService: { port: authPort } } : {}),
  };
}
