/**
 * The agents' resident memory and CPU share over an idle window, read from /proc: each cluster's
 * control agent runs in a pod on this machine, found by its pod's uid in the processes' cgroups.
 */
import * as k8s from "@kubernetes/client-node";
import { readdirSync, readFileSync } from "node:fs";
import { SYSTEM_NAMESPACE } from "../core/api/index.js";
import { AGENT_NAME, COMPONENT_LABEL } from "../core/cluster/agent-components.js";
import { adminConfig } from "../local-cluster/inspect.js";
import type { LabState } from "../local-cluster/lab.js";
import { run } from "../host/exec.js";
import { delay } from "../host/processes.js";

/** One agent's usage over the window. */
export interface AgentUsage {
  /** The cluster whose agent this is. */
  readonly cluster: string;
  /** Resident memory at the end of the window (VmRSS), MiB. */
  readonly rssMiB: number;
  /** Highest resident memory sampled during the window, MiB. */
  readonly peakRssMiB: number;
  /** CPU time over the window as a share of one core, percent. */
  readonly cpuPercent: number;
}

/** User plus system CPU time of `pid` so far, in clock ticks (/proc/PID/stat fields 14 and 15). */
export function cpuTicks(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** Resident memory of `pid`, MiB: now (`VmRSS`), or its peak since it started (`VmHWM`). */
export function rssMiB(pid: number, field: "VmRSS" | "VmHWM" = "VmRSS"): number {
  const kib = Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return Math.round((kib / 1024) * 10) / 10;
}

/** The control agent's process in `kc`'s cluster (its pod runs on this machine). */
export async function agentProcess(kc: k8s.KubeConfig, cluster: string): Promise<{ cluster: string; pid: number }> {
  const pods = await kc
    .makeApiClient(k8s.CoreV1Api)
    .listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: `${COMPONENT_LABEL}=${AGENT_NAME}` });
  const pod = pods.items.find((p) => p.status?.phase === "Running" && !p.metadata?.deletionTimestamp);
  const [pid] = pod ? podProcessIds(pod.metadata!.uid!, "control") : [];
  if (!pid) throw new Error(`cluster ${cluster}: no running agent process found`);
  return { cluster, pid };
}

/** Samples every agent of `lab` every 5 s for `seconds`, with nothing else asked of the clusters. */
export async function agentUsage(lab: LabState, seconds: number): Promise<AgentUsage[]> {
  const agents = [];
  for (const cluster of lab.clusters) agents.push(await agentProcess(adminConfig(cluster), cluster.name));
  return processUsage(agents, seconds);
}

/** Watches each process for `seconds` ({@link watchUsage}): its resident memory at the end, its peak and its CPU share. */
export async function processUsage(
  processes: readonly { readonly cluster: string; readonly pid: number }[],
  seconds: number,
): Promise<AgentUsage[]> {
  const watching = await watchUsage(processes.map(({ cluster, pid }) => ({ name: cluster, pids: [pid] })));
  const start = performance.now();
  await delay(seconds * 1000);
  const elapsed = (performance.now() - start) / 1000;
  return watching.stop().map((usage, i) => ({
    cluster: usage.name,
    rssMiB: rssMiB(processes[i]!.pid),
    peakRssMiB: usage.peakMiB,
    cpuPercent: Math.round((usage.cpuSeconds / elapsed) * 10000) / 100,
  }));
}

/**
 * The processes of the pod of uid `podUid` on this machine (a pod's containers run here, under
 * cgroups named after the pod's uid), whose command line contains `command`.
 */
export function podProcessIds(podUid: string, command: string): number[] {
  const marks = [podUid, podUid.replace(/-/g, "_")];
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        const cgroup = readFileSync(`/proc/${pid}/cgroup`, "utf8");
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
        return marks.some((mark) => cgroup.includes(mark)) && cmdline.includes(command);
      } catch {
        return false; // Gone meanwhile.
      }
    });
}

/** Processes watched as one (a pod's: a gateway and its wireguard-go), under one name. */
export interface WatchedGroup {
  /** What they are, e.g. `provider agent`. */
  readonly name: string;
  readonly pids: readonly number[];
}

/** What a group of processes took over a window. */
export interface WindowUsage {
  readonly name: string;
  /** User plus system CPU time over the window, seconds (as /proc counts it: in clock ticks). */
  readonly cpuSeconds: number;
  /** The highest sum of their resident memory sampled (every second), MiB. */
  readonly peakMiB: number;
}

/** `read()`, or `fallback` when the process is gone meanwhile. */
const whileAlive = (read: () => number, fallback: number): number => {
  try {
    return read();
  } catch {
    return fallback;
  }
};

/**
 * Starts watching `groups`: their resident memory sampled every second. `stop` ends the window and
 * resolves each group's CPU seconds and peak memory since the start.
 */
export async function watchUsage(groups: readonly WatchedGroup[]): Promise<{ stop(): WindowUsage[] }> {
  const ticksPerSecond = Number(await run("getconf", ["CLK_TCK"]));
  const ticks = (group: WatchedGroup): number =>
    group.pids.reduce((sum, pid) => sum + whileAlive(() => cpuTicks(pid), 0), 0);
  const memory = (group: WatchedGroup): number =>
    group.pids.reduce((sum, pid) => sum + whileAlive(() => rssMiB(pid), 0), 0);
  const startTicks = groups.map(ticks);
  const peaks = groups.map(memory);
  const sampler = setInterval(
    () => groups.forEach((group, i) => (peaks[i] = Math.max(peaks[i]!, memory(group)))),
    1000,
  );
  return {
    stop: () => {
      clearInterval(sampler);
      return groups.map((group, i) => ({
        name: group.name,
        cpuSeconds: (ticks(group) - startTicks[i]!) / ticksPerSecond,
        peakMiB: Math.round(Math.max(peaks[i]!, memory(group)) * 10) / 10,
      }));
    },
  };
}

/** Every process of `cluster`'s running pod of `component` (COMPONENT_LABEL), e.g. its gateway with wireguard-go. */
export async function componentProcessIds(kc: k8s.KubeConfig, cluster: string, component: string): Promise<number[]> {
  const pods = await kc
    .makeApiClient(k8s.CoreV1Api)
    .listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: `${COMPONENT_LABEL}=${component}` });
  const pod = pods.items.find((p) => p.status?.phase === "Running" && !p.metadata?.deletionTimestamp);
  const pids = pod ? podProcessIds(pod.metadata!.uid!, "") : [];
  if (pids.length === 0) throw new Error(`cluster ${cluster}: no running ${component} pod found on this machine`);
  return pids;
}
