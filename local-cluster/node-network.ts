/**
 * A cluster's node network: the node LAN (bridge `nodes` in node 1's namespace, a veth into it
 * from each other node's namespace), host-gw routes from every node to every other node's pod /24
 * (unless the CNI routes between nodes itself),
 * and node 1's masquerade of what leaves the cluster. Pure rules first, then the calls that apply them.
 */
import { runIn } from "../host/exec.js";
import { createNamespace } from "./netns.js";
import { NODE_LAN_BRIDGE, NODE_LAN_CIDR, type PlannedNode } from "./node-plan.js";

/** The routes of node `self`: every other node's pod /24 via that node's LAN address (host-gw). */
export function nodeRoutes(self: PlannedNode, nodes: readonly PlannedNode[]): { to: string; via: string }[] {
  return nodes.filter((n) => n.index !== self.index).map((n) => ({ to: n.podCidr, via: n.address }));
}

/**
 * Node 1's NAT rules (arguments after `-t nat -A POSTROUTING`): masquerade what leaves through
 * the uplink from the pod CIDR and from the node LAN, and nothing else, so that pod traffic into a
 * WireGuard tunnel keeps its pod source address.
 */
export function uplinkMasquerade(uplink: string, clusterPodCidr: string): string[][] {
  return [clusterPodCidr, NODE_LAN_CIDR].map((source) => ["-s", source, "-o", uplink, "-j", "MASQUERADE"]);
}

/** What the node network of one cluster is built from. */
export interface NodeNetworkSpec {
  /** The cluster's nodes (node 1 first). */
  readonly nodes: readonly PlannedNode[];
  /** The cluster's pod CIDR. */
  readonly podCidr: string;
  /** Node 1's uplink: `eth0`, or `lan` behind NAT. */
  readonly uplink: string;
  /** The cluster's Service CIDR. */
  readonly serviceCidr: string;
  /** Whether to route every node's pod /24 via its LAN address (host-gw); false when the CNI routes between nodes (Flannel). */
  readonly hostGwRoutes: boolean;
}

const LAN_PREFIX = NODE_LAN_CIDR.split("/")[1]!;

/**
 * Every node's kernel settings: forwarding, and no reverse-path filter (interfaces made later, the
 * gateway's, take `default`'s). No IPv6, which the labs' clusters do not use: kube-proxy runs
 * dual-stack wherever the kernel has it, and then writes every rule twice (ip6tables too).
 */
export const NODE_SYSCTLS: readonly string[] = [
  "net.ipv4.ip_forward=1",
  "net.ipv4.conf.all.rp_filter=0",
  "net.ipv4.conf.default.rp_filter=0",
  "net.ipv6.conf.all.disable_ipv6=1",
  "net.ipv6.conf.default.disable_ipv6=1",
];

/** Creates node i ≥ 2's namespace and joins it to the node LAN in `hub` (node 1's namespace), with node 1 its default route. */
async function joinNodeLan(hub: string, first: PlannedNode, node: PlannedNode): Promise<void> {
  const link = node.lanLink!;
  await createNamespace(node.netns);
  await runIn(hub, "ip", ["link", "add", link, "type", "veth", "peer", "name", `${link}p`]);
  await runIn(hub, "ip", ["link", "set", `${link}p`, "netns", node.netns]);
  await runIn(hub, "ip", ["link", "set", link, "master", NODE_LAN_BRIDGE]);
  await runIn(hub, "ip", ["link", "set", link, "up"]);
  await runIn(node.netns, "ip", ["link", "set", `${link}p`, "name", "eth0"]);
  await runIn(node.netns, "ip", ["addr", "add", `${node.address}/${LAN_PREFIX}`, "dev", "eth0"]);
  await runIn(node.netns, "ip", ["link", "set", "eth0", "up"]);
  await runIn(node.netns, "ip", ["route", "add", "default", "via", first.address]);
}

/**
 * A node's kernel settings and, with host-gw routing, its routes to the other nodes' pod /24s.
 * Nodes route pod traffic (a fresh namespace does not forward), and take traffic from a tunnel
 * whose sources their routes would not send back that way: what a real node's setup does for a
 * gateway, which cannot write /proc/sys from its pod.
 */
async function configureNode(node: PlannedNode, nodes: readonly PlannedNode[], hostGwRoutes: boolean): Promise<void> {
  for (const setting of NODE_SYSCTLS) await runIn(node.netns, "sysctl", ["-q", "-w", setting]);
  for (const route of hostGwRoutes ? nodeRoutes(node, nodes) : [])
    await runIn(node.netns, "ip", ["route", "replace", route.to, "via", route.via]);
}

/** Creates the node LAN, the other nodes' namespaces and links, the routes and node 1's masquerade. */
export async function createNodeNetwork(spec: NodeNetworkSpec): Promise<void> {
  const first = spec.nodes[0]!;
  const hub = first.netns;
  await runIn(hub, "ip", ["link", "add", NODE_LAN_BRIDGE, "type", "bridge"]);
  await runIn(hub, "ip", ["addr", "add", `${first.address}/${LAN_PREFIX}`, "dev", NODE_LAN_BRIDGE]);
  await runIn(hub, "ip", ["link", "set", NODE_LAN_BRIDGE, "up"]);
  for (const node of spec.nodes.slice(1)) await joinNodeLan(hub, first, node);
  for (const node of spec.nodes) await configureNode(node, spec.nodes, spec.hostGwRoutes);
  // Node 1 has no default route (the lab's namespaces are isolated), so a host-network process there
  // (the gateway) would get "network unreachable" for a ClusterIP before kube-proxy's DNAT: a route
  // for the Service range lets the connect reach that DNAT. The other nodes route it via node 1.
  await runIn(hub, "ip", ["route", "replace", spec.serviceCidr, "dev", NODE_LAN_BRIDGE]);
  for (const rule of uplinkMasquerade(spec.uplink, spec.podCidr))
    await runIn(hub, "iptables", ["-t", "nat", "-A", "POSTROUTING", ...rule]);
}

/**
 * Adds the last of `nodes` (a node planned after the others) to a running cluster's node network:
 * its namespace on the node LAN, its settings, and with host-gw routing the routes between it and
 * every other node, both ways.
 */
export async function addToNodeNetwork(nodes: readonly PlannedNode[], hostGwRoutes: boolean): Promise<void> {
  const added = nodes[nodes.length - 1]!;
  await joinNodeLan(nodes[0]!.netns, nodes[0]!, added);
  for (const node of hostGwRoutes ? nodes : [added]) await configureNode(node, nodes, hostGwRoutes);
}
