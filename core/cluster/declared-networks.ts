/**
 * What a cluster's CNI and installer declare of its networks, in the objects they keep in the API
 * (`cidr-facts.ts` reads them; `cidr-detection.ts` takes them in order). Pure: texts in, blocks out.
 *
 * - Flannel: ConfigMap `kube-flannel-cfg` (namespace `kube-flannel`, or `kube-system` in older
 *   manifests), key `net-conf.json`, field `Network`: the range every node's subnet is cut from.
 * - Calico: the `IPPool`s (`crd.projectcalico.org/v1`), each `spec.cidr`; disabled pools hand out
 *   no address and are left out.
 * - Cilium: ConfigMap `kube-system/cilium-config`, key `cluster-pool-ipv4-cidr`, when its IPAM is
 *   `cluster-pool` (its default); under `kubernetes` IPAM it takes the nodes' ranges, read elsewhere.
 * - kubeadm: ConfigMap `kube-system/kubeadm-config`, key `ClusterConfiguration`, fields
 *   `networking.podSubnet` and `networking.serviceSubnet` (what `kubeadm init` was given; kind
 *   records it too).
 */
import { load } from "js-yaml";
import { Cidr } from "../net/cidr.js";

/** The texts a cluster's CNI and installer keep about its networks; each absent where it has none. */
export interface DeclaredNetworks {
  /** Flannel's `net-conf.json`, and the namespace its ConfigMap was found in. */
  readonly flannel?: { readonly namespace: string; readonly netConf: string };
  /** Calico's IPPools: name, `spec.cidr`, and whether `spec.disabled`. */
  readonly calicoPools: readonly { readonly name: string; readonly cidr: string; readonly disabled: boolean }[];
  /** The data of Cilium's `kube-system/cilium-config`. */
  readonly cilium?: Readonly<Record<string, string>>;
  /** kubeadm's `ClusterConfiguration` (YAML), from `kube-system/kubeadm-config`. */
  readonly kubeadmClusterConfiguration?: string;
}

/** A cluster that declares nothing. */
export const NOTHING_DECLARED: DeclaredNetworks = { calicoPools: [] };

/** A block a source declares, and the words that say which source. */
export interface DeclaredBlock {
  readonly cidr: Cidr;
  readonly from: string;
}

/** The IPv4 blocks among a comma- or space-separated list (dual-stack lists carry IPv6 ones too). */
export function ipv4BlocksOf(list: unknown): Cidr[] {
  if (typeof list !== "string") return [];
  return list.split(/[\s,]+/).flatMap((text) => {
    try {
      return text ? [Cidr.parse(text)] : [];
    } catch {
      return [];
    }
  });
}

/** A text read as JSON or YAML (`load` reads both), or undefined when it reads as neither. */
function parsed(text: string): Record<string, unknown> | undefined {
  try {
    const value = load(text);
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function flannelRange(declared: DeclaredNetworks): DeclaredBlock | undefined {
  if (!declared.flannel) return undefined;
  const [cidr] = ipv4BlocksOf(parsed(declared.flannel.netConf)?.["Network"]);
  return cidr && { cidr, from: `Flannel's net-conf.json Network (${declared.flannel.namespace}/kube-flannel-cfg)` };
}

function calicoRange(declared: DeclaredNetworks): DeclaredBlock | undefined {
  const pools = declared.calicoPools
    .filter((pool) => !pool.disabled)
    .flatMap((pool) => ipv4BlocksOf(pool.cidr).map((cidr) => ({ name: pool.name, cidr })));
  if (pools.length === 0) return undefined;
  if (pools.length === 1) return { cidr: pools[0]!.cidr, from: `Calico IPPool ${pools[0]!.name}` };
  return {
    cidr: Cidr.covering(pools.map((pool) => pool.cidr)),
    from: `the smallest block holding Calico's ${pools.length} enabled IPPools (${pools.map((p) => p.name).join(", ")})`,
  };
}

function ciliumRange(declared: DeclaredNetworks): DeclaredBlock | undefined {
  const config = declared.cilium;
  if (!config || (config["ipam"] ?? "cluster-pool") !== "cluster-pool") return undefined;
  const blocks = ipv4BlocksOf(config["cluster-pool-ipv4-cidr"]);
  if (blocks.length === 0) return undefined;
  return {
    cidr: blocks.length === 1 ? blocks[0]! : Cidr.covering(blocks),
    from: "Cilium's cluster-pool-ipv4-cidr (kube-system/cilium-config)",
  };
}

/** The pod range the CNI declares: Flannel's, Calico's, then Cilium's, the first that is there. */
export function cniPodRange(declared: DeclaredNetworks): DeclaredBlock | undefined {
  return flannelRange(declared) ?? calicoRange(declared) ?? ciliumRange(declared);
}

/** A `networking` field of kubeadm's ClusterConfiguration (`podSubnet` or `serviceSubnet`). */
export function kubeadmRange(
  declared: DeclaredNetworks,
  field: "podSubnet" | "serviceSubnet",
): DeclaredBlock | undefined {
  if (declared.kubeadmClusterConfiguration === undefined) return undefined;
  const networking = parsed(declared.kubeadmClusterConfiguration)?.["networking"] as
    Record<string, unknown> | undefined;
  const [cidr] = ipv4BlocksOf(networking?.[field]);
  return cidr && { cidr, from: `kubeadm's networking.${field} (kube-system/kubeadm-config)` };
}
