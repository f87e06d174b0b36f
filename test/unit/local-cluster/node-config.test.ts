/** A worker node's configuration files and routes: every path under the node's directory, and the settings this machine needs. */
import { Cidr } from "../../../core/net/cidr.js";
import {
  cniConfig,
  containerdConfig,
  kubeletArgs,
  kubeletConfig,
  kubeProxyConfig,
  type NodeConfigInputs,
} from "../../../local-cluster/node-config.js";
import { nodeRoutes, uplinkMasquerade } from "../../../local-cluster/node-network.js";
import { planNodes } from "../../../local-cluster/node-plan.js";

const nodes = planNodes(
  { lab: "t1", name: "a", netns: "liqo-t1-a", podCidr: Cidr.parse("10.100.0.0/16"), dir: "/tmp/labs/t1/a" },
  3,
).nodes;
const inputs = (index: number): NodeConfigInputs => ({
  node: nodes[index - 1]!,
  clusterPodCidr: "10.100.0.0/16",
  clusterDns: "10.200.0.10",
  pauseImage: "pulumi-liqo.local/pause:1.2.3",
  caFile: "/tmp/labs/t1/a/pki/ca.crt",
  binaries: { runc: "/cache/runc", shim: "/cache/containerd-shim-runc-v2", cniBinDir: "/cache/cni" },
});

/** Every absolute path a text names. */
const pathsIn = (text: string): string[] => [...text.matchAll(/"(\/[^"]*)"/g)].map((m) => m[1]!);

describe("containerdConfig", () => {
  const text = containerdConfig(inputs(2));

  test("GIVEN node 2 WHEN configured THEN every path containerd writes is under the node's directory", () => {
    const own = pathsIn(text).filter((p) => !p.startsWith("/cache/"));
    expect(own.length).toBeGreaterThanOrEqual(5);
    for (const path of own) expect([path, path.startsWith("/tmp/labs/t1/a/n2/")]).toEqual([path, true]);
  });

  test("GIVEN this machine's root without CAP_SYS_RESOURCE WHEN configured THEN oom_score_adj is restricted", () => {
    expect(text).toMatch(/^\s*restrict_oom_score_adj = true$/m);
  });

  test("GIVEN the pause image WHEN configured THEN it is the pinned sandbox image, with overlayfs and our CNI plugins", () => {
    expect(text).toMatch(/^\s*sandbox = "pulumi-liqo\.local\/pause:1\.2\.3"$/m);
    expect(text).toMatch(/^\s*snapshotter = "overlayfs"$/m);
    expect(text).toMatch(/^\s*bin_dirs = \["\/cache\/cni"\]$/m);
    expect(text).toMatch(/^\s*BinaryName = "\/cache\/runc"$/m);
    expect(text).toMatch(/^version = 3$/m);
  });
});

describe("cniConfig", () => {
  test("GIVEN node 2 WHEN configured THEN bridge cni0 is the pods' gateway, without masquerade, on the node's /24", () => {
    const config = JSON.parse(cniConfig(nodes[1]!)) as {
      name: string;
      plugins: {
        type: string;
        bridge?: string;
        isGateway?: boolean;
        ipMasq?: boolean;
        ipam?: { ranges: unknown; dataDir: string };
      }[];
    };
    const bridge = config.plugins.find((p) => p.type === "bridge")!;
    expect(config.name).toBe("liqo-t1-a-n2");
    expect([bridge.bridge, bridge.isGateway, bridge.ipMasq]).toEqual(["cni0", true, false]);
    expect(bridge.ipam!.ranges).toEqual([[{ subnet: "10.100.2.0/24" }]]);
    expect(bridge.ipam!.dataDir.startsWith("/tmp/labs/t1/a/n2/")).toBe(true);
  });

  test("GIVEN node 2 of a Flannel cluster WHEN configured THEN its plugin reads the node's own subnet file, its state in the node's directory", () => {
    const flannel = { cniBinDir: "/cache/flannel/cni", subnetFile: "/tmp/labs/t1/a/flannel/a-n2.env" };
    const config = JSON.parse(cniConfig(nodes[1]!, flannel)) as {
      name: string;
      plugins: { type: string; subnetFile?: string; dataDir?: string; ipam?: { dataDir: string }; delegate?: object }[];
    };
    expect(config.name).toBe("liqo-t1-a-n2");
    expect(config.plugins.map((p) => p.type)).toEqual(["flannel", "portmap"]);
    const plugin = config.plugins[0]!;
    expect(plugin.subnetFile).toBe(flannel.subnetFile);
    expect([plugin.dataDir, plugin.ipam!.dataDir].every((dir) => dir!.startsWith("/tmp/labs/t1/a/n2/"))).toBe(true);
    expect(plugin.delegate).toEqual({ bridge: "cni0", hairpinMode: true, isDefaultGateway: true });
    // containerd finds the plugin beside the standard ones.
    expect(containerdConfig({ ...inputs(2), flannel })).toContain('bin_dirs = ["/cache/cni", "/cache/flannel/cni"]');
    expect(containerdConfig(inputs(2))).toContain('bin_dirs = ["/cache/cni"]');
  });
});

describe("kubelet and kube-proxy", () => {
  test("GIVEN maxPods WHEN configured THEN kubelet admits that many; without it, kubelet's default stands", () => {
    expect(JSON.parse(kubeletConfig({ ...inputs(1), maxPods: 250 }))).toMatchObject({ maxPods: 250 });
    expect(JSON.parse(kubeletConfig(inputs(1)))).not.toHaveProperty("maxPods");
  });

  test("GIVEN node 1 WHEN configured THEN kubelet runs on cgroups v1 with its own cgroup root and keeps imported images", () => {
    const config = JSON.parse(kubeletConfig(inputs(1))) as Record<string, unknown>;
    expect(config).toMatchObject({
      failCgroupV1: false,
      cgroupDriver: "cgroupfs",
      cgroupRoot: "/liqo-t1-a-n1",
      failSwapOn: false,
      readOnlyPort: 0,
      imageGCHighThresholdPercent: 100,
      containerRuntimeEndpoint: "unix:///tmp/labs/t1/a/n1/run/containerd.sock",
      authentication: { x509: { clientCAFile: "/tmp/labs/t1/a/pki/ca.crt" }, webhook: { enabled: true } },
      authorization: { mode: "Webhook" },
      clusterDNS: ["10.200.0.10"],
      clusterDomain: "cluster.local",
    });
  });

  test("GIVEN node 1 WHEN started THEN its InternalIP is its node LAN address, not the cluster's", () => {
    expect(kubeletArgs(nodes[0]!)).toEqual(
      expect.arrayContaining([
        "--node-ip=192.168.101.1",
        "--hostname-override=a-n1",
        "--root-dir=/tmp/labs/t1/a/n1/kubelet",
      ]),
    );
  });

  test("GIVEN node 3 WHEN configured THEN kube-proxy runs iptables mode, leaves conntrack alone, and knows the pod CIDR", () => {
    expect(JSON.parse(kubeProxyConfig(inputs(3)))).toMatchObject({
      mode: "iptables",
      conntrack: { maxPerCore: 0, min: 0 },
      clusterCIDR: "10.100.0.0/16",
      hostnameOverride: "a-n3",
    });
    expect(JSON.parse(kubeProxyConfig({ ...inputs(3), kubeProxyMode: "nftables" })).mode).toBe("nftables");
  });
});

describe("node routes and masquerade", () => {
  test("GIVEN 3 nodes WHEN node 2's routes are planned THEN it reaches each other node's /24 via that node's LAN address", () => {
    expect(nodeRoutes(nodes[1]!, nodes)).toEqual([
      { to: "10.100.1.0/24", via: "192.168.101.1" },
      { to: "10.100.3.0/24", via: "192.168.101.3" },
    ]);
  });

  test("GIVEN node 1's uplink WHEN masquerade is planned THEN only pod and node LAN sources leaving by the uplink are masqueraded", () => {
    expect(uplinkMasquerade("lan", "10.100.0.0/16")).toEqual([
      ["-s", "10.100.0.0/16", "-o", "lan", "-j", "MASQUERADE"],
      ["-s", "192.168.101.0/24", "-o", "lan", "-j", "MASQUERADE"],
    ]);
  });
});
