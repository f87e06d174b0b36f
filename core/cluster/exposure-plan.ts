/**
 * How the agent's Services are reached under `LoadBalancer` exposure (the default): at the address
 * (an IP or a host name) the cluster's load-balancer implementation writes into the Service's
 * `status.loadBalancer.ingress`, on the Service's own port. Which Services an install reads back,
 * and what an ingress says. Pure: no I/O, light to load (an import's read runs it).
 */
import type * as k8s from "@kubernetes/client-node";
import { isIP } from "node:net";
import { AGENT_NAME, GATEWAY_NAME } from "./agent-components.js";
import type { ClusterInstallRequest, ExposedHosts } from "./install-plan.js";
import type { LoadBalancerSettings } from "./agent-workloads.js";

export type { LoadBalancerSettings } from "./agent-workloads.js";

/** One Service whose address or port the install reads back. */
export interface AwaitedService {
  /** Which endpoint it serves. */
  readonly endpoint: "auth" | "gateway";
  /** The Service's name, in the system namespace. */
  readonly name: string;
  /**
   * What is read: the address its load balancer gives it (`LoadBalancer`), or the node port the
   * cluster picked for it (`NodePort` with none fixed).
   */
  readonly reads: "address" | "nodePort";
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
  const readOf = (
    exposed: { readonly exposure?: string; readonly nodePort?: number } | undefined,
    address: string | undefined,
  ): AwaitedService["reads"] | undefined => {
    const exposure = exposed?.exposure ?? "LoadBalancer";
    if (exposure === "LoadBalancer") return address ? undefined : "address";
    return exposure === "NodePort" && exposed?.nodePort === undefined ? "nodePort" : undefined;
  };
  const auth = readOf(request.agent, request.authService?.address);
  const gateway = readOf(request.gateway, request.gateway?.address);
  return [
    ...(auth ? [{ endpoint: "auth" as const, name: AGENT_NAME, reads: auth }] : []),
    ...(gateway ? [{ endpoint: "gateway" as const, name: GATEWAY_NAME, reads: gateway }] : []),
  ];
}

/** The node port the cluster gave `service`, or what is missing. */
export function nodePortOf(
  service: k8s.V1Service | undefined,
): { readonly port: number } | { readonly missing: string } {
  if (!service) return { missing: "the Service does not exist" };
  const port = service.spec?.ports?.[0]?.nodePort;
  return port ? { port } : { missing: `no node port in spec.ports (the Service is of type ${service.spec?.type})` };
}

/**
 * Where peers reach a node port: a Ready node's external address, when a node has one; else
 * undefined, and the API server's host stands for the nodes (as on clusters whose nodes have only
 * private addresses, which peers reach through the same network as the API server).
 */
export function nodeAddressOf(nodes: readonly k8s.V1Node[]): string | undefined {
  const ready = nodes.filter((node) => node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
  return ready.flatMap((node) => node.status?.addresses ?? []).find((address) => address.type === "ExternalIP")
    ?.address;
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
  const exposed: Partial<Record<keyof ExposedHosts, string | number>> = {};
  for (const service of services) {
    const held = service.endpoint === "auth" ? deployed.authService : deployed.gatewayService;
    if (service.reads === "nodePort") {
      const found = nodePortOf(held);
      if ("port" in found) exposed[`${service.endpoint}Port`] = found.port;
    } else {
      const found = loadBalancerAddressOf(held);
      if ("address" in found) exposed[service.endpoint] = found.address;
    }
  }
  return exposed as ExposedHosts;
}

/** A Kubernetes qualified name: an optional DNS-subdomain prefix and `/`, then a name of 63 characters at most. */
const QUALIFIED_NAME =
  /^(?:(?=[a-z0-9.-]{1,253}\/)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\/)?(?=.{1,63}$)[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** Whether `text` is an IPv4 or IPv6 CIDR (`address/prefix`). */
function isCidr(text: string): boolean {
  const [address, prefix, extra] = text.split("/");
  if (extra !== undefined || address === undefined || prefix === undefined || !/^\d{1,3}$/.test(prefix)) return false;
  const family = isIP(address);
  return family !== 0 && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * What is wrong with `settings` for a Service exposed as `exposure`, each problem naming its field:
 * what the API server would refuse at apply, said at preview instead. A class and source ranges
 * are a load balancer's: a `NodePort` Service takes neither.
 */
export function loadBalancerSettingsProblems(
  settings: LoadBalancerSettings,
  exposure: string,
): { readonly field: keyof LoadBalancerSettings; readonly reason: string }[] {
  const problems: { field: keyof LoadBalancerSettings; reason: string }[] = [];
  for (const [key, value] of Object.entries(settings.annotations ?? {})) {
    if (!QUALIFIED_NAME.test(key))
      problems.push({
        field: "annotations",
        reason: `${JSON.stringify(key)} is not an annotation key (an optional DNS prefix and "/", then a name of 63 characters at most)`,
      });
    else if (typeof value !== "string")
      problems.push({ field: "annotations", reason: `the value of ${JSON.stringify(key)} is not text` });
  }
  const { loadBalancerClass: lbClass, loadBalancerSourceRanges: ranges } = settings;
  if (lbClass !== undefined && !(QUALIFIED_NAME.test(lbClass) && lbClass.includes("/")))
    problems.push({
      field: "loadBalancerClass",
      reason: `${JSON.stringify(lbClass)} is not a load-balancer class (a domain-prefixed name, e.g. "example.com/internal")`,
    });
  for (const range of ranges ?? [])
    if (typeof range !== "string" || !isCidr(range))
      problems.push({ field: "loadBalancerSourceRanges", reason: `${JSON.stringify(range)} is not a CIDR` });
  if (exposure !== "LoadBalancer")
    for (const field of ["loadBalancerClass", "loadBalancerSourceRanges"] as const)
      if (settings[field] !== undefined)
        problems.push({ field, reason: `a ${exposure} Service has no load balancer to take it` });
  return problems;
}
