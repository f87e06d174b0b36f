/**
 * The configuration files of a worker node: containerd's, kubelet's, kube-proxy's and the CNI
 * network's. Pure text from the node's plan, so every setting (and why it is there) is unit-tested;
 * node.ts writes them. Every path a component would otherwise put under /var, /run, /etc or /opt
 * is set to one under the node's own directory, so that two nodes on one machine never share a
 * file and teardown knows where everything is.
 */
import { join } from "node:path";
import { CLUSTER_DOMAIN } from "../core/offloading/dns-names.js";
import { nodePaths, type PlannedNode } from "./node-plan.js";
import type { KubeProxyMode } from "./plan.js";

/** Where the node's binaries are (absolute paths: a restarted process must not depend on PATH). */
export interface NodeBinaries {
  /** runc. */
  readonly runc: string;
  /** containerd's runc shim. */
  readonly shim: string;
  /** Directory of the CNI plugins (`bridge`, `host-local`, `loopback`, `portmap`). */
  readonly cniBinDir: string;
}

/** What a node's configuration needs beyond its plan. */
export interface NodeConfigInputs {
  /** The node. */
  readonly node: PlannedNode;
  /** The cluster's pod CIDR (kube-proxy tells pod traffic from outside traffic by it). */
  readonly clusterPodCidr: string;
  /** The address of the cluster's DNS Service (`kube-dns`), every pod's name server (cluster-dns.ts). */
  readonly clusterDns: string;
  /** The sandbox (pause) image's reference: containerd never pulls it, it is imported. */
  readonly pauseImage: string;
  /** The cluster CA's certificate file (kubelet's client CA). */
  readonly caFile: string;
  /** Binaries. */
  readonly binaries: NodeBinaries;
  /** How kube-proxy programs Services. @default "iptables" */
  readonly kubeProxyMode?: KubeProxyMode;
  /** The node's CNI is Flannel (flannel.ts), not the bridge with static routes: where its parts are. */
  readonly flannel?: FlannelNodeFiles;
  /** Pods the kubelet admits. @default kubelet's */
  readonly maxPods?: number;
}

/** What a node running Flannel's CNI plugin needs to know. */
export interface FlannelNodeFiles {
  /** The directory of Flannel's CNI plugin (`flannel`), beside the standard plugins'. */
  readonly cniBinDir: string;
  /** The subnet file the node's flanneld writes and the plugin reads (the node's /24, the network, the MTU). */
  readonly subnetFile: string;
}

const toml = (value: string | boolean | readonly string[]): string =>
  Array.isArray(value) ? `[${value.map((v) => JSON.stringify(v)).join(", ")}]` : JSON.stringify(value);

/**
 * containerd's configuration (format version 3, containerd 2.x). Plugins that would touch paths
 * outside the node's directory (NRI's socket in /var/run/nri, the opt plugin's /opt/containerd, the
 * image verifier's /opt/containerd/image-verifier) are disabled: the node uses none of them.
 */
export function containerdConfig(inputs: NodeConfigInputs): string {
  const { node, binaries } = inputs;
  const paths = nodePaths(node.dir);
  const cri = 'plugins."io.containerd.cri.v1.runtime"';
  const lines = [
    "version = 3",
    `root = ${toml(paths.containerdRoot)}`,
    `state = ${toml(paths.containerdState)}`,
    `disabled_plugins = ${toml(["io.containerd.nri.v1.nri", "io.containerd.internal.v1.opt", "io.containerd.image-verifier.v1.bindir"])}`,
    "",
    "[grpc]",
    `  address = ${toml(node.containerdSocket)}`,
    "[ttrpc]",
    `  address = ${toml(`${node.containerdSocket}.ttrpc`)}`,
    "[debug]",
    '  address = ""',
    "[metrics]",
    '  address = ""',
    "",
    `[${cri}]`,
    // Root here lacks CAP_SYS_RESOURCE: runc cannot lower a container's oom_score_adj below its
    // own, and fails every sandbox unless containerd keeps the value at or above containerd's.
    "  restrict_oom_score_adj = true",
    // Pod network namespaces under the node's state directory, not /var/run/netns.
    "  netns_mounts_under_state_dir = true",
    "  cdi_spec_dirs = []",
    `[${cri}.containerd]`,
    '  default_runtime_name = "runc"',
    `[${cri}.containerd.runtimes.runc]`,
    '  runtime_type = "io.containerd.runc.v2"',
    `  runtime_path = ${toml(binaries.shim)}`,
    `[${cri}.containerd.runtimes.runc.options]`,
    `  BinaryName = ${toml(binaries.runc)}`,
    `  Root = ${toml(paths.runcRoot)}`,
    "  SystemdCgroup = false",
    `[${cri}.cni]`,
    `  bin_dirs = ${toml([binaries.cniBinDir, ...(inputs.flannel ? [inputs.flannel.cniBinDir] : [])])}`,
    `  conf_dir = ${toml(paths.cniConfDir)}`,
    "",
    '[plugins."io.containerd.cri.v1.images"]',
    '  snapshotter = "overlayfs"',
    '[plugins."io.containerd.cri.v1.images".pinned_images]',
    // The pause image is imported at `up`; nothing could pull it again (no registry), so pinned.
    `  sandbox = ${toml(inputs.pauseImage)}`,
    "",
    // Streaming (exec, attach, port-forward) on the node's own loopback, on any free port.
    '[plugins."io.containerd.grpc.v1.cri"]',
    '  stream_server_address = "127.0.0.1"',
    '  stream_server_port = "0"',
    "",
  ];
  return lines.join("\n");
}

/**
 * The CNI network of a node. By default a `bridge` that is the pods' gateway, host-local IPAM on the
 * node's /24 (node-network.ts routes between the nodes). With `flannel`, the network Flannel's own
 * manifest installs (its `cni-conf.json`): its plugin reads the /24 from the subnet file flanneld
 * writes and hands the pod to the same bridge, with its state and addresses kept in the node's
 * own directory (several nodes share this machine's /var/lib/cni).
 */
export function cniConfig(node: PlannedNode, flannel?: FlannelNodeFiles): string {
  const portmap = { type: "portmap", capabilities: { portMappings: true } };
  const ipamDir = nodePaths(node.dir).ipamDir;
  const conflist = flannel
    ? {
        cniVersion: "0.3.1",
        name: node.cniNetwork,
        plugins: [
          {
            type: "flannel",
            subnetFile: flannel.subnetFile,
            dataDir: join(node.dir, "flannel-cni"),
            ipam: { type: "host-local", dataDir: ipamDir },
            delegate: { bridge: "cni0", hairpinMode: true, isDefaultGateway: true },
          },
          portmap,
        ],
      }
    : {
        cniVersion: "1.0.0",
        name: node.cniNetwork,
        plugins: [
          {
            type: "bridge",
            // Not `pods`: that is the cluster's bridge of fake pod addresses, still used by tests.
            bridge: "cni0",
            isGateway: true,
            // No masquerade: pod traffic into a WireGuard tunnel must keep its pod source address.
            // Node 1 masquerades what leaves the cluster (node-network.ts).
            ipMasq: false,
            hairpinMode: true,
            ipam: {
              type: "host-local",
              ranges: [[{ subnet: node.podCidr }]],
              routes: [{ dst: "0.0.0.0/0" }],
              dataDir: ipamDir,
            },
          },
          portmap,
        ],
      };
  return `${JSON.stringify(conflist, null, 2)}\n`;
}

/** Files kubelet reads, beside its configuration. */
export interface KubeletFiles {
  /** kubelet's kubeconfig (the node's identity). */
  readonly kubeconfig: string;
  /** The node's own resolv.conf: what pods of `dnsPolicy: Default` (CoreDNS itself) get. */
  readonly resolvConf: string;
}

/** The files kubelet and kube-proxy read, by node directory. */
export function nodeFiles(dir: string): KubeletFiles & {
  readonly kubeletConfig: string;
  readonly kubeProxyConfig: string;
  readonly kubeProxyKubeconfig: string;
} {
  const paths = nodePaths(dir);
  return {
    kubeconfig: join(paths.pki, "kubelet.kubeconfig"),
    resolvConf: join(dir, "resolv.conf"),
    kubeletConfig: join(dir, "kubelet.json"),
    kubeProxyConfig: join(dir, "kube-proxy.json"),
    kubeProxyKubeconfig: join(paths.pki, "kube-proxy.kubeconfig"),
  };
}

/** kubelet's KubeletConfiguration (JSON, which kubelet reads as YAML). */
export function kubeletConfig(inputs: NodeConfigInputs): string {
  const { node } = inputs;
  const files = nodeFiles(node.dir);
  const config = {
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    // cgroups are v1 on these machines; kubelet 1.36 refuses them unless told not to.
    failCgroupV1: false,
    cgroupDriver: "cgroupfs",
    // Everything the node runs lives below this cgroup, so teardown finds all of it.
    cgroupRoot: node.cgroupRoot,
    failSwapOn: false,
    resolvConf: files.resolvConf,
    // Every other pod asks the cluster's DNS, as in a kubeadm cluster.
    clusterDNS: [inputs.clusterDns],
    clusterDomain: CLUSTER_DOMAIN,
    readOnlyPort: 0,
    healthzBindAddress: "127.0.0.1",
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: inputs.caFile },
    },
    authorization: { mode: "Webhook" },
    containerRuntimeEndpoint: `unix://${node.containerdSocket}`,
    podLogsDir: nodePaths(node.dir).podLogs,
    // Nodes share the machine's disk and memory with every other node: evict only at the floor.
    evictionHard: { "memory.available": "1Mi", "nodefs.available": "1%", "imagefs.available": "1%" },
    // Imported images must never be collected: there is no registry to pull them again from.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    // Status often enough for tests to see a change quickly, as the control plane's grace allows.
    nodeStatusUpdateFrequency: "10s",
    serializeImagePulls: false,
    ...(inputs.maxPods !== undefined ? { maxPods: inputs.maxPods } : {}),
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** kubelet's command line. */
export function kubeletArgs(node: PlannedNode): string[] {
  const files = nodeFiles(node.dir);
  return [
    `--config=${files.kubeletConfig}`,
    `--kubeconfig=${files.kubeconfig}`,
    `--root-dir=${nodePaths(node.dir).kubeletRoot}`,
    `--cert-dir=${nodePaths(node.dir).pki}`,
    `--hostname-override=${node.name}`,
    // The node LAN address for every node, node 1 included: routes "via <InternalIP>" must be on-link.
    `--node-ip=${node.address}`,
    "--v=1",
  ];
}

/** kube-proxy's KubeProxyConfiguration, in the cluster's mode (iptables unless told). */
export function kubeProxyConfig(inputs: NodeConfigInputs): string {
  const { node } = inputs;
  const config = {
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    mode: inputs.kubeProxyMode ?? "iptables",
    clientConnection: { kubeconfig: nodeFiles(node.dir).kubeProxyKubeconfig },
    hostnameOverride: node.name,
    clusterCIDR: inputs.clusterPodCidr,
    // 0: leave the conntrack sysctls as they are; kube-proxy may not write them here.
    conntrack: { maxPerCore: 0, min: 0 },
    metricsBindAddress: "127.0.0.1:10249",
    healthzBindAddress: "127.0.0.1:10256",
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** kube-proxy's command line. */
export function kubeProxyArgs(node: PlannedNode): string[] {
  return [`--config=${nodeFiles(node.dir).kubeProxyConfig}`, "--v=1"];
}

/** containerd's command line. */
export function containerdArgs(node: PlannedNode): string[] {
  return ["--config", nodePaths(node.dir).containerdConfig, "--log-level", "warn"];
}
