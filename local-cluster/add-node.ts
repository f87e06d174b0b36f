/**
 * `npm run clusters -- add-node CLUSTER`: one more worker node in a running cluster, as an admin
 * adds a machine to a cluster in use (a cloud's node pool scaling out). The node is planned as the
 * next of the cluster's (its LAN address, its /24 of the pod CIDR), joined to the node LAN, given
 * the images and the release the other nodes run, started, and recorded in the lab's state, where
 * the supervisor then keeps its processes running and `down` finds it. The cluster's storage is
 * given the node's volume directory (local-path-storage.ts). Nothing of the product is told: what
 * a peering needs on the new node (the route agent's DaemonSet pod) comes by itself.
 */
import { join } from "node:path";
import { Cidr } from "../core/net/cidr.js";
import { isRunning } from "../host/processes.js";
import { clusterOf, DEFAULT_LOAD_BALANCER, nodeConfigInputs, readLab } from "./lab.js";
import { addToNodeNetwork } from "./node-network.js";
import { nodeImages } from "./node-images.js";
import { planNodes, type PlannedNode } from "./node-plan.js";
import { importImages, nodeBinaries, startNodeProcesses, waitForNodes, writeNodeFiles } from "./node.js";
import { releaseCommands } from "./releases.js";
import { deployLocalPathStorage } from "./local-path-storage.js";
import { updateLab, type ClusterState } from "./state.js";
import type { OnStarted } from "./control-plane.js";

/** How long the new node may take to be Ready. */
const NODE_READY_TIMEOUT_MS = 180_000;

/** Adds a worker node to cluster `clusterName` of the lab in `root` named `labName`; resolves the new node. */
export async function addNode(
  labName: string,
  root: string,
  clusterName: string,
  log: (line: string) => void,
): Promise<PlannedNode> {
  const state = readLab(labName, root);
  if (!state) throw new Error(`add-node: no lab "${labName}" under ${root}`);
  const cluster = clusterOf(state, clusterName);
  const { nodes, problems } = planNodes(
    {
      lab: state.name,
      name: cluster.name,
      netns: cluster.netns,
      podCidr: Cidr.parse(cluster.podCidr),
      dir: cluster.dir,
    },
    cluster.nodes.length + 1,
  );
  if (problems.length > 0) throw new Error(`add-node ${clusterName}: ${problems.join("; ")}`);
  const node = nodes[nodes.length - 1]!;
  const { kubelet, kubeProxy } = releaseCommands(cluster.kubernetes);
  const binaries = { ...nodeBinaries(), kubelet, kubeProxy };
  const images = await nodeImages(
    log,
    state.hostAgent === true ? "if-built" : "needed",
    state.loadBalancer ?? DEFAULT_LOAD_BALANCER,
    cluster.cni === "flannel",
  );
  log(`[lab ${state.name}] cluster ${cluster.name}: adding node ${node.name} (${node.address}, pods ${node.podCidr})`);
  await addToNodeNetwork(nodes, cluster.cni !== "flannel");
  // Recorded before anything starts, so that `down` finds the node whatever happens next.
  updateLab(
    state.dir,
    (s) =>
      void Object.assign(
        s.clusters.find((c) => c.name === cluster.name)!,
        { nodes },
      ),
  );
  writeNodeFiles(cluster, node, nodeConfigInputs(cluster, node, images.pause, binaries));
  const started: ClusterState["processes"] = [];
  const record: OnStarted = (process, launch) => {
    started.push(process);
    updateLab(state.dir, (s) => {
      const mine = s.clusters.find((c) => c.name === cluster.name)!;
      mine.processes.push(process);
      mine.launches[process.name] = launch;
    });
  };
  const dead = (): string | undefined => {
    const gone = started.find((p) => !isRunning(p));
    return gone && `${gone.name} exited; see ${gone.logFile}`;
  };
  startNodeProcesses(node, binaries, ["containerd"], record);
  await importImages(node, binaries.ctr, images.archives, dead, NODE_READY_TIMEOUT_MS);
  startNodeProcesses(node, binaries, ["kubelet", "kube-proxy"], record);
  await waitForNodes({ ...cluster, nodes: [node] }, dead, NODE_READY_TIMEOUT_MS).catch((error: Error) => {
    throw new Error(`${error.message}\n  logs: ${join(node.dir, "logs")}`);
  });
  await deployLocalPathStorage(cluster.kubeconfig, images.localPathProvisioner, nodes);
  log(`[lab ${state.name}] cluster ${cluster.name}: node ${node.name} Ready`);
  return node;
}
