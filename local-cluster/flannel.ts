/**
 * Flannel, the local clusters' other CNI (`npm run clusters -- up --cni flannel`): what users run
 * most, with its VXLAN backend, deployed as its own manifest (`kube-flannel.yml`) deploys it: a
 * namespace `kube-flannel`, its RBAC, the ConfigMap `kube-flannel-cfg` whose `net-conf.json` names
 * the cluster's pod network (what a `Cluster` reads to detect it), and flanneld as a DaemonSet on
 * every node's network, in `--kube-subnet-mgr` mode (each node's /24 from its `spec.podCIDR`) with
 * `--ip-masq` (it masquerades pod traffic that leaves the pod network, as on any Flannel cluster).
 *
 * The differences, each because several nodes share this machine: flanneld writes its subnet file
 * per node (`<cluster dir>/flannel/<node>.env`, which that node's CNI configuration names,
 * node-config.ts) instead of one `/run/flannel/subnet.env`; the CNI configuration is written with
 * the node's other files, not by an init container; the interface is named (`nodes` on node 1,
 * `eth0` on the others: node 1 has no default route to pick it by). No resource requests, as for
 * MetalLB: they would change what a cluster offers its peers. Forgers are pure; {@link deployFlannel}
 * applies them.
 */
import type * as k8s from "@kubernetes/client-node";
import { join } from "node:path";
import { applyAddOn } from "./add-ons.js";
import { NODE_LAN_BRIDGE } from "./node-plan.js";

/** The namespace Flannel runs in, as its manifest names it. */
export const FLANNEL_NAMESPACE = "kube-flannel";

/** The ConfigMap of Flannel's network configuration, as its manifest names it. */
export const FLANNEL_CONFIG_MAP = "kube-flannel-cfg";

/** Where a node's flanneld and CNI plugin share the subnet file, inside the pod: the host's `<cluster dir>/flannel`. */
const RUN_DIR_IN_POD = "/run/flannel";

/** The directory, on this machine, of the subnet files of a cluster's nodes. */
export const flannelRunDir = (clusterDir: string): string => join(clusterDir, "flannel");

/** The subnet file of node `nodeName` of the cluster in `clusterDir`: flanneld writes it, the CNI plugin reads it. */
export const flannelSubnetFile = (clusterDir: string, nodeName: string): string =>
  join(flannelRunDir(clusterDir), `${nodeName}.env`);

/** Flannel's `net-conf.json`: the cluster's pod network, VXLAN, iptables (Flannel's default). */
export function flannelNetConf(podCidr: string): string {
  return JSON.stringify({ Network: podCidr, EnableNFTables: false, Backend: { Type: "vxlan" } }, null, 2);
}

const labels = { app: "flannel", "k8s-app": "flannel", tier: "node" };

/** Everything Flannel's manifest applies, for the cluster whose pods take `podCidr`, running `image`, with subnet files in `runDir`. */
export function forgeFlannel(podCidr: string, image: string, runDir: string): k8s.KubernetesObject[] {
  const namespace: k8s.V1Namespace = {
    apiVersion: "v1",
    kind: "Namespace",
    // Privileged, as Flannel's manifest labels it: it runs on the host's network with NET_ADMIN.
    metadata: { name: FLANNEL_NAMESPACE, labels: { "pod-security.kubernetes.io/enforce": "privileged" } },
  };
  const role: k8s.V1ClusterRole = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "flannel" },
    rules: [
      { apiGroups: [""], resources: ["pods"], verbs: ["get"] },
      { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
      { apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"] },
    ],
  };
  const binding: k8s.V1ClusterRoleBinding = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "flannel" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "flannel" },
    subjects: [{ kind: "ServiceAccount", name: "flannel", namespace: FLANNEL_NAMESPACE }],
  };
  const account: k8s.V1ServiceAccount = {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "flannel", namespace: FLANNEL_NAMESPACE },
  };
  const config: k8s.V1ConfigMap = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: FLANNEL_CONFIG_MAP, namespace: FLANNEL_NAMESPACE, labels },
    data: { "net-conf.json": flannelNetConf(podCidr) },
  };
  const fieldEnv = (name: string, fieldPath: string): k8s.V1EnvVar => ({
    name,
    valueFrom: { fieldRef: { fieldPath } },
  });
  const daemonSet: k8s.V1DaemonSet = {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: "kube-flannel-ds", namespace: FLANNEL_NAMESPACE, labels },
    spec: {
      selector: { matchLabels: { app: "flannel" } },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: "flannel",
          hostNetwork: true,
          priorityClassName: "system-node-critical",
          tolerations: [{ operator: "Exists", effect: "NoSchedule" }],
          terminationGracePeriodSeconds: 5,
          containers: [
            {
              name: "kube-flannel",
              image,
              imagePullPolicy: "Never",
              args: [
                "--ip-masq",
                "--kube-subnet-mgr",
                `--iface=${NODE_LAN_BRIDGE}`,
                "--iface=eth0",
                `--subnet-file=${RUN_DIR_IN_POD}/$(NODE_NAME).env`,
              ],
              env: [
                fieldEnv("POD_NAME", "metadata.name"),
                fieldEnv("POD_NAMESPACE", "metadata.namespace"),
                fieldEnv("NODE_NAME", "spec.nodeName"),
                { name: "EVENT_QUEUE_DEPTH", value: "5000" },
              ],
              securityContext: { privileged: false, capabilities: { add: ["NET_ADMIN", "NET_RAW"] } },
              volumeMounts: [
                { name: "run", mountPath: RUN_DIR_IN_POD },
                { name: "flannel-cfg", mountPath: "/etc/kube-flannel/" },
                { name: "xtables-lock", mountPath: "/run/xtables.lock" },
              ],
            },
          ],
          volumes: [
            { name: "run", hostPath: { path: runDir, type: "DirectoryOrCreate" } },
            { name: "flannel-cfg", configMap: { name: FLANNEL_CONFIG_MAP } },
            { name: "xtables-lock", hostPath: { path: "/run/xtables.lock", type: "FileOrCreate" } },
          ],
        },
      },
    },
  };
  return [namespace, role, binding, account, config, daemonSet];
}

/**
 * Applies Flannel to the cluster of admin kubeconfig `kubeconfig` (server-side apply: a lab brought
 * up again converges). Does not wait for it to run: a pod made before then gets its network when
 * the node's flanneld has written its subnet file (the kubelet retries the sandbox).
 */
export async function deployFlannel(kubeconfig: string, podCidr: string, image: string, runDir: string): Promise<void> {
  await applyAddOn(kubeconfig, "flannel", forgeFlannel(podCidr, image, runDir));
}
