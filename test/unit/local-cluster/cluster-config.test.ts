/**
 * What a local cluster declares of itself, as hardened and kubeadm-built clusters do: the API
 * server's Pod Security defaults (control-plane.ts) and the networks in kube-system/kubeadm-config
 * (cluster-config.ts), which a Cluster's CIDR detection reads back.
 */
import { load } from "js-yaml";
import { decideClusterCidrs } from "../../../core/cluster/cidr-detection.js";
import { NOTHING_DECLARED } from "../../../core/cluster/declared-networks.js";
import { forgeClusterConfig } from "../../../local-cluster/cluster-config.js";
import { admissionConfiguration } from "../../../local-cluster/control-plane.js";

describe("a local cluster's Pod Security defaults", () => {
  test("GIVEN baseline WHEN the admission configuration is forged THEN it enforces, audits and warns baseline, kube-system exempt", () => {
    expect(JSON.parse(admissionConfiguration("baseline"))).toEqual({
      apiVersion: "apiserver.config.k8s.io/v1",
      kind: "AdmissionConfiguration",
      plugins: [
        {
          name: "PodSecurity",
          configuration: {
            apiVersion: "pod-security.admission.config.k8s.io/v1",
            kind: "PodSecurityConfiguration",
            defaults: {
              enforce: "baseline",
              "enforce-version": "latest",
              audit: "baseline",
              "audit-version": "latest",
              warn: "baseline",
              "warn-version": "latest",
            },
            exemptions: { usernames: [], runtimeClasses: [], namespaces: ["kube-system"] },
          },
        },
      ],
    });
  });
});

describe("a local cluster's kubeadm-config", () => {
  test("GIVEN a cluster's CIDRs WHEN its kubeadm-config is forged THEN it states them as kubeadm does, and detection reads them back", () => {
    const configMap = forgeClusterConfig({
      podCidr: "10.101.0.0/16",
      serviceCidr: "10.201.0.0/16",
      kubernetesVersion: "v1.36.3",
    });
    expect(configMap.metadata).toEqual({ name: "kubeadm-config", namespace: "kube-system" });
    const text = configMap.data!["ClusterConfiguration"]!;
    expect(load(text)).toEqual({
      apiVersion: "kubeadm.k8s.io/v1beta4",
      kind: "ClusterConfiguration",
      kubernetesVersion: "v1.36.3",
      networking: { dnsDomain: "cluster.local", podSubnet: "10.101.0.0/16", serviceSubnet: "10.201.0.0/16" },
    });
    const decided = decideClusterCidrs(
      {},
      {
        controllerManagers: [],
        apiServers: [],
        serviceCidrs: [],
        nodes: [{ name: "a-n1", podCidrs: ["10.101.1.0/24"] }],
        declared: { ...NOTHING_DECLARED, kubeadmClusterConfiguration: text },
      },
    );
    expect(decided.ok && [decided.cidrs.podCidr, decided.cidrs.serviceCidr]).toEqual([
      "10.101.0.0/16",
      "10.201.0.0/16",
    ]);
  });
});
