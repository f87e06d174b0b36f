/**
 * How the agent's Services are reached under `LoadBalancer` exposure (the default): at the address
 * (an IP or a host name) the cluster's load-balancer implementation writes into the Service's
 * `status.loadBalancer.ingress`, on the Service's own port. Which Services an install reads back,
 * and what an ingress says. Pure: no I/O, light to load (an import's read runs it).
 */
import type * as k8s from "@kubernetes/client-node";
import { AGENT_NAME, GATEWAY_NAME } from "./agent-components.js";
import type { ClusterInstallRequest, ExposedHosts } from "./install-plan.js";

/** One Service whose load-balancer address the install reads back. */
export interface AwaitedService {
  /** Which endpoint it serves. */
  readonly endpoint: keyof ExposedHosts;
  /** The Service's name, in the system namespace. */
  readonly name: string;
}

/**
 * The Services whose address an install of `request` must read back: those it deploys with
 * `LoadBalancer` exposure and whose endpoint was given no address by hand (an address given wins).
 * Without an image nothing is deployed, and the endpoints are what the inputs say.
 */
export function servicesToReadBack(
  request: Pick<ClusterInstallRequest, "agent" | "authService" | "gateway">,
): AwaitedService[] {
  if (!request.agent?.image) return [];
  return [
    ...((request.agent.exposure ?? "LoadBalancer") === "LoadBalancer" && !request.authService?.address
      ? [{ endpoint: "auth" as const, name: AGENT_NAME }]
      : []),
    ...((request.gateway?.exposure ?? "LoadBalancer") === "LoadBalancer" && !request.gateway?.address
      ? [{ endpoint: "gateway" as const, name: GATEWAY_NAME }]
      : []),
  ];
}

/**
 * The address `service`'s load balancer gave it (the first ingress: its IP, else its host name), or
 * what is missing, as a wait's state says it.
 */
export function loadBalancerAddressOf(
  service: k8s.V1Service | undefined,
): { readonly address: string } | { readonly missing: string } {
  if (!service) return { missing: "the Service does not exist" };
  if (service.spec?.type !== "LoadBalancer") return { missing: `the Service is of type ${service.spec?.type}` };
  const ingress = service.status?.loadBalancer?.ingress?.find((entry) => entry.ip || entry.hostname);
  const address = ingress?.ip ?? ingress?.hostname;
  if (address) return { address };
  return {
    missing:
      "no address in status.loadBalancer.ingress (EXTERNAL-IP <pending>): the cluster's load-balancer implementation " +
      "has not served it; give the endpoint's address by hand, or expose it as NodePort",
  };
}

/** The addresses the load balancers gave `services`, as `deployed` (the agent's objects, read once) shows them. */
export function exposedHostsOf(
  services: readonly AwaitedService[],
  deployed: { readonly authService?: k8s.V1Service; readonly gatewayService?: k8s.V1Service },
): ExposedHosts {
  const hosts: Record<string, string> = {};
  for (const service of services) {
    const found = loadBalancerAddressOf(service.endpoint === "auth" ? deployed.authService : deployed.gatewayService);
    if ("address" in found) hosts[service.endpoint] = found.address;
  }
  return hosts;
}
