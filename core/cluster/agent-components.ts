/**
 * The names every part of the agent's deployment shares with the agent itself: the three
 * components and the labels their pods carry (the route agent finds the gateway's pod by its
 * label). No I/O, so that `check`, the forgers and the agent (bundled into its image) all load it.
 * The default image, which reads this package's version, is in agent-image.ts, which the agent
 * never loads.
 */
import { MANAGED_BY, MANAGED_BY_LABEL } from "../api/index.js";

/** Label whose value names an agent component (and selects its pods). */
export const COMPONENT_LABEL = "app.kubernetes.io/name";

/** The control agent: auth service, offers, heartbeat, in-band peering, renewal. */
export const AGENT_NAME = "pulumi-liqo-agent";
/** The agent Deployment's one container: the one whose image the Cluster's outputs report. */
export const AGENT_CONTAINER = "agent";
/** The WireGuard gateway. */
export const GATEWAY_NAME = "pulumi-liqo-gateway";
/** The per-node route agent. */
export const ROUTE_NAME = "pulumi-liqo-route";

/** Labels of one component's objects and pods. */
export const componentLabels = (name: string): Record<string, string> => ({
  [MANAGED_BY_LABEL]: MANAGED_BY,
  [COMPONENT_LABEL]: name,
});

/** Port at which the control agent serves its virtual nodes' kubelet API (logs, exec), as kubelets do. */
export const KUBELET_PORT = 10250;

/**
 * Port at which the control agent answers its consumers' offloaded pods' DNS questions (UDP and
 * TCP; above 1024, as the agent runs without privileges), and the Service that gives it their port 53.
 */
export const CONSUMER_DNS_PORT = 5353;
/** The Service offloaded pods use as their nameserver (core/offloading/dns-names.ts). */
export const CONSUMER_DNS_SERVICE = "pulumi-liqo-dns";
