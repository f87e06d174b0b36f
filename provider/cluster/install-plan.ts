/**
 * What a `Cluster`'s install decides before it touches the cluster: where its endpoints are, and
 * whether a delete uninstalls. Pure: no I/O, and light to load (a preview's `diff` runs it).
 */

/** Default port of the auth service. */
export const DEFAULT_AUTH_PORT = 8443;
/** Default UDP port of the WireGuard gateway. */
export const DEFAULT_GATEWAY_PORT = 51820;

/** An address and a port, either defaulted. */
export interface EndpointAsked {
  readonly address?: string;
  readonly port?: number;
}

/** What an install is asked to do. */
export interface ClusterInstallRequest {
  /** The cluster's name, recorded in its identity. */
  readonly name: string;
  /** The kubeconfig's text. */
  readonly kubeconfig: string;
  /** Where the kubeconfig came from, for errors (e.g. `Cluster "a": kubeconfig`). */
  readonly kubeconfigInput: string;
  readonly podCidr: string;
  readonly serviceCidr: string;
  readonly externalCidr?: string;
  /** The API server URL peers use; the kubeconfig's server when not given. */
  readonly apiServerUrl?: string;
  readonly authService?: EndpointAsked;
  readonly gateway?: EndpointAsked;
  /** With an image, the agent is deployed; without one, an agent must already run. */
  readonly agent?: { readonly image?: string; readonly exposure?: "LoadBalancer" | "NodePort" };
  readonly timeoutMs: number;
  /** The URN of the resource that owns the install, when known. */
  readonly owner?: string;
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
 * The endpoints `asked` resolves to, the kubeconfig pointing at `kubeconfigServer`: the API
 * server's host unless an address is given, the default ports unless a port is.
 */
export function clusterEndpointsOf(
  asked: Pick<ClusterInstallRequest, "apiServerUrl" | "authService" | "gateway">,
  kubeconfigServer: string,
): ClusterEndpoints {
  const apiServerUrl = asked.apiServerUrl ?? kubeconfigServer;
  const host = new URL(apiServerUrl).hostname;
  const authHost = asked.authService?.address ?? host;
  return {
    apiServerUrl,
    authHost,
    authUrl: `https://${authHost}:${asked.authService?.port ?? DEFAULT_AUTH_PORT}`,
    gatewayEndpoint: `${asked.gateway?.address ?? host}:${asked.gateway?.port ?? DEFAULT_GATEWAY_PORT}`,
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
  readonly users: readonly string[];
  readonly force: boolean;
}): Removal {
  // Recorded before a second Cluster on one cluster was refused: uninstalling would take the other's install.
  if (facts.holder && facts.owner && facts.holder !== facts.owner) return { kind: "forget", holder: facts.holder };
  if (facts.users.length > 0 && !facts.force) return { kind: "refuse", users: facts.users };
  return { kind: "uninstall" };
}
