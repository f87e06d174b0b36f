/**
 * Virtual node setup, consumer side: a Node standing for the provider's offer (capacity,
 * identifying labels, a NoExecute taint), kept Ready by a heartbeat as a kubelet would: its Lease
 * in `kube-node-lease` renewed about every 10 s, and its Ready condition posted in its status.
 *
 * Ready means: the Node exists and its Ready condition is True with a heartbeat younger than the
 * node lifecycle controller's grace period.
 */
import * as k8s from "@kubernetes/client-node";
import { API_GROUP, MANAGED_BY, MANAGED_BY_LABEL, REMOTE_CLUSTER_LABEL, type OfferedResources } from "../api/index.js";
import { deleteOptional, describeFailure, readOptional, serverOf } from "../kube/client.js";
import { renewLease } from "../kube/lease.js";
import { microTime } from "../kube/time.js";
import { poll } from "../wait/poll.js";

/** Taint every virtual node carries: only pods that tolerate it are placed on the provider. */
export const VIRTUAL_NODE_TAINT: k8s.V1Taint = {
  key: `virtual-node.${API_GROUP}/not-allowed`,
  value: "true",
  effect: "NoExecute",
};
/** Label marking virtual nodes (and excluding them from offers). */
export const VIRTUAL_NODE_LABEL = `${API_GROUP}/virtual-node`;
/** Namespace of node heartbeat leases. */
export const NODE_LEASE_NAMESPACE = "kube-node-lease";
/** How long a lease holds without renewal, as kubelets set it. */
export const NODE_LEASE_DURATION_SECONDS = 40;

/** What a virtual node stands for. */
export interface VirtualNodeSpec {
  /** Node name. */
  readonly name: string;
  readonly providerClusterId: string;
  readonly providerClusterName: string;
  /** The accepted offer: becomes the node's capacity and allocatable. */
  readonly resources: OfferedResources;
  /** Extra labels. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Extra taints, besides {@link VIRTUAL_NODE_TAINT}. */
  readonly taints?: readonly k8s.V1Taint[];
}

function capacityOf(resources: OfferedResources): Record<string, string> {
  return { cpu: resources.cpu, memory: resources.memory, pods: String(resources.pods) };
}

/** What the heartbeat posts as a virtual node's Ready condition: Ready, or not and why. */
export interface NodeReadinessReport {
  readonly ready: boolean;
  /** The condition's reason, one CamelCase word. */
  readonly reason: string;
  /** What a user reads with `kubectl describe node`. */
  readonly message: string;
}

/** A peering whose provider still honours it. */
export const PEERING_ACTIVE: NodeReadinessReport = {
  ready: true,
  reason: "PeeringActive",
  message: "the provider's offer is accepted and the consumer agent's heartbeat is running",
};

function readyCondition(now: Date, report: NodeReadinessReport = PEERING_ACTIVE): k8s.V1NodeCondition {
  return {
    type: "Ready",
    status: report.ready ? "True" : "False",
    reason: report.reason,
    message: report.message,
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  };
}

/** Builds the virtual Node object (no I/O). */
export function forgeVirtualNode(spec: VirtualNodeSpec, now: Date): k8s.V1Node {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: spec.name,
      labels: {
        ...spec.labels,
        [MANAGED_BY_LABEL]: MANAGED_BY,
        [VIRTUAL_NODE_LABEL]: "true",
        [REMOTE_CLUSTER_LABEL]: spec.providerClusterId,
        [`${API_GROUP}/remote-cluster-name`]: spec.providerClusterName,
        "kubernetes.io/hostname": spec.name,
        "kubernetes.io/role": "agent",
        type: "virtual-node",
      },
    },
    spec: { taints: [VIRTUAL_NODE_TAINT, ...(spec.taints ?? [])] },
    status: {
      capacity: capacityOf(spec.resources),
      allocatable: capacityOf(spec.resources),
      conditions: [readyCondition(now)],
      nodeInfo: {
        architecture: "amd64",
        bootID: "",
        containerRuntimeVersion: "pulumi-liqo://virtual",
        kernelVersion: "",
        kubeProxyVersion: "",
        kubeletVersion: "pulumi-liqo",
        machineID: "",
        operatingSystem: "linux",
        osImage: `peering with ${spec.providerClusterName}`,
        systemUUID: "",
      },
    },
  };
}

/**
 * The labels and taints a peering asked for on `node`, as an import recovers them: what the node
 * carries beyond what {@link forgeVirtualNode} sets on every virtual node, and beyond the taints
 * Kubernetes' node controller puts on a node that is not ready (`node.kubernetes.io/…`). Pure.
 */
export function askedOfVirtualNode(node: k8s.V1Node): { labels: Record<string, string>; taints: k8s.V1Taint[] } {
  const own = forgeVirtualNode(
    { name: "", providerClusterId: "", providerClusterName: "", resources: { cpu: "0", memory: "0", pods: 0 } },
    new Date(),
  );
  const ownLabels = new Set(Object.keys(own.metadata!.labels!));
  const labels = Object.fromEntries(Object.entries(node.metadata?.labels ?? {}).filter(([key]) => !ownLabels.has(key)));
  const taints = (node.spec?.taints ?? [])
    .filter((taint) => taint.key !== VIRTUAL_NODE_TAINT.key && !taint.key.startsWith("node.kubernetes.io/"))
    .map(({ timeAdded: _added, ...taint }) => taint);
  return { labels, taints };
}

/**
 * Creates the virtual node, or brings an existing one to `spec`: labels and taints by patch, then
 * capacity through the status subresource (where the API server keeps it).
 */
export async function ensureVirtualNode(
  consumer: k8s.KubeConfig,
  spec: VirtualNodeSpec,
  now = new Date(),
): Promise<void> {
  const core = consumer.makeApiClient(k8s.CoreV1Api);
  const fail = describeFailure(`virtual node: ensuring Node ${spec.name}`, serverOf(consumer));
  const wanted = forgeVirtualNode(spec, now);
  const existing = await readOptional(() => core.readNode({ name: spec.name })).catch(fail);
  if (!existing) {
    await core.createNode({ body: wanted }).catch(fail);
  } else {
    const patch = { metadata: { labels: wanted.metadata!.labels }, spec: { taints: wanted.spec!.taints } };
    await core
      .patchNode({ name: spec.name, body: patch }, k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch))
      .catch(fail);
  }
  await resizeVirtualNode(consumer, spec.name, spec.resources);
  await renewNodeHeartbeat(consumer, spec.name, now);
}

/**
 * Sets the virtual node's capacity and allocatable to a new offer, through the status subresource
 * where the API server keeps them; labels and taints stay as they are.
 */
export async function resizeVirtualNode(
  consumer: k8s.KubeConfig,
  nodeName: string,
  resources: OfferedResources,
): Promise<void> {
  const capacity = capacityOf(resources);
  await consumer
    .makeApiClient(k8s.CoreV1Api)
    .patchNodeStatus(
      { name: nodeName, body: { status: { capacity, allocatable: capacity } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )
    .catch(describeFailure(`virtual node: resizing Node ${nodeName}`, serverOf(consumer)));
}

/** One heartbeat: renews the node's Lease and posts its Ready condition, as a kubelet does. Resolves the node as it now is. */
export async function renewNodeHeartbeat(
  consumer: k8s.KubeConfig,
  nodeName: string,
  now = new Date(),
): Promise<k8s.V1Node> {
  await renewNodeLease(consumer, nodeName, now);
  return postNodeReadiness(consumer, nodeName, PEERING_ACTIVE, now);
}

/** Renews the virtual node's Lease (creating it, owned by the node, when missing). */
export async function renewNodeLease(consumer: k8s.KubeConfig, nodeName: string, now = new Date()): Promise<void> {
  const core = consumer.makeApiClient(k8s.CoreV1Api);
  const fail = describeFailure(`virtual node: heartbeat of Node ${nodeName}`, serverOf(consumer));
  const spec: k8s.V1LeaseSpec = {
    holderIdentity: nodeName,
    leaseDurationSeconds: NODE_LEASE_DURATION_SECONDS,
    renewTime: microTime(now) as unknown as k8s.V1MicroTime,
  };
  // The agent's heartbeat and a peering step may renew at the same moment: renewLease takes a
  // 409 for the other writer's renewal, which is all this one was for.
  await renewLease(consumer, {
    namespace: NODE_LEASE_NAMESPACE,
    name: nodeName,
    renew: (lease) => ({ ...lease, spec: { ...lease.spec, ...spec } }),
    create: async () => {
      const node = await core.readNode({ name: nodeName });
      return {
        metadata: {
          name: nodeName,
          labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
          // Owned by the node, so the lease goes with it even if our own cleanup is skipped.
          ownerReferences: [{ apiVersion: "v1", kind: "Node", name: nodeName, uid: node.metadata!.uid! }],
        },
        spec,
      };
    },
  }).catch(fail);
}

/** Where the consumer's agent serves a virtual node's kubelet API (logs, exec), for the API server. */
export interface KubeletEndpoint {
  /** The agent pod's address. */
  readonly address: string;
  readonly port: number;
}

/** The node status fields that send the API server's kubelet calls (logs, exec) to `kubelet`. */
export function kubeletStatus(kubelet: KubeletEndpoint): Pick<k8s.V1NodeStatus, "addresses" | "daemonEndpoints"> {
  return {
    addresses: [{ type: "InternalIP", address: kubelet.address }],
    daemonEndpoints: { kubeletEndpoint: { Port: kubelet.port } },
  };
}

/**
 * Posts the virtual node's Ready condition as `report` says (keeping when it last turned to that
 * status, as a kubelet does); resolves the node as it now is.
 */
export async function postNodeReadiness(
  consumer: k8s.KubeConfig,
  nodeName: string,
  report: NodeReadinessReport,
  now = new Date(),
  kubelet?: KubeletEndpoint,
): Promise<k8s.V1Node> {
  const core = consumer.makeApiClient(k8s.CoreV1Api);
  const fail = describeFailure(`virtual node: heartbeat of Node ${nodeName}`, serverOf(consumer));
  const node = await core.readNode({ name: nodeName }).catch(fail);
  const previous = node.status?.conditions?.find((c) => c.type === "Ready");
  const ready = readyCondition(now, report);
  if (previous?.status === ready.status && previous.lastTransitionTime)
    ready.lastTransitionTime = previous.lastTransitionTime;
  const conditions = [...(node.status?.conditions ?? []).filter((c) => c.type !== "Ready"), ready];
  return core
    .patchNodeStatus(
      { name: nodeName, body: { status: { conditions, ...(kubelet ? kubeletStatus(kubelet) : {}) } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.StrategicMergePatch),
    )
    .catch(fail);
}

/** Whether the node's Ready condition is True, and what it says otherwise. */
export function nodeReadiness(node: k8s.V1Node | undefined): { ready: boolean; state: string } {
  if (!node) return { ready: false, state: "node not found" };
  const ready = node.status?.conditions?.find((c) => c.type === "Ready");
  if (!ready) return { ready: false, state: "no Ready condition yet" };
  return { ready: ready.status === "True", state: `Ready=${ready.status} (${ready.reason ?? "no reason"})` };
}

/** Waits until the virtual node is Ready. */
export async function waitForNodeReady(
  consumer: k8s.KubeConfig,
  nodeName: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const core = consumer.makeApiClient(k8s.CoreV1Api);
  await poll(
    { step: "virtual node", object: `Node ${nodeName} Ready`, endpoint: serverOf(consumer) },
    { timeoutMs, intervalMs: 300, ...(signal ? { signal } : {}) },
    async () => {
      const { ready, state } = nodeReadiness(await readOptional(() => core.readNode({ name: nodeName })));
      return ready ? { done: true, value: undefined } : { done: false, state };
    },
  );
}

/** Removes the virtual node and its lease. Resolves whether the node existed. */
export async function deleteVirtualNode(consumer: k8s.KubeConfig, nodeName: string): Promise<boolean> {
  const core = consumer.makeApiClient(k8s.CoreV1Api);
  const coordination = consumer.makeApiClient(k8s.CoordinationV1Api);
  const fail = describeFailure(`virtual node: deleting Node ${nodeName}`, serverOf(consumer));
  const existed = await deleteOptional(() => core.deleteNode({ name: nodeName })).catch(fail);
  await deleteOptional(() =>
    coordination.deleteNamespacedLease({ name: nodeName, namespace: NODE_LEASE_NAMESPACE }),
  ).catch(fail);
  return existed;
}
