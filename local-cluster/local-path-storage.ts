/**
 * Storage in every local cluster, as most clusters have it: a default StorageClass, `local-path`,
 * whose claims local-path-provisioner 0.0.30 (built by the toolchain) turns into volumes on the node
 * their first pod is placed on. A claim that names no class gets it; it stays Pending until a pod
 * uses it (`WaitForFirstConsumer`: the scheduler picks the node first, then the volume is made
 * there), is Bound once made, and its volume and the directory holding it go when it is deleted
 * (`reclaimPolicy: Delete`).
 *
 * Why this provisioner: it is the one k3s and kind ship as their default class. It provisions
 * dynamically (a claim needs no volume made beforehand), binds on first use, so the volume is where
 * the pod is, and keeps each volume as a plain directory on its node (a `hostPath` volume with the
 * node's affinity), which needs nothing from these machines but a directory: no block device, no
 * CSI driver, no kernel module.
 *
 * Where the volumes live: each node's directory `<lab>/<cluster>/n<i>/local-path` (node-plan.ts
 * `volumes`), a directory per volume `<pv>_<namespace>_<claim>` below it; the nodes share the
 * machine's root, so each is given a directory of its own by name in the provisioner's node path
 * map. The provisioner makes and removes them with helper pods on the node (`sh` running the
 * ConfigMap's `setup` and `teardown` scripts); `down` removes the lab's directory and every volume
 * with it.
 *
 * What differs from upstream's manifest, and why:
 * - In `kube-system`, as k3s runs it, not a namespace of its own: its Deployment is forged like the
 *   other add-ons' (add-ons.ts), and its helper pods, which mount a directory of the node, are
 *   exempt there from the clusters' Pod Security level (`--pod-security`).
 * - Only the cluster's own nodes are in the node path map, each by name; no
 *   `DEFAULT_PATH_FOR_NON_LISTED_NODES`. A claim whose pod lands on a node not listed (a peering's
 *   virtual node) is refused by the provisioner, and the claim stays Pending with an event that says
 *   so, instead of a helper pod sent to a node that cannot run it.
 * - The helper image is the provisioner's own image (busybox inside, image/local-path-image.ts):
 *   the nodes have no registry to pull upstream's busybox from, and one image is one archive to
 *   import. Both with `imagePullPolicy: Never`, as every image of these clusters.
 * - No `--debug` (it logs the configuration again on every refresh), no resource requests (they
 *   would change what a cluster offers its peers, as for cluster DNS), one replica.
 * - The StorageClass is the cluster's default (upstream's manifest leaves that to the user).
 *
 * Forgers are pure; {@link deployLocalPathStorage} applies them.
 */
import type * as k8s from "@kubernetes/client-node";
import { applyAddOn, forgeSystemDeployment } from "./add-ons.js";
import { nodePaths } from "./node-plan.js";

const NAMESPACE = "kube-system";
const NAME = "local-path-provisioner";
const CONFIG_MAP = "local-path-config";
const CONFIG_DIR = "/etc/config/";
const labels = { "k8s-app": NAME };
const rbac = "rbac.authorization.k8s.io/v1";

/** The default StorageClass of every local cluster. */
export const STORAGE_CLASS = "local-path";

/** The provisioner's name, as upstream's (its StorageClass names it; its volumes carry it). */
export const PROVISIONER = "rancher.io/local-path";

/** One node of the cluster, by the name its Node has and its directory (node-plan.ts). */
export interface StorageNode {
  readonly name: string;
  readonly dir: string;
}

/**
 * The provisioner's `config.json`: each node's volume directory by the node's name, and no default
 * for nodes not listed. Pure.
 */
export function forgeNodePathMap(nodes: readonly StorageNode[]): { nodePathMap: { node: string; paths: string[] }[] } {
  return { nodePathMap: nodes.map((node) => ({ node: node.name, paths: [nodePaths(node.dir).volumes] })) };
}

/** The helper pod the provisioner copies for each volume it makes or removes (it adds the rest: node, volumes, command). */
function forgeHelperPod(image: string): k8s.V1Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "helper-pod" },
    spec: {
      priorityClassName: "system-node-critical",
      tolerations: [{ key: "node.kubernetes.io/disk-pressure", operator: "Exists", effect: "NoSchedule" }],
      containers: [{ name: "helper-pod", image, imagePullPolicy: "Never" }],
    },
  };
}

/** The objects of the cluster's storage, the provisioner running `image` and making volumes on `nodes`. Pure. */
export function forgeLocalPathStorage(image: string, nodes: readonly StorageNode[]): k8s.KubernetesObject[] {
  const subjects = [{ kind: "ServiceAccount", name: NAME, namespace: NAMESPACE }];
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: NAME, namespace: NAMESPACE } },
    // Its helper pods, in its own namespace only.
    {
      apiVersion: rbac,
      kind: "Role",
      metadata: { name: NAME, namespace: NAMESPACE },
      rules: [
        {
          apiGroups: [""],
          resources: ["pods"],
          verbs: ["get", "list", "watch", "create", "patch", "update", "delete"],
        },
      ],
    } as k8s.V1Role,
    {
      apiVersion: rbac,
      kind: "RoleBinding",
      metadata: { name: NAME, namespace: NAMESPACE },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: NAME },
      subjects,
    } as k8s.V1RoleBinding,
    // Upstream's cluster role as it is: claims and nodes read, volumes made and deleted, events told.
    {
      apiVersion: rbac,
      kind: "ClusterRole",
      metadata: { name: NAME },
      rules: [
        {
          apiGroups: [""],
          resources: ["nodes", "persistentvolumeclaims", "configmaps", "pods", "pods/log"],
          verbs: ["get", "list", "watch"],
        },
        {
          apiGroups: [""],
          resources: ["persistentvolumes"],
          verbs: ["get", "list", "watch", "create", "patch", "update", "delete"],
        },
        { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
        { apiGroups: ["storage.k8s.io"], resources: ["storageclasses"], verbs: ["get", "list", "watch"] },
      ],
    } as k8s.V1ClusterRole,
    {
      apiVersion: rbac,
      kind: "ClusterRoleBinding",
      metadata: { name: NAME },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: NAME },
      subjects,
    } as k8s.V1ClusterRoleBinding,
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: CONFIG_MAP, namespace: NAMESPACE, labels },
      data: {
        "config.json": `${JSON.stringify(forgeNodePathMap(nodes), null, 2)}\n`,
        // Upstream's scripts as they are.
        setup: '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n',
        teardown: '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n',
        // JSON is YAML: the provisioner reads it as its helper pod template.
        "helperPod.yaml": `${JSON.stringify(forgeHelperPod(image), null, 2)}\n`,
      },
    } as k8s.V1ConfigMap,
    forgeSystemDeployment(NAME, labels, {
      containers: [
        {
          name: NAME,
          image,
          imagePullPolicy: "Never",
          command: [
            "local-path-provisioner",
            "start",
            `--config=${CONFIG_DIR}config.json`,
            `--configmap-name=${CONFIG_MAP}`,
            `--service-account-name=${NAME}`,
            `--provisioner-name=${PROVISIONER}`,
            // Checked non-empty, then unused: the helper pods' image is the template's.
            `--helper-image=${image}`,
          ],
          env: [
            { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
            // Where it reads helperPod.yaml again when the ConfigMap changes.
            { name: "CONFIG_MOUNT_PATH", value: CONFIG_DIR },
          ],
          volumeMounts: [{ name: "config-volume", mountPath: CONFIG_DIR }],
        },
      ],
      volumes: [{ name: "config-volume", configMap: { name: CONFIG_MAP } }],
    }),
    {
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: {
        name: STORAGE_CLASS,
        annotations: { "storageclass.kubernetes.io/is-default-class": "true" },
        labels,
      },
      provisioner: PROVISIONER,
      volumeBindingMode: "WaitForFirstConsumer",
      reclaimPolicy: "Delete",
    } as k8s.V1StorageClass,
  ];
}

/**
 * Applies the storage of the cluster of `kubeconfig`, its provisioner's pod running `image` and
 * making volumes on `nodes`; the pod starts on its own. Applied again with more nodes (add-node.ts),
 * it updates the node path map, which the provisioner reads again within about a minute and a half
 * (kubelet's refresh of the mounted ConfigMap, then its own of 30 s).
 */
export async function deployLocalPathStorage(
  kubeconfig: string,
  image: string,
  nodes: readonly StorageNode[],
): Promise<void> {
  await applyAddOn(kubeconfig, "local-path storage", forgeLocalPathStorage(image, nodes));
}
