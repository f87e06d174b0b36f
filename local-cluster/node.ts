/**
 * A local cluster's worker nodes: containerd, kubelet and kube-proxy per node, each a process in
 * the node's network namespace entered with `nsenter` (so it keeps the host's `/sys/fs/cgroup`),
 * each recorded and restarted by the cluster's supervisor like the control plane's processes.
 *
 * Ready means: the Node is registered, has its pod /24 as spec.podCIDR, and reports Ready. Teardown
 * (also after a crash) works from the plan alone: it kills what runs in the node's cgroups and its
 * shims, unmounts what containerd and kubelet mounted under the node's directory, removes the
 * node's cgroups, and the few files the runtime keeps outside it (shim sockets, CNI result cache).
 */
import * as k8s from "@kubernetes/client-node";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commandPath } from "./commands.js";
import { run, type CommandError } from "../host/exec.js";
import { delay, isRunning, recordOf, startInNamespace } from "../host/processes.js";
import { describeKubeError } from "../core/kube/errors.js";
import { poll } from "../core/wait/poll.js";
import {
  NODE_LAN_API_ADDRESS,
  readClusterCa,
  writeKubeconfig,
  type LivenessCheck,
  type OnStarted,
} from "./control-plane.js";
import {
  containerdArgs,
  containerdConfig,
  cniConfig,
  kubeletArgs,
  kubeletConfig,
  kubeProxyArgs,
  kubeProxyConfig,
  nodeFiles,
  type NodeBinaries,
  type NodeConfigInputs,
} from "./node-config.js";
import { nodePaths, type PlannedNode } from "./node-plan.js";
import { API_SERVER_PORT, type PlannedCluster } from "./plan.js";
import { NODE_PROCESSES, nodeComponent } from "./supervisor.js";
import { loadKubeconfigFile } from "../core/kube/client.js";

/** The node binaries, resolved once per `up` (the CNI plugins' directory from scripts/env.sh). */
export function nodeBinaries(): NodeBinaries & { containerd: string; kubelet: string; kubeProxy: string; ctr: string } {
  const cniBinDir = process.env["LIQO_CNI_BIN_DIR"];
  if (!cniBinDir || !existsSync(join(cniBinDir, "bridge")))
    throw new Error(
      `worker nodes: no CNI plugins at LIQO_CNI_BIN_DIR=${cniBinDir ?? "(unset)"}; run scripts/toolchain.sh and source scripts/env.sh`,
    );
  return {
    runc: commandPath("runc"),
    shim: commandPath("containerd-shim-runc-v2"),
    cniBinDir,
    containerd: commandPath("containerd"),
    kubelet: commandPath("kubelet"),
    kubeProxy: commandPath("kube-proxy"),
    ctr: commandPath("ctr"),
  };
}

/** The mount points of every cgroup hierarchy (v1 controllers, named ones and the v2 one). */
function cgroupMounts(): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" "))
    .filter((f) => {
      const type = f[f.indexOf("-") + 1];
      return type === "cgroup" || type === "cgroup2";
    })
    .map((f) => f[4]!);
}

/** Creates the node's cgroup in every hierarchy (cpuset's needs its CPUs and memory nodes copied from the parent). */
function createCgroups(node: PlannedNode): void {
  for (const mount of cgroupMounts()) {
    const dir = join(mount, node.cgroupRoot);
    mkdirSync(dir, { recursive: true });
    for (const file of ["cpuset.cpus", "cpuset.mems"]) {
      if (existsSync(join(mount, file))) writeFileSync(join(dir, file), readFileSync(join(mount, file)));
    }
  }
}

/** Writes the node's configuration, identity (client certificate O=system:nodes) and kube-proxy's. */
export function writeNodeFiles(cluster: PlannedCluster, node: PlannedNode, inputs: NodeConfigInputs): void {
  const paths = nodePaths(node.dir);
  for (const dir of [paths.pki, paths.logs, paths.cniConfDir, paths.containerdState, paths.podLogs])
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files = nodeFiles(node.dir);
  writeFileSync(paths.containerdConfig, containerdConfig(inputs));
  writeFileSync(join(paths.cniConfDir, "10-pods.conflist"), cniConfig(node, inputs.flannel));
  writeFileSync(files.kubeletConfig, kubeletConfig(inputs));
  writeFileSync(files.kubeProxyConfig, kubeProxyConfig(inputs));
  // The nodes have no name server of their own: only cluster DNS answers, and only for cluster names.
  writeFileSync(files.resolvConf, "# No name server outside the cluster's own DNS.\noptions ndots:1\n");
  const ca = readClusterCa(cluster.dir);
  const server = `https://${NODE_LAN_API_ADDRESS}:${API_SERVER_PORT}`;
  writeKubeconfig(files.kubeconfig, cluster.name, ca, server, {
    commonName: `system:node:${node.name}`,
    organizations: ["system:nodes"],
  });
  writeKubeconfig(files.kubeProxyKubeconfig, cluster.name, ca, server, { commonName: "system:kube-proxy" });
  createCgroups(node);
}

/** The node binaries and command-line builders, as {@link nodeBinaries} resolves them. */
export type ResolvedBinaries = ReturnType<typeof nodeBinaries>;

/**
 * Starts node processes in the node's namespace by `nsenter`, each recorded with how: containerd
 * first (at once), kubelet and kube-proxy once the API server is ready (they register at once).
 */
export function startNodeProcesses(
  node: PlannedNode,
  binaries: ResolvedBinaries,
  processes: readonly (typeof NODE_PROCESSES)[number][],
  onStarted: OnStarted,
): void {
  const launches = {
    containerd: [binaries.containerd, containerdArgs(node)],
    kubelet: [binaries.kubelet, kubeletArgs(node)],
    "kube-proxy": [binaries.kubeProxy, kubeProxyArgs(node)],
  } as const;
  for (const process of processes) {
    const [command, args] = launches[process];
    const logFile = join(nodePaths(node.dir).logs, `${process}.log`);
    const record = startInNamespace(
      node.netns,
      nodeComponent(process, node.index),
      command,
      args,
      logFile,
      undefined,
      "nsenter",
    );
    onStarted(record, { command, args, netns: node.netns, entry: "nsenter" });
  }
}

/** Imports image archives into the node's containerd (namespace `k8s.io`, where kubelet's images live). */
export async function importImages(
  node: PlannedNode,
  ctr: string,
  archives: readonly string[],
  dead: LivenessCheck,
  timeoutMs: number,
): Promise<void> {
  const context = { step: `node ${node.name}`, object: "containerd", endpoint: node.containerdSocket };
  await poll(context, { timeoutMs, intervalMs: 100 }, async () => {
    const reason = dead();
    if (reason) return { failed: true, reason };
    const answer = await run(ctr, ["--address", node.containerdSocket, "version"]).then(
      () => true,
      () => false,
    );
    return answer ? { done: true, value: undefined } : { done: false, state: "containerd does not answer yet" };
  });
  for (const archive of archives) {
    await run(ctr, ["--address", node.containerdSocket, "-n", "k8s.io", "images", "import", "--local", archive]).catch(
      (error: Error) => {
        throw new Error(`node ${node.name}: importing image ${archive} into containerd failed: ${error.message}`);
      },
    );
  }
}

/**
 * Waits until every node of the cluster is registered and Ready, giving each Node its pod /24 as
 * spec.podCIDR when it registers (kubelet cannot set it; the controller manager does not allocate),
 * unless the cluster's nodes are to carry none (`nodePodCidrs: false`, as on EKS with the VPC CNI).
 */
export async function waitForNodes(
  cluster: PlannedCluster & { readonly kubeconfig: string },
  dead: LivenessCheck,
  timeoutMs: number,
): Promise<void> {
  const kc = loadKubeconfigFile(cluster.kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const endpoint = kc.getCurrentCluster()!.server;
  const deadline = Date.now() + timeoutMs;
  for (const node of cluster.nodes) {
    await poll(
      { step: `local cluster ${cluster.name}`, object: `node ${node.name}`, endpoint },
      { timeoutMs: Math.max(1, deadline - Date.now()), intervalMs: 250 },
      async () => {
        const reason = dead();
        if (reason) return { failed: true, reason };
        const found = await core.readNode({ name: node.name }).catch((e: unknown) => {
          if ((e as { code?: number }).code === 404) return undefined;
          throw new Error(describeKubeError(e));
        });
        if (!found) return { done: false, state: "not registered yet" };
        if (cluster.nodePodCidrs !== false && !found.spec?.podCIDR) {
          await core.patchNode(
            { name: node.name, body: { spec: { podCIDR: node.podCidr, podCIDRs: [node.podCidr] } } },
            k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
          );
        }
        const ready = found.status?.conditions?.find((c) => c.type === "Ready");
        return ready?.status === "True"
          ? { done: true, value: undefined }
          : { done: false, state: `Ready ${ready?.status ?? "unknown"}: ${ready?.message ?? "no status yet"}` };
      },
    );
  }
}

/** PIDs of the processes in the node's cgroups (its pods' containers), from every hierarchy. */
function cgroupPids(node: PlannedNode): number[] {
  const pids = new Set<number>();
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    const procs = join(dir, "cgroup.procs");
    if (existsSync(procs))
      for (const pid of readFileSync(procs, "utf8").split("\n").filter(Boolean)) pids.add(Number(pid));
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) walk(join(dir, entry.name));
  };
  for (const mount of cgroupMounts()) walk(join(mount, node.cgroupRoot));
  return [...pids];
}

/**
 * Thaws every frozen cgroup of the node: a container runc froze (to signal or update it) and whose
 * shim died before it thawed it stays frozen, and a frozen process does not die, even of SIGKILL
 * (seen under load: a lab's teardown waiting on it for ever). cgroup v1's `freezer.state`, v2's
 * `cgroup.freeze`.
 */
function thawCgroups(node: PlannedNode): void {
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const [file, thawed] of [
      ["freezer.state", "THAWED"],
      ["cgroup.freeze", "0"],
    ] as const) {
      const path = join(dir, file);
      if (existsSync(path) && readFileSync(path, "utf8").trim() !== thawed) writeFileSync(path, thawed);
    }
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) walk(join(dir, entry.name));
  };
  for (const mount of cgroupMounts()) walk(join(mount, node.cgroupRoot));
}

/** PIDs of the node's containerd shims: the processes whose command line names the node's containerd socket. */
function shimPids(node: PlannedNode): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return args.includes(node.containerdSocket) && args.some((a) => a.endsWith("containerd-shim-runc-v2"));
      } catch {
        return false; // Exited meanwhile.
      }
    })
    .map(Number);
}

/** SIGKILLs the processes and waits until each is gone. */
async function killAll(pids: readonly number[], what: string, removed: string[]): Promise<void> {
  const records = pids.flatMap((pid) => recordOf(pid, what, "") ?? []);
  for (const record of records) {
    try {
      process.kill(record.pid, "SIGKILL");
      removed.push(`${what} (pid ${record.pid})`);
    } catch {
      // Exited meanwhile.
    }
  }
  while (records.some(isRunning)) await delay(20);
}

/** Mount points at or below `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter((point): point is string => point !== undefined && (point === dir || point.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
}

/** How long a node's cgroups may stay busy after their processes were killed. */
const CGROUP_RELEASE_TIMEOUT_MS = 20_000;

/**
 * Removes the node's cgroups, deepest first. A cgroup can still be busy after its processes were
 * killed: a shim stopped after them may have started one more (runc init of a container being made,
 * seen in CI), so busy ones get their processes killed again until the deadline.
 */
async function removeCgroups(node: PlannedNode): Promise<string[]> {
  const removed: string[] = [];
  const deadline = Date.now() + CGROUP_RELEASE_TIMEOUT_MS;
  for (;;) {
    const busy: string[] = [];
    for (const mount of cgroupMounts()) {
      const root = join(mount, node.cgroupRoot);
      if (!existsSync(root)) continue;
      const dirs: string[] = [];
      const walk = (dir: string): void => {
        for (const entry of readdirSync(dir, { withFileTypes: true }))
          if (entry.isDirectory()) walk(join(dir, entry.name));
        dirs.push(dir);
      };
      walk(root);
      for (const dir of dirs) {
        try {
          rmdirSync(dir);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          // Gone meanwhile: the runtime, still stopping a container, removed its own (seen under load).
          if (code === "ENOENT") continue;
          if (code !== "EBUSY") throw error;
          busy.push(dir);
        }
      }
      if (!existsSync(root)) removed.push(`cgroup ${root}`);
    }
    if (busy.length === 0) return removed;
    if (Date.now() > deadline) {
      const pids = cgroupPids(node).join(", ") || "none listed";
      const waited = `${CGROUP_RELEASE_TIMEOUT_MS / 1000} s`;
      throw new Error(
        `local cluster teardown of node ${node.name}: cgroups busy after ${waited} (processes ${pids}): ${busy.join(", ")}`,
      );
    }
    await killAll(cgroupPids(node), `late container of node ${node.name}`, removed);
    await delay(100);
  }
}

/** Where containerd's shims keep their sockets whatever containerd's state directory (compiled in). */
const SHIM_SOCKET_DIR = "/run/containerd/s";
/** libcni's result cache (containerd gives it no other place). */
const CNI_RESULT_DIR = "/var/lib/cni/results";

/**
 * Removes everything of the node that outlives its recorded processes (stopped before): pod
 * containers, shims, mounts under its directory, its cgroups, shim sockets, CNI cache files.
 * Safe to call again, and on a node that never started. Returns what it removed.
 */
export async function teardownNode(node: PlannedNode): Promise<string[]> {
  const removed: string[] = [];
  // Containers first (by cgroup, so none is missed), thawed so that they can die, then the shims
  // that would report their death.
  thawCgroups(node);
  await killAll(cgroupPids(node), `container of node ${node.name}`, removed);
  await killAll(shimPids(node), `containerd shim of node ${node.name}`, removed);
  for (const point of mountsUnder(node.dir)) {
    const unmounted = await run("umount", [point])
      .catch(() => run("umount", ["--lazy", point]))
      .then(
        () => true,
        (error: CommandError) => {
          // Gone meanwhile: a shim that exits unmounts its container's rootfs itself (seen in CI), or a
          // lazy unmount of the mount above took this one with it ("no mount point specified").
          if (/not mounted|no mount point specified/.test(error.stderr)) return false;
          throw error;
        },
      );
    if (unmounted) removed.push(`mount ${point}`);
  }
  removed.push(...(await removeCgroups(node)));
  // A shim's socket is named by the hash of containerd's address, the namespace and the task id.
  const tasks = join(nodePaths(node.dir).containerdState, "io.containerd.runtime.v2.task", "k8s.io");
  for (const id of existsSync(tasks) ? readdirSync(tasks) : []) {
    const hash = createHash("sha256")
      .update(join(node.containerdSocket, "k8s.io", id))
      .digest("hex");
    const socket = join(SHIM_SOCKET_DIR, hash);
    if (existsSync(socket)) {
      rmSync(socket, { force: true });
      removed.push(`socket ${socket}`);
    }
  }
  // libcni caches each result as <network>-<sandbox id>-<interface>: the node's network's, and the
  // loopback plugin's of the node's sandboxes.
  const results = existsSync(CNI_RESULT_DIR) ? readdirSync(CNI_RESULT_DIR) : [];
  const sandboxes = results
    .filter((file) => file.startsWith(`${node.cniNetwork}-`))
    .map((file) => file.slice(node.cniNetwork.length + 1).split("-")[0]!);
  for (const file of results) {
    if (file.startsWith(`${node.cniNetwork}-`) || sandboxes.some((id) => file === `cni-loopback-${id}-lo`)) {
      rmSync(join(CNI_RESULT_DIR, file), { force: true });
      removed.push(`file ${join(CNI_RESULT_DIR, file)}`);
    }
  }
  // Their directories too, once empty (another runtime on the machine may still use them).
  for (const dir of [SHIM_SOCKET_DIR, "/run/containerd", CNI_RESULT_DIR, "/var/lib/cni"]) {
    try {
      rmdirSync(dir);
    } catch {
      // Absent, or in use by someone else.
    }
  }
  return removed;
}
