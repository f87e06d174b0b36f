/**
 * Planning a lab: names, addresses and CIDRs for every cluster, decided before anything is
 * created. Pure, so every rule here is unit-tested without root or clusters.
 */
import { join } from "node:path";
import { Cidr } from "../core/net/cidr.js";
import type { ConnectivityProfile, PortForward, PortRange } from "./connectivity.js";
import { NODE_LAN_CIDR, planNodes, type PlannedNode } from "./node-plan.js";

/** The port every local API server listens on. */
export const API_SERVER_PORT = 6443;

/** The load balancers a lab can give its clusters: MetalLB in L2 mode, or none (Services of type LoadBalancer stay pending). */
export const LOAD_BALANCERS = ["metallb", "none"] as const;

/** One of {@link LOAD_BALANCERS}. */
export type LoadBalancerKind = (typeof LOAD_BALANCERS)[number];

/**
 * Where the clusters' load-balancer ranges start in the lab subnet, and how many addresses each
 * takes: cluster i has `.(64+4i)` to `.(67+4i)`, above the clusters' own addresses (`.10` up to
 * `.49` for the most clusters a lab has) and the host's (`.1`), the last at `.223`. Four: the agent's
 * two Services (auth service, gateway) and two more.
 */
export const LOAD_BALANCER_RANGE_START = 64;
export const LOAD_BALANCER_RANGE_SIZE = 4;

/** Cluster `index`'s load-balancer addresses in the lab subnet `labSubnet`, as MetalLB writes a range (`first-last`). */
export function loadBalancerRange(labSubnet: Cidr, index: number): string {
  const first = LOAD_BALANCER_RANGE_START + LOAD_BALANCER_RANGE_SIZE * index;
  return `${labSubnet.nth(first)}-${labSubnet.nth(first + LOAD_BALANCER_RANGE_SIZE - 1)}`;
}

/** One cluster asked of a lab. */
export interface ClusterRequest {
  /** Cluster name: a lowercase letter, then up to 11 lowercase letters, digits or dashes. */
  readonly name: string;
  /** Pod CIDR. Two clusters may share one (to exercise remapping). @default 10.(100+i).0.0/16 */
  readonly podCidr?: string;
  /** Service CIDR. @default 10.(200+i).0.0/16 */
  readonly serviceCidr?: string;
  /**
   * Whether each node gets its pod /24 as `spec.podCIDR`, as a controller manager that allocates
   * node ranges gives it; `false`: nodes carry none, as on EKS with the VPC CNI (pods still take
   * addresses of the node's /24). @default true
   */
  readonly nodePodCidrs?: boolean;
  /**
   * The Pod Security level the API server enforces in every namespace that does not set its own
   * (`kube-system` exempt), as hardened clusters do; absent: none enforced, Kubernetes' default.
   */
  readonly podSecurity?: PodSecurityLevel;
  /**
   * How each node's kube-proxy programs Services: `iptables`, or `nftables` (GA since 1.33, what
   * newer clusters move to). @default "iptables"
   */
  readonly kubeProxyMode?: KubeProxyMode;
  /**
   * The Kubernetes minor release its control plane and nodes run, one of scripts/versions.sh's
   * `KUBERNETES_RELEASES` (e.g. `1.37`); absent: the default release (`KUBERNETES_VERSION`).
   */
  readonly kubernetes?: string;
  /**
   * Its CNI: `bridge` (the standard plugin, static routes between the nodes) or `flannel` (Flannel
   * with its VXLAN backend, flannel.ts). @default "bridge"
   */
  readonly cni?: CniKind;
  /** Its worker nodes. @default the lab's ({@link PlanSettings.nodes}) */
  readonly nodes?: number;
  /**
   * The pods each of its nodes' kubelets admits (`maxPods`), for a cluster that must hold many: at
   * most 250, as a node's pods take addresses of its /24. @default kubelet's, 110
   */
  readonly maxPods?: number;
  /**
   * The range its API server allocates node ports from: `lab`, wide enough for the ports the
   * lab's connectivity profiles open and the tests pin (8443, 51820-51839); `kubernetes`,
   * Kubernetes' own default, as a user's cluster has it (what upstream's conformance suite checks
   * each node port against). @default "lab"
   */
  readonly nodePortRange?: NodePortRangeKind;
}

/** The node-port ranges a lab's cluster may allocate from ({@link ClusterRequest.nodePortRange}). */
export const NODE_PORT_RANGES = { lab: "7000-52767", kubernetes: "30000-32767" } as const;
/** A key of {@link NODE_PORT_RANGES}. */
export type NodePortRangeKind = keyof typeof NODE_PORT_RANGES;

/** The most pods a lab's node admits: its /24 holds 254 addresses, less a few for the node's own. */
export const MAX_PODS_PER_NODE = 250;

/** The CNIs a lab's cluster may run. */
export const CNIS = ["bridge", "flannel"] as const;
/** One of {@link CNIS}. */
export type CniKind = (typeof CNIS)[number];

/** The modes a lab's kube-proxy may run in. */
export const KUBE_PROXY_MODES = ["iptables", "nftables"] as const;
/** One of {@link KUBE_PROXY_MODES}. */
export type KubeProxyMode = (typeof KUBE_PROXY_MODES)[number];

/** The Pod Security Standards a lab's API server may enforce by default. */
export const POD_SECURITY_LEVELS = ["baseline", "restricted"] as const;
/** One of {@link POD_SECURITY_LEVELS}. */
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];

/** Every name and address of one cluster. */
export interface PlannedCluster {
  /** Cluster name. */
  readonly name: string;
  /** Position in the lab, from 0. */
  readonly index: number;
  /** The cluster's network namespace. */
  readonly netns: string;
  /** The NAT router's namespace, for a cluster behind NAT. */
  readonly routerNetns?: string;
  /** Host end of the veth on the lab bridge (the router's, behind NAT). */
  readonly hostLink: string;
  /** Address of the cluster's own interface. */
  readonly address: string;
  /** Address others reach it at: its own, or its router's behind NAT. */
  readonly publicAddress: string;
  /** Behind NAT: the router's address on the private link (the cluster's default gateway). */
  readonly gatewayAddress?: string;
  /** Behind NAT: the private link's CIDR. */
  readonly privateCidr?: string;
  /** Pod CIDR. */
  readonly podCidr: string;
  /** Service CIDR. */
  readonly serviceCidr: string;
  /** Directory of the cluster's files. */
  readonly dir: string;
  /** The cluster's worker nodes (node 1 in the cluster's namespace). */
  readonly nodes: readonly PlannedNode[];
  /** `false` when its nodes carry no `spec.podCIDR` ({@link ClusterRequest.nodePodCidrs}). @default true */
  readonly nodePodCidrs?: boolean;
  /** The level enforced by default ({@link ClusterRequest.podSecurity}). */
  readonly podSecurity?: PodSecurityLevel;
  /** kube-proxy's mode ({@link ClusterRequest.kubeProxyMode}); absent: iptables. */
  readonly kubeProxyMode?: KubeProxyMode;
  /** The Kubernetes minor release it runs ({@link ClusterRequest.kubernetes}); absent: the default. */
  readonly kubernetes?: string;
  /** Its CNI ({@link ClusterRequest.cni}); absent: bridge. */
  readonly cni?: CniKind;
  /** Pods each node admits ({@link ClusterRequest.maxPods}); absent: kubelet's default. */
  readonly maxPods?: number;
  /** Its node-port range ({@link ClusterRequest.nodePortRange}); absent: the lab's. */
  readonly nodePortRange?: NodePortRangeKind;
  /**
   * The addresses its load balancer gives Services of type LoadBalancer (`first-last`, on the lab
   * subnet, announced on its lab interface): absent when the lab has none, and for a cluster behind
   * NAT, which has no interface on the lab subnet.
   */
  readonly loadBalancerAddresses?: string;
}

/** Every decision about a lab, before anything exists. */
export interface LabPlan {
  /** Lab name. */
  readonly name: string;
  /** Host bridge joining the clusters. */
  readonly bridge: string;
  /** Third octet of the lab's subnet 172.29.N.0/24. */
  readonly subnetIndex: number;
  /** The host's address on the bridge (where `pulumi` runs from). */
  readonly hostAddress: string;
  /** Connectivity profile. */
  readonly profile: ConnectivityProfile;
  /** Gateway UDP ports kept open under `gateway-only`. */
  readonly gatewayPorts: PortRange;
  /** Ports NAT routers forward. */
  readonly natForwards: readonly PortForward[];
  /** The clusters' load balancer; absent in states written before labs had one, which had none. */
  readonly loadBalancer?: LoadBalancerKind;
  /** The clusters. */
  readonly clusters: readonly PlannedCluster[];
}

/** Settings of a plan that do not come from the cluster requests. */
export interface PlanSettings {
  /** Connectivity profile. */
  readonly profile: ConnectivityProfile;
  /** Under `nat`, the clusters behind NAT. @default the last cluster */
  readonly behindNat?: readonly string[] | undefined;
  /** Ports NAT routers forward. */
  readonly natForwards: readonly PortForward[];
  /** Gateway UDP ports kept open under `gateway-only`. */
  readonly gatewayPorts: PortRange;
  /** Subnet indexes taken by other labs or by host addresses. */
  readonly usedSubnetIndexes: readonly number[];
  /** Worker nodes per cluster. @default 1 */
  readonly nodes?: number;
  /** The clusters' load balancer. @default "none" */
  readonly loadBalancer?: LoadBalancerKind;
}

/** Thrown by {@link planLab} with every problem found, not only the first. */
export class LabPlanError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid lab:\n  - ${problems.join("\n  - ")}`);
    this.name = "LabPlanError";
  }
}

const PRIVATE_NAT_CIDR = "192.168.100.0/24";
const MAX_CLUSTERS = 40;

/** Plans lab `name` in `dir`; throws {@link LabPlanError} listing every invalid input. */
export function planLab(
  name: string,
  dir: string,
  requests: readonly ClusterRequest[],
  settings: PlanSettings,
): LabPlan {
  const problems: string[] = [];
  if (!/^[a-z0-9]{1,8}$/.test(name)) problems.push(`lab name "${name}": use 1 to 8 lowercase letters or digits`);
  if (requests.length === 0) problems.push("no clusters requested");
  if (requests.length > MAX_CLUSTERS) problems.push(`${requests.length} clusters requested; at most ${MAX_CLUSTERS}`);
  const names = requests.map((r) => r.name);
  for (const [i, n] of names.entries()) {
    if (!/^[a-z][a-z0-9-]{0,11}$/.test(n))
      problems.push(`cluster name "${n}": use a lowercase letter, then up to 11 lowercase letters, digits or dashes`);
    if (names.indexOf(n) !== i && names.indexOf(n, names.indexOf(n) + 1) === i)
      problems.push(`cluster name "${n}" is given more than once`);
  }
  const behindNat =
    settings.profile === "nat" ? (settings.behindNat?.length ? settings.behindNat : names.slice(-1)) : [];
  for (const n of behindNat)
    if (!names.includes(n)) problems.push(`--behind-nat "${n}" is not one of the clusters (${names.join(", ")})`);
  if (settings.profile !== "nat" && settings.behindNat?.length)
    problems.push(`--behind-nat needs --profile nat (profile is ${settings.profile})`);
  const { from, to } = settings.gatewayPorts;
  if (!(Number.isInteger(from) && Number.isInteger(to) && from >= 1 && from <= to && to <= 65535)) {
    problems.push(`gateway ports ${from}-${to}: expected a range within 1-65535`);
  }

  const subnetIndex = [...Array(250).keys()].map((i) => i + 1).find((i) => !settings.usedSubnetIndexes.includes(i));
  if (subnetIndex === undefined) problems.push("every lab subnet 172.29.1-250.0/24 is in use: bring a lab down first");
  const labSubnet = Cidr.parse(`172.29.${subnetIndex ?? 0}.0/24`);

  const clusters = requests.map((request, index): PlannedCluster | undefined => {
    const parse = (what: string, text: string): Cidr | undefined => {
      try {
        const cidr = Cidr.parse(text);
        const reservedRanges: [string, Cidr][] = [
          ["the NAT network", Cidr.parse(PRIVATE_NAT_CIDR)],
          ["the node network", Cidr.parse(NODE_LAN_CIDR)],
        ];
        if (subnetIndex !== undefined) reservedRanges.push(["the lab network", labSubnet]);
        for (const [label, reserved] of reservedRanges) {
          if (cidr.overlaps(reserved))
            problems.push(`cluster ${request.name}: ${what} ${text} overlaps ${label} ${reserved.toString()}`);
        }
        return cidr;
      } catch (error) {
        problems.push(`cluster ${request.name}: ${what}: ${(error as Error).message}`);
        return undefined;
      }
    };
    const pods = parse("pod CIDR", request.podCidr ?? `10.${100 + index}.0.0/16`);
    const services = parse("service CIDR", request.serviceCidr ?? `10.${200 + index}.0.0/16`);
    if (pods && services && pods.overlaps(services))
      problems.push(
        `cluster ${request.name}: pod CIDR ${pods.toString()} overlaps service CIDR ${services.toString()}`,
      );
    if (!pods || !services) return undefined;
    const publicAddress = labSubnet.nth(10 + index);
    const natted = behindNat.includes(request.name);
    const privateCidr = Cidr.parse(PRIVATE_NAT_CIDR);
    const netns = `liqo-${name}-${request.name}`;
    const clusterDir = join(dir, request.name);
    const planned = planNodes(
      { lab: name, name: request.name, netns, podCidr: pods, dir: clusterDir },
      request.nodes ?? settings.nodes ?? 1,
    );
    problems.push(...planned.problems);
    if (
      request.maxPods !== undefined &&
      (!Number.isInteger(request.maxPods) || request.maxPods < 1 || request.maxPods > MAX_PODS_PER_NODE)
    )
      problems.push(`cluster ${request.name}: maxPods ${request.maxPods}; expected 1 to ${MAX_PODS_PER_NODE}`);
    return {
      name: request.name,
      index,
      netns,
      ...(natted
        ? {
            routerNetns: `liqo-${name}-${request.name}-nat`,
            gatewayAddress: privateCidr.nth(1),
            privateCidr: privateCidr.toString(),
          }
        : {}),
      hostLink: `lq-${name}-${index}`,
      address: natted ? privateCidr.nth(2) : publicAddress,
      publicAddress,
      podCidr: pods.toString(),
      serviceCidr: services.toString(),
      dir: clusterDir,
      nodes: planned.nodes,
      ...(request.nodePodCidrs === false ? { nodePodCidrs: false } : {}),
      ...(request.podSecurity ? { podSecurity: request.podSecurity } : {}),
      ...(request.kubeProxyMode && request.kubeProxyMode !== "iptables"
        ? { kubeProxyMode: request.kubeProxyMode }
        : {}),
      ...(request.kubernetes ? { kubernetes: request.kubernetes } : {}),
      ...(request.cni && request.cni !== "bridge" ? { cni: request.cni } : {}),
      ...(request.maxPods !== undefined ? { maxPods: request.maxPods } : {}),
      ...(request.nodePortRange && request.nodePortRange !== "lab" ? { nodePortRange: request.nodePortRange } : {}),
      ...(settings.loadBalancer === "metallb" && !natted
        ? { loadBalancerAddresses: loadBalancerRange(labSubnet, index) }
        : {}),
    };
  });
  if (problems.length > 0) throw new LabPlanError(problems);
  return {
    name,
    bridge: `lq-${name}`,
    subnetIndex: subnetIndex!,
    hostAddress: labSubnet.nth(1),
    profile: settings.profile,
    gatewayPorts: settings.gatewayPorts,
    natForwards: settings.natForwards,
    loadBalancer: settings.loadBalancer ?? "none",
    clusters: clusters as PlannedCluster[],
  };
}
