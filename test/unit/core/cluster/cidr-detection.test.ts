/**
 * Which CIDRs a Cluster announces when its inputs leave them out (core/cluster/cidr-detection.ts,
 * declared-networks.ts): what the CNI declares, the controller manager's flag, kubeadm's config, and
 * only then the nodes' ranges, with a warning; ServiceCIDR objects, the API server's flag, kubeadm's
 * config; what cannot be detected names the input to set; nodes outside the pod CIDR are named.
 */
import {
  decideClusterCidrs,
  describeUndetected,
  needsDetection,
  nodesOutside,
  nodesOutsideWarning,
  podCidrWarning,
  type NetworkFacts,
} from "../../../../core/cluster/cidr-detection.js";
import { NOTHING_DECLARED, type DeclaredNetworks } from "../../../../core/cluster/declared-networks.js";
import { Cidr } from "../../../../core/net/cidr.js";
import { clusterChanges, type ClusterOutputs } from "../../../../core/resources/cluster.js";

const NOTHING: NetworkFacts = {
  controllerManagers: [],
  apiServers: [],
  serviceCidrs: [],
  nodes: [],
  declared: NOTHING_DECLARED,
};
const DEFAULT_SERVICES = [{ name: "kubernetes", cidrs: ["10.96.0.0/12"] }];

describe("decideClusterCidrs", () => {
  test("GIVEN both CIDRs given WHEN decided THEN they are used as given and nothing is said to be detected", () => {
    expect(decideClusterCidrs({ podCidr: "10.1.0.0/16", serviceCidr: "10.2.0.0/16" }, NOTHING)).toEqual({
      ok: true,
      cidrs: { podCidr: "10.1.0.0/16", serviceCidr: "10.2.0.0/16", detectedFrom: {} },
    });
    expect(needsDetection({ podCidr: "10.1.0.0/16", serviceCidr: "10.2.0.0/16" })).toBe(false);
    expect(needsDetection({ podCidr: "10.1.0.0/16" })).toBe(true);
  });

  test("GIVEN a kubeadm cluster (controller manager and API server as pods) WHEN decided THEN their flags win over nodes", () => {
    const facts: NetworkFacts = {
      controllerManagers: [["kube-controller-manager", "--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16"]],
      apiServers: [["kube-apiserver", "--service-cluster-ip-range", "10.96.0.0/12,fd00::/108"]],
      serviceCidrs: [],
      nodes: [{ name: "n1", podCidrs: ["10.244.3.0/24"] }],
      declared: NOTHING_DECLARED,
    };
    expect(decideClusterCidrs({}, facts)).toEqual({
      ok: true,
      cidrs: {
        podCidr: "10.244.0.0/16",
        serviceCidr: "10.96.0.0/12",
        detectedFrom: {
          podCidr: "kube-controller-manager's --cluster-cidr",
          serviceCidr: "kube-apiserver's --service-cluster-ip-range",
        },
      },
    });
  });

  test("GIVEN nodes with pod CIDRs (one IPv6 too) and the default ServiceCIDR WHEN decided THEN their IPv4 block and the ServiceCIDR are used", () => {
    const facts: NetworkFacts = {
      ...NOTHING,
      serviceCidrs: [{ name: "extra", cidrs: ["10.97.0.0/16"] }, ...DEFAULT_SERVICES],
      nodes: [
        { name: "n1", podCidrs: ["10.100.1.0/24", "fd00:1::/64"] },
        { name: "n2", podCidrs: ["10.100.2.0/24"] },
        { name: "n3", podCidrs: [] },
      ],
    };
    expect(decideClusterCidrs({ serviceCidr: "10.200.0.0/16" }, facts)).toEqual({
      ok: true,
      cidrs: {
        podCidr: "10.100.0.0/22",
        serviceCidr: "10.200.0.0/16",
        detectedFrom: {
          podCidr: "the smallest block holding the spec.podCIDRs of 2 node(s) (1 node(s) have none yet)",
        },
      },
    });
    const decided = decideClusterCidrs({ podCidr: "10.1.0.0/16" }, facts);
    expect(decided.ok && decided.cidrs.serviceCidr).toBe("10.96.0.0/12");
    expect(decided.ok && decided.cidrs.detectedFrom.serviceCidr).toBe(
      "ServiceCIDR kubernetes (1 other ServiceCIDR(s) not announced)",
    );
  });

  test("GIVEN an EKS-like cluster (nodes without pod CIDRs, no controller manager visible) WHEN decided THEN podCidr is named, with EKS's reason", () => {
    const facts: NetworkFacts = {
      ...NOTHING,
      serviceCidrs: DEFAULT_SERVICES,
      nodes: [{ name: "ip-10-0-1-5", podCidrs: [] }],
    };
    const decided = decideClusterCidrs({}, facts);
    expect(decided.ok).toBe(false);
    if (decided.ok) return;
    expect(decided.undetected.map((u) => u.input)).toEqual(["podCidr"]);
    expect(decided.undetected[0]!.reason).toContain("none of its 1 node(s) has spec.podCIDRs");
    expect(decided.undetected[0]!.reason).toContain("EKS with the VPC CNI");
    expect(decided.undetected[0]!.reason).toContain("set podCidr to the range pods take addresses from");
    expect(describeUndetected("cloud", decided.undetected)).toMatch(/^cluster cloud: podCidr could not be detected: /);
  });

  test("GIVEN a cluster that shows nothing WHEN decided THEN both inputs are named at once", () => {
    const decided = decideClusterCidrs({}, NOTHING);
    expect(decided.ok).toBe(false);
    if (decided.ok) return;
    expect(decided.undetected.map((u) => u.input)).toEqual(["podCidr", "serviceCidr"]);
    expect(decided.undetected[0]!.reason).toContain(
      "the cluster has no nodes yet, and neither its CNI nor its installer declares a pod range",
    );
    expect(decided.undetected[1]!.reason).toContain("no ServiceCIDR object (Kubernetes before 1.33)");
  });

  test("GIVEN several ServiceCIDRs none of which is the default WHEN decided THEN serviceCidr is named rather than one picked", () => {
    const facts: NetworkFacts = {
      ...NOTHING,
      serviceCidrs: [
        { name: "a", cidrs: ["10.96.0.0/16"] },
        { name: "b", cidrs: ["10.97.0.0/16"] },
      ],
    };
    const decided = decideClusterCidrs({ podCidr: "10.1.0.0/16" }, facts);
    expect(decided.ok ? [] : decided.undetected.map((u) => [u.input, u.reason])).toEqual([
      [
        "serviceCidr",
        "could not be detected: the cluster has 2 ServiceCIDR objects and none is the default one (kubernetes); " +
          "set serviceCidr to the cluster's service range",
      ],
    ]);
  });

  test("GIVEN a controller manager without --cluster-cidr WHEN decided THEN the nodes' ranges are used", () => {
    const facts: NetworkFacts = {
      ...NOTHING,
      controllerManagers: [["kube-controller-manager", "--allocate-node-cidrs=false"]],
      serviceCidrs: DEFAULT_SERVICES,
      nodes: [{ name: "n1", podCidrs: ["10.100.1.0/24"] }],
    };
    const decided = decideClusterCidrs({}, facts);
    expect(decided.ok && decided.cidrs.podCidr).toBe("10.100.1.0/24");
  });
});

describe("decideClusterCidrs with what the CNI and the installer declare", () => {
  const KUBEADM = [
    "apiVersion: kubeadm.k8s.io/v1beta4",
    "kind: ClusterConfiguration",
    "networking:",
    "  podSubnet: 10.244.0.0/16,fd00:10:244::/56",
    "  serviceSubnet: 10.96.0.0/12",
  ].join("\n");
  const NODES = [{ name: "n1", podCidrs: ["10.244.3.0/24"] }];
  const podCidrOf = (declared: Partial<DeclaredNetworks>, extra: Partial<NetworkFacts> = {}) => {
    const decided = decideClusterCidrs(
      { serviceCidr: "10.96.0.0/12" },
      { ...NOTHING, nodes: NODES, ...extra, declared: { ...NOTHING_DECLARED, ...declared } },
    );
    return decided.ok ? [decided.cidrs.podCidr, decided.cidrs.detectedFrom.podCidr] : decided.undetected;
  };

  test("GIVEN Flannel's net-conf.json WHEN decided THEN its Network wins over the controller manager's flag, kubeadm and the nodes", () => {
    const flannel = { namespace: "kube-flannel", netConf: '{"Network": "10.42.0.0/16", "Backend": {"Type": "vxlan"}}' };
    expect(
      podCidrOf(
        { flannel, kubeadmClusterConfiguration: KUBEADM },
        { controllerManagers: [["kube-controller-manager", "--cluster-cidr=10.244.0.0/16"]] },
      ),
    ).toEqual(["10.42.0.0/16", "Flannel's net-conf.json Network (kube-flannel/kube-flannel-cfg)"]);
  });

  test("GIVEN Calico's IPPools, one disabled WHEN decided THEN the enabled ones are announced (one by name, several by their smallest block)", () => {
    const pool = (name: string, cidr: string, disabled = false) => ({ name, cidr, disabled });
    expect(
      podCidrOf({ calicoPools: [pool("default-ipv4-ippool", "192.168.0.0/16"), pool("v6", "fd00::/48")] }),
    ).toEqual(["192.168.0.0/16", "Calico IPPool default-ipv4-ippool"]);
    expect(
      podCidrOf({
        calicoPools: [pool("a", "10.10.0.0/17"), pool("b", "10.10.128.0/17"), pool("old", "172.16.0.0/16", true)],
      }),
    ).toEqual(["10.10.0.0/16", "the smallest block holding Calico's 2 enabled IPPools (a, b)"]);
  });

  test("GIVEN Cilium's config WHEN its IPAM is cluster-pool THEN its pool is announced; under kubernetes IPAM the next source is read", () => {
    expect(podCidrOf({ cilium: { "cluster-pool-ipv4-cidr": "10.0.0.0/8" } })).toEqual([
      "10.0.0.0/8",
      "Cilium's cluster-pool-ipv4-cidr (kube-system/cilium-config)",
    ]);
    expect(
      podCidrOf({
        cilium: { ipam: "kubernetes", "cluster-pool-ipv4-cidr": "10.0.0.0/8" },
        kubeadmClusterConfiguration: KUBEADM,
      }),
    ).toEqual(["10.244.0.0/16", "kubeadm's networking.podSubnet (kube-system/kubeadm-config)"]);
  });

  test("GIVEN only kubeadm's ClusterConfiguration WHEN decided THEN both its subnets are used (the IPv4 one of a dual stack)", () => {
    const decided = decideClusterCidrs(
      {},
      { ...NOTHING, nodes: NODES, declared: { ...NOTHING_DECLARED, kubeadmClusterConfiguration: KUBEADM } },
    );
    expect(decided).toEqual({
      ok: true,
      cidrs: {
        podCidr: "10.244.0.0/16",
        serviceCidr: "10.96.0.0/12",
        detectedFrom: {
          podCidr: "kubeadm's networking.podSubnet (kube-system/kubeadm-config)",
          serviceCidr: "kubeadm's networking.serviceSubnet (kube-system/kubeadm-config)",
        },
      },
    });
  });

  test("GIVEN declarations that do not read (bad JSON, YAML without networking, no IPv4) WHEN decided THEN each is passed over for the nodes", () => {
    expect(
      podCidrOf({
        flannel: { namespace: "kube-system", netConf: "{not json" },
        calicoPools: [{ name: "v6", cidr: "fd00::/48", disabled: false }],
        kubeadmClusterConfiguration: "kind: ClusterConfiguration\n",
      }),
    ).toEqual(["10.244.3.0/24", "the smallest block holding the spec.podCIDRs of 1 node(s)"]);
  });

  test("GIVEN a pod CIDR read from the nodes WHEN warned THEN the warning names podCidr and why; one read from a declaration or given is not warned", () => {
    const warning = podCidrWarning("a", { podCidr: "the smallest block holding the spec.podCIDRs of 2 node(s)" });
    expect(warning).toContain(
      'Cluster "a": podCidr was read as the smallest block holding the spec.podCIDRs of 2 node(s)',
    );
    expect(warning).toContain("a node added later may get a range outside it");
    expect(warning).toContain("set podCidr to the cluster's pod range");
    expect(
      podCidrWarning("a", { podCidr: "kubeadm's networking.podSubnet (kube-system/kubeadm-config)" }),
    ).toBeUndefined();
    expect(podCidrWarning("a", {})).toBeUndefined();
    expect(podCidrWarning("a", undefined)).toBeUndefined();
  });
});

describe("nodes outside the pod CIDR", () => {
  test("GIVEN nodes inside, outside and half over the edge (an IPv6 range too) WHEN compared THEN only the IPv4 ranges not held are named", () => {
    const nodes = [
      { name: "n1", podCidrs: ["10.244.0.0/24", "fd00::/64"] },
      { name: "n2", podCidrs: ["10.245.0.0/24"] },
      { name: "n3", podCidrs: ["10.244.0.0/15"] },
      { name: "n4", podCidrs: [] },
    ];
    expect(nodesOutside("10.244.0.0/16", nodes)).toEqual(["n2 10.245.0.0/24", "n3 10.244.0.0/15"]);
    expect(nodesOutside("10.244.0.0/22", [nodes[0]!])).toEqual([]);
    expect(nodesOutsideWarning("a", "10.244.0.0/16", [])).toBeUndefined();
    expect(nodesOutsideWarning("a", "10.244.0.0/16", ["n2 10.245.0.0/24"])).toBe(
      'Cluster "a": 1 node(s) have a pod range outside podCidr 10.244.0.0/16 (n2 10.245.0.0/24): peerings do not ' +
        "route their pods; set podCidr to a range that holds them and run pulumi up",
    );
  });

  test("GIVEN blocks WHEN one is asked whether it holds another THEN only a block wholly inside is held", () => {
    const wide = Cidr.parse("10.244.0.0/16");
    expect(wide.holds(Cidr.parse("10.244.255.0/24"))).toBe(true);
    expect(wide.holds(wide)).toBe(true);
    expect(wide.holds(Cidr.parse("10.244.0.0/15"))).toBe(false);
    expect(Cidr.parse("10.244.1.0/24").holds(wide)).toBe(false);
  });
});

describe("a Cluster's diff with detected CIDRs", () => {
  const outputs: ClusterOutputs = {
    name: "a",
    kubeconfig: "kc",
    podCidr: "10.100.1.0/24",
    serviceCidr: "10.200.0.0/16",
    detectedFrom: { podCidr: "nodes", serviceCidr: "ServiceCIDR kubernetes" },
    clusterId: "00000000000000aa",
    apiServerUrl: "https://198.51.100.2:6443",
    authUrl: "https://198.51.100.2:8443",
    authCaCert: "ca",
    gatewayEndpoint: "198.51.100.2:51820",
  };

  test("GIVEN CIDRs detected at create WHEN the inputs still leave them out THEN the diff finds no change", () => {
    expect(
      clusterChanges(outputs, { name: "a", kubeconfig: "kc", apiServerUrl: outputs.apiServerUrl }).changed,
    ).toEqual([]);
  });

  test("GIVEN CIDRs detected at create WHEN a podCidr other than the detected one is given THEN podCidr changes, in place", () => {
    const found = clusterChanges(outputs, {
      name: "a",
      kubeconfig: "kc",
      apiServerUrl: outputs.apiServerUrl,
      podCidr: "10.100.0.0/16",
    });
    expect(found.changed).toEqual(["podCidr"]);
    expect(found.replaces).toEqual([]);
  });
});
