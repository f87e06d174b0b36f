/**
 * The node ports a virtual node answers. On a real node kube-proxy answers every Service's node
 * port at the node's addresses; a virtual node's address is the consumer agent's pod (its kubelet
 * endpoint), where no kube-proxy listens. So the agent listens there on each node port of the
 * Services of the offloaded namespaces, and relays each connection (or datagram) to the Service's
 * cluster IP and port, which the consumer's kube-proxy spreads over its endpoints, offloaded or not.
 *
 * Only this cluster's own Services decide what is forwarded, read from its own API server; nothing
 * a provider sends reaches this decision. Pure.
 */
import type * as k8s from "@kubernetes/client-node";
import { isIP } from "node:net";

/** The protocols relayed; SCTP is not. */
export type NodePortProtocol = "TCP" | "UDP";

/** One node port the virtual node answers, and where it leads. */
export interface NodePortForward {
  readonly nodePort: number;
  readonly protocol: NodePortProtocol;
  /** The Service's cluster IP and port. */
  readonly target: { readonly host: string; readonly port: number };
  /** `<namespace>/<name>` of the Service, for the agent's log. */
  readonly service: string;
}

/** The key of a listener: a node port is allocated per protocol. */
export const forwardKey = (forward: Pick<NodePortForward, "nodePort" | "protocol">): string =>
  `${forward.protocol}/${forward.nodePort}`;

/**
 * The node ports of `services` (NodePort and LoadBalancer Services that have a cluster IP), one
 * per port and protocol, TCP and UDP; the first Service to claim a port keeps it, in name order
 * (the API server never gives one port to two).
 */
export function nodePortForwards(services: readonly k8s.V1Service[]): NodePortForward[] {
  const forwards = new Map<string, NodePortForward>();
  const named = [...services].sort((x, y) => nameOf(x).localeCompare(nameOf(y)));
  for (const service of named) {
    const { type, clusterIP, ports } = service.spec ?? {};
    // A headless Service's clusterIP is `None`: nothing to relay to.
    if ((type !== "NodePort" && type !== "LoadBalancer") || !clusterIP || isIP(clusterIP) === 0) continue;
    for (const port of ports ?? []) {
      const protocol = (port.protocol ?? "TCP") as string;
      if (port.nodePort === undefined || (protocol !== "TCP" && protocol !== "UDP")) continue;
      const forward: NodePortForward = {
        nodePort: port.nodePort,
        protocol,
        target: { host: clusterIP, port: port.port },
        service: nameOf(service),
      };
      if (!forwards.has(forwardKey(forward))) forwards.set(forwardKey(forward), forward);
    }
  }
  return [...forwards.values()];
}

const nameOf = (service: k8s.V1Service): string => `${service.metadata?.namespace}/${service.metadata?.name}`;
