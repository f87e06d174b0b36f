/**
 * Which CIDRs a Cluster announces when its inputs leave them out (core/cluster/cidr-detection.ts):
 * the controller manager's and API server's flags first, then nodes' pod CIDRs and ServiceCIDR
 * objects; what cannot be detected names the input to set.
 */
import {
  decideClusterCidrs,
  describeUndetected,
  needsDetection,
  type NetworkFacts,
} from "../../../../core/cluster/cidr-detection.js";
import { clusterChanges, type ClusterOutputs } from "../../../../core/resources/cluster.js";

const NOTHING: NetworkFacts = { controllerManagers: [], apiServers: [], serviceCidrs: [], nodes: [] };
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
    expect(decided.undetected[0]!.reason).toContain("the cluster has no nodes yet");
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
