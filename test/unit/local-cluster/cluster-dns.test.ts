/** Cluster DNS as the local clusters deploy it: kube-dns at the service CIDR's tenth address, CoreDNS reading its Corefile. */
import type * as k8s from "@kubernetes/client-node";
import { clusterDnsAddress, COREFILE, forgeClusterDns } from "../../../local-cluster/cluster-dns.js";

describe("cluster DNS", () => {
  test("GIVEN a service CIDR WHEN kube-dns is placed THEN it is the tenth address, as kubeadm places it", () => {
    expect(clusterDnsAddress("10.200.0.0/16")).toBe("10.200.0.10");
    expect(clusterDnsAddress("10.96.0.0/12")).toBe("10.96.0.10");
  });

  test("GIVEN the objects WHEN forged THEN kube-dns selects the CoreDNS pods, which run the image given and ask the node", () => {
    const objects = forgeClusterDns("10.200.0.0/16", "pulumi-liqo.local/coredns:1");
    const service = objects.find((o) => o.kind === "Service") as k8s.V1Service;
    const deployment = objects.find((o) => o.kind === "Deployment") as k8s.V1Deployment;
    expect(service.metadata).toMatchObject({ name: "kube-dns", namespace: "kube-system" });
    expect(service.spec?.clusterIP).toBe("10.200.0.10");
    expect(service.spec?.selector).toEqual(deployment.spec?.template.metadata?.labels);
    const pod = deployment.spec!.template.spec!;
    expect(pod.dnsPolicy).toBe("Default");
    expect(pod.containers[0]).toMatchObject({ image: "pulumi-liqo.local/coredns:1", imagePullPolicy: "Never" });
    expect(pod.containers[0]!.resources).toBeUndefined();
  });

  test("GIVEN the Corefile WHEN read THEN it serves cluster.local from the API and forwards nothing outside", () => {
    expect(COREFILE).toContain("kubernetes cluster.local in-addr.arpa ip6.arpa");
    expect(COREFILE).not.toContain("forward");
  });
});
