/**
 * Which pod and service CIDRs a `Cluster` announces when its inputs leave them out: read from what
 * the cluster itself declares, in order of trust. Pure: the facts are read elsewhere
 * (`cidr-facts.ts`), so every decision here is unit-tested without a cluster.
 *
 * - Pod CIDR, the first of: the CNI's pool (Flannel's `Network`, Calico's IPPools, Cilium's
 *   cluster pool: what actually hands pods their addresses, `declared-networks.ts`); the controller
 *   manager's `--cluster-cidr` (visible where it runs as a pod, as kubeadm makes it; what the nodes'
 *   ranges are cut from); kubeadm's `networking.podSubnet`. Only when none is there, the smallest
 *   block holding every node's `spec.podCIDRs`, with a warning: a node added later may get a range
 *   outside it, which then is not routed across peerings. EKS with the VPC CNI gives pods addresses
 *   of the VPC and nodes no pod CIDR: that is said, naming `podCidr`.
 * - Service CIDR: the API server's `ServiceCIDR` objects (Kubernetes 1.33 and later; the default
 *   one, `kubernetes`, is made from `--service-cluster-ip-range`); else the API server's flag where
 *   it runs as a pod; else kubeadm's `networking.serviceSubnet`.
 */
import { Cidr } from "../net/cidr.js";
import { cniPodRange, ipv4BlocksOf, kubeadmRange, type DeclaredNetworks } from "./declared-networks.js";

/** What a cluster shows about its networks; each part empty when the cluster does not show it. */
export interface NetworkFacts {
  /** The command line (command and args) of each kube-controller-manager pod of `kube-system`. */
  readonly controllerManagers: readonly (readonly string[])[];
  /** The command line of each kube-apiserver pod of `kube-system`. */
  readonly apiServers: readonly (readonly string[])[];
  /** The ServiceCIDR objects (`networking.k8s.io/v1`), each with its `spec.cidrs`. */
  readonly serviceCidrs: readonly { readonly name: string; readonly cidrs: readonly string[] }[];
  /** Every node, with its `spec.podCIDRs` (`spec.podCIDR` where only that is set). */
  readonly nodes: readonly NodeRanges[];
  /** What the CNI and the installer declare. */
  readonly declared: DeclaredNetworks;
}

/** A node and its `spec.podCIDRs`. */
export interface NodeRanges {
  readonly name: string;
  readonly podCidrs: readonly string[];
}

/** What the inputs gave; a CIDR left out is to be detected. */
export interface GivenCidrs {
  readonly podCidr?: string;
  readonly serviceCidr?: string;
}

/** The CIDRs to announce, and where each detected one was read (absent for one given). */
export interface ClusterCidrs {
  readonly podCidr: string;
  readonly serviceCidr: string;
  readonly detectedFrom: { readonly podCidr?: string; readonly serviceCidr?: string };
}

/** A CIDR that could not be detected: the input to set, and why. */
export interface UndetectedCidr {
  readonly input: "podCidr" | "serviceCidr";
  readonly reason: string;
}

/** The decision: the CIDRs, or every one that could not be detected. */
export type CidrDecision =
  | { readonly ok: true; readonly cidrs: ClusterCidrs }
  | { readonly ok: false; readonly undetected: readonly UndetectedCidr[] };

/** The IPv4 blocks among `texts` (a dual-stack cluster lists IPv6 ones too, which peering does not use). */
const ipv4Blocks = (texts: readonly string[]): Cidr[] => texts.flatMap(ipv4BlocksOf);

/** The IPv4 blocks of the first `--flag=a,b` (or `--flag a,b`) among the command lines. */
function flagBlocks(commandLines: readonly (readonly string[])[], flag: string): Cidr[] {
  for (const line of commandLines) {
    const at = line.findIndex((arg) => arg === flag || arg.startsWith(`${flag}=`));
    if (at < 0) continue;
    const value = line[at]!.includes("=") ? line[at]!.slice(flag.length + 1) : line[at + 1];
    const blocks = ipv4BlocksOf(value);
    if (blocks.length > 0) return blocks;
  }
  return [];
}

/** How a pod CIDR read from the nodes' ranges begins its source: a guess, which {@link podCidrWarning} says. */
const FROM_NODES = "the smallest block holding the spec.podCIDRs of";

function podCidrOf(facts: NetworkFacts): { cidr: string; from: string } | UndetectedCidr {
  const cni = cniPodRange(facts.declared);
  if (cni) return { cidr: cni.cidr.toString(), from: cni.from };
  const flag = flagBlocks(facts.controllerManagers, "--cluster-cidr");
  if (flag.length > 0) return { cidr: flag[0]!.toString(), from: "kube-controller-manager's --cluster-cidr" };
  const kubeadm = kubeadmRange(facts.declared, "podSubnet");
  if (kubeadm) return { cidr: kubeadm.cidr.toString(), from: kubeadm.from };
  const withRange = facts.nodes.filter((n) => ipv4Blocks(n.podCidrs).length > 0);
  if (withRange.length > 0) {
    const blocks = withRange.flatMap((n) => ipv4Blocks(n.podCidrs));
    const without = facts.nodes.length - withRange.length;
    return {
      cidr: Cidr.covering(blocks).toString(),
      from: `${FROM_NODES} ${withRange.length} node(s)` + (without > 0 ? ` (${without} node(s) have none yet)` : ""),
    };
  }
  const why =
    facts.nodes.length === 0
      ? "the cluster has no nodes yet, and neither its CNI nor its installer declares a pod range"
      : `none of its ${facts.nodes.length} node(s) has spec.podCIDRs, and neither its CNI nor its installer ` +
        "declares a pod range (EKS with the VPC CNI is such a cluster: its pods take addresses of the VPC's subnets, and the pod " +
        "CIDR to set is the VPC's CIDR)";
  return {
    input: "podCidr",
    reason: `could not be detected: ${why}; set podCidr to the range pods take addresses from`,
  };
}

function serviceCidrOf(facts: NetworkFacts): { cidr: string; from: string } | UndetectedCidr {
  const objects = facts.serviceCidrs
    .map((o) => ({ name: o.name, blocks: ipv4Blocks(o.cidrs) }))
    .filter((o) => o.blocks.length > 0);
  // The default object is the API server's own range; others extend it, and one block is announced.
  const chosen = objects.find((o) => o.name === "kubernetes") ?? (objects.length === 1 ? objects[0] : undefined);
  if (chosen) {
    const others = objects.length - 1;
    return {
      cidr: chosen.blocks[0]!.toString(),
      from: `ServiceCIDR ${chosen.name}` + (others > 0 ? ` (${others} other ServiceCIDR(s) not announced)` : ""),
    };
  }
  const flag = flagBlocks(facts.apiServers, "--service-cluster-ip-range");
  if (flag.length > 0) return { cidr: flag[0]!.toString(), from: "kube-apiserver's --service-cluster-ip-range" };
  const kubeadm = kubeadmRange(facts.declared, "serviceSubnet");
  if (kubeadm) return { cidr: kubeadm.cidr.toString(), from: kubeadm.from };
  const why =
    objects.length > 1
      ? `the cluster has ${objects.length} ServiceCIDR objects and none is the default one (kubernetes)`
      : "the cluster shows no ServiceCIDR object (Kubernetes before 1.33), no API server whose " +
        "--service-cluster-ip-range is visible, and no kubeadm-config";
  return {
    input: "serviceCidr",
    reason: `could not be detected: ${why}; set serviceCidr to the cluster's service range`,
  };
}

const isUndetected = (found: { cidr: string } | UndetectedCidr): found is UndetectedCidr => "input" in found;

/** The CIDRs a cluster announces: those given, the others detected from `facts`, or what could not be. */
export function decideClusterCidrs(given: GivenCidrs, facts: NetworkFacts): CidrDecision {
  const pod = given.podCidr !== undefined ? { cidr: given.podCidr } : podCidrOf(facts);
  const service = given.serviceCidr !== undefined ? { cidr: given.serviceCidr } : serviceCidrOf(facts);
  if (isUndetected(pod) || isUndetected(service)) return { ok: false, undetected: [pod, service].filter(isUndetected) };
  return {
    ok: true,
    cidrs: {
      podCidr: pod.cidr,
      serviceCidr: service.cidr,
      detectedFrom: {
        ...("from" in pod ? { podCidr: pod.from } : {}),
        ...("from" in service ? { serviceCidr: service.from } : {}),
      },
    },
  };
}

/** Whether the inputs leave a CIDR to detect. */
export const needsDetection = (given: GivenCidrs): boolean =>
  given.podCidr === undefined || given.serviceCidr === undefined;

/** The error message of CIDRs that could not be detected, naming each input to set. */
export function describeUndetected(cluster: string, undetected: readonly UndetectedCidr[]): string {
  return `cluster ${cluster}: ${undetected.map((u) => `${u.input} ${u.reason}`).join("; ")}`;
}

/**
 * The warning a `Cluster` shows when its pod CIDR is a guess from its nodes' ranges, naming the
 * input that ends it; undefined when the CIDR was given or read from what declares it.
 */
export function podCidrWarning(
  cluster: string,
  detectedFrom: ClusterCidrs["detectedFrom"] | undefined,
): string | undefined {
  if (!detectedFrom?.podCidr?.startsWith(FROM_NODES)) return undefined;
  return (
    `Cluster "${cluster}": podCidr was read as ${detectedFrom.podCidr}, since neither the cluster's CNI nor its ` +
    "installer declares its pod range; a node added later may get a range outside it, whose pods peerings do not " +
    "route (pulumi refresh shows such a node in nodesOutsidePodCidr): set podCidr to the cluster's pod range"
  );
}

/** The nodes (as `name range`) with a pod range not inside `podCidr`: their pods are not routed across peerings. */
export function nodesOutside(podCidr: string, nodes: readonly NodeRanges[]): string[] {
  const announced = Cidr.parse(podCidr);
  return nodes.flatMap((node) =>
    ipv4Blocks(node.podCidrs)
      .filter((range) => !announced.holds(range))
      .map((range) => `${node.name} ${range.toString()}`),
  );
}

/** The warning a `Cluster` shows for nodes outside its pod CIDR; undefined when there is none. */
export function nodesOutsideWarning(cluster: string, podCidr: string, outside: readonly string[]): string | undefined {
  if (outside.length === 0) return undefined;
  return (
    `Cluster "${cluster}": ${outside.length} node(s) have a pod range outside podCidr ${podCidr} (${outside.join(", ")}): ` +
    "peerings do not route their pods; set podCidr to a range that holds them and run pulumi up"
  );
}
