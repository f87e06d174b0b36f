/** Flannel as the local clusters deploy it (local-cluster/flannel.ts): its manifest's objects, one subnet file per node. */
import type * as k8s from "@kubernetes/client-node";
import {
  FLANNEL_CONFIG_MAP,
  FLANNEL_NAMESPACE,
  flannelNetConf,
  flannelSubnetFile,
  forgeFlannel,
} from "../../../local-cluster/flannel.js";
import { cniPodRange } from "../../../core/cluster/declared-networks.js";

const IMAGE = "pulumi-liqo.local/flannel:1";

describe("Flannel", () => {
  const objects = forgeFlannel("10.100.0.0/16", IMAGE, "/tmp/labs/t1/a/flannel");
  const byKind = (kind: string): k8s.KubernetesObject => objects.find((o) => o.kind === kind)!;

  test("GIVEN the manifest WHEN forged THEN its namespace is privileged and its ConfigMap names the cluster's pod network, VXLAN", () => {
    expect((byKind("Namespace") as k8s.V1Namespace).metadata).toEqual({
      name: FLANNEL_NAMESPACE,
      labels: { "pod-security.kubernetes.io/enforce": "privileged" },
    });
    const config = byKind("ConfigMap") as k8s.V1ConfigMap;
    expect(config.metadata).toMatchObject({ name: FLANNEL_CONFIG_MAP, namespace: FLANNEL_NAMESPACE });
    expect(JSON.parse(config.data!["net-conf.json"]!)).toEqual({
      Network: "10.100.0.0/16",
      EnableNFTables: false,
      Backend: { Type: "vxlan" },
    });
  });

  test("GIVEN the ConfigMap WHEN a Cluster reads what the cluster declares THEN it finds the pod range there", () => {
    const range = cniPodRange({
      flannel: { namespace: FLANNEL_NAMESPACE, netConf: flannelNetConf("10.100.0.0/16") },
      calicoPools: [],
    });
    expect(range?.cidr.toString()).toBe("10.100.0.0/16");
  });

  test("GIVEN the DaemonSet WHEN forged THEN flanneld runs on each node's network, masquerading, each node's subnet file its own", () => {
    const daemonSet = byKind("DaemonSet") as k8s.V1DaemonSet;
    const pod = daemonSet.spec!.template.spec!;
    const container = pod.containers[0]!;
    expect(pod.hostNetwork).toBe(true);
    expect(container).toMatchObject({ image: IMAGE, imagePullPolicy: "Never" });
    expect(container.args).toEqual([
      "--ip-masq",
      "--kube-subnet-mgr",
      "--iface=nodes",
      "--iface=eth0",
      "--subnet-file=/run/flannel/$(NODE_NAME).env",
    ]);
    expect(container.env!.find((e) => e.name === "NODE_NAME")?.valueFrom?.fieldRef?.fieldPath).toBe("spec.nodeName");
    expect(pod.volumes!.find((v) => v.name === "run")!.hostPath!.path).toBe("/tmp/labs/t1/a/flannel");
    expect(container.securityContext).toEqual({ privileged: false, capabilities: { add: ["NET_ADMIN", "NET_RAW"] } });
    expect(flannelSubnetFile("/tmp/labs/t1/a", "a-n2")).toBe("/tmp/labs/t1/a/flannel/a-n2.env");
  });
});
