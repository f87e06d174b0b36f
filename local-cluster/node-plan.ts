/**
 * Planning a cluster's worker nodes: names, namespaces, addresses, pod /24s, cgroup roots and
 * paths, decided before anything is created. Pure, like plan.ts, which calls it for every cluster.
 *
 * Node 1 runs in the cluster's own namespace, beside the control plane (a kubeadm control-plane
 * node that also runs pods); node i ≥ 2 has a namespace of its own, joined to node 1's by a veth
 * into the cluster's node LAN, so that pod traffic between nodes is routed, not bridged.
 */
import { join } from "node:path";
import { Cidr } from "../core/net/cidr.js";

/**
 * The node LAN of every cluster: the same in each, because it is private to its cluster (inside
 * node 1's namespace). It must not overlap the NAT link 192.168.100.0/24.
 */
export const NODE_LAN_CIDR = "192.168.101.0/24";

/** Name of the node LAN's bridge in node 1's namespace. */
export const NODE_LAN_BRIDGE = "nodes";

/** Most nodes a cluster may have (LAN addresses and pod /24s stay short and readable). */
export const MAX_NODES = 8;

/** Longest path a unix socket may have (sun_path is 108 bytes, one for the terminating NUL). */
export const MAX_SOCKET_PATH = 107;

/** One worker node of a cluster. */
export interface PlannedNode {
  /** Node name, `<cluster>-n<i>`: the Node object's name and the kubelet's identity. */
  readonly name: string;
  /** Position in the cluster, from 1. */
  readonly index: number;
  /** The network namespace the node's processes run in (node 1: the cluster's). */
  readonly netns: string;
  /** The node's address on the cluster's node LAN: its InternalIP. */
  readonly address: string;
  /** Node i ≥ 2: name of its veth's end on node 1's LAN bridge (its own end is `eth0`). */
  readonly lanLink?: string;
  /** The node's pod CIDR: the i-th /24 of the cluster's pod CIDR (also the Node's spec.podCIDR). */
  readonly podCidr: string;
  /** The node's directory: containerd's root and state, kubelet's root, configs, logs. */
  readonly dir: string;
  /** The cgroup (in every hierarchy) that holds everything the node runs. */
  readonly cgroupRoot: string;
  /** Name of the node's CNI network (unique on the machine: the CNI cache is keyed by it). */
  readonly cniNetwork: string;
  /** containerd's socket. */
  readonly containerdSocket: string;
}

/** Paths of a node's files, derived from its directory alone. */
export interface NodePaths {
  /** containerd's persistent root (images, snapshots). */
  readonly containerdRoot: string;
  /** containerd's state (sockets, task bundles, pod network namespaces). */
  readonly containerdState: string;
  /** containerd's configuration file. */
  readonly containerdConfig: string;
  /** runc's state root. */
  readonly runcRoot: string;
  /** kubelet's root directory. */
  readonly kubeletRoot: string;
  /** Where kubelet keeps pod logs. */
  readonly podLogs: string;
  /** The CNI configuration directory. */
  readonly cniConfDir: string;
  /** host-local IPAM's allocations. */
  readonly ipamDir: string;
  /** Certificates and kubeconfigs of the node. */
  readonly pki: string;
  /** Logs of the node's processes. */
  readonly logs: string;
  /** Where the cluster's storage makes the node's volumes, a directory each (local-path-storage.ts). */
  readonly volumes: string;
}

/** Paths of the files of the node in `dir`. */
export function nodePaths(dir: string): NodePaths {
  return {
    containerdRoot: join(dir, "containerd"),
    containerdState: join(dir, "run"),
    containerdConfig: join(dir, "containerd.toml"),
    runcRoot: join(dir, "runc"),
    kubeletRoot: join(dir, "kubelet"),
    podLogs: join(dir, "pods"),
    cniConfDir: join(dir, "cni"),
    ipamDir: join(dir, "ipam"),
    pki: join(dir, "pki"),
    logs: join(dir, "logs"),
    volumes: join(dir, "local-path"),
  };
}

/** The longest socket path a node in `dir` uses (kubelet's device-plugin and pod-resources sockets). */
export function longestSocketPath(dir: string): string {
  return join(nodePaths(dir).kubeletRoot, "device-plugins", "kubelet.sock");
}

/** The cluster a node plan is made for. */
export interface NodeHost {
  /** Lab name. */
  readonly lab: string;
  /** Cluster name. */
  readonly name: string;
  /** The cluster's namespace (node 1's). */
  readonly netns: string;
  /** The cluster's pod CIDR. */
  readonly podCidr: Cidr;
  /** The cluster's directory. */
  readonly dir: string;
}

/**
 * Plans `count` nodes of `cluster`. Returns the nodes, or the problems found (each naming the
 * input), so that planLab reports them with every other problem.
 */
export function planNodes(cluster: NodeHost, count: number): { nodes: PlannedNode[]; problems: string[] } {
  const problems: string[] = [];
  if (!Number.isInteger(count) || count < 1 || count > MAX_NODES) {
    problems.push(`cluster ${cluster.name}: ${count} nodes requested; expected 1 to ${MAX_NODES}`);
    return { nodes: [], problems };
  }
  // Node i takes the i-th /24 (node 1: x.y.1.0/24), so the pod CIDR needs count+1 of them.
  if (cluster.podCidr.prefixLength > 24 || cluster.podCidr.size < (count + 1) * 256) {
    problems.push(
      `cluster ${cluster.name}: pod CIDR ${cluster.podCidr.toString()} is too small for ${count} node(s): ` +
        `each node takes a /24 (the i-th), so it needs at least ${count + 1} /24s`,
    );
    return { nodes: [], problems };
  }
  const lan = Cidr.parse(NODE_LAN_CIDR);
  const nodes = Array.from({ length: count }, (_, i): PlannedNode => {
    const index = i + 1;
    const own = `liqo-${cluster.lab}-${cluster.name}-n${index}`;
    const dir = join(cluster.dir, `n${index}`);
    return {
      name: `${cluster.name}-n${index}`,
      index,
      netns: index === 1 ? cluster.netns : own,
      address: lan.nth(index),
      ...(index === 1 ? {} : { lanLink: `n${index}` }),
      podCidr: `${cluster.podCidr.nth(index * 256)}/24`,
      dir,
      cgroupRoot: `/${own}`,
      cniNetwork: own,
      containerdSocket: join(nodePaths(dir).containerdState, "containerd.sock"),
    };
  });
  const longest = longestSocketPath(nodes[nodes.length - 1]!.dir);
  if (Buffer.byteLength(longest) > MAX_SOCKET_PATH)
    problems.push(
      `cluster ${cluster.name}: socket path ${longest} is ${Buffer.byteLength(longest)} bytes; a unix socket's ` +
        `path may have at most ${MAX_SOCKET_PATH}: use a shorter lab root (LIQO_LAB_ROOT)`,
    );
  return { nodes, problems };
}
