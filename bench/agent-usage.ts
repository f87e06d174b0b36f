/**
 * The agents' resident memory and CPU share over an idle window, read from /proc by the PIDs
 * the lab recorded (and checked against their start times, so a reused PID is never read).
 */
import { readdirSync, readFileSync } from "node:fs";
import type { LabState } from "../local-cluster/lab.js";
import { run } from "../host/exec.js";
import { delay, isRunning, type ProcessRecord } from "../host/processes.js";

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
function cpuTicks(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** Resident memory of `pid`, MiB. */
function rssMiB(pid: number): number {
  const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return Math.round((kib / 1024) * 10) / 10;
}

/** The agent process of every cluster of `lab`. */
function agentsOf(lab: LabState): { cluster: string; agent: ProcessRecord }[] {
  return lab.clusters.map((cluster) => {
    const agent = cluster.processes.find((p) => p.name === "agent");
    if (!agent || !isRunning(agent)) throw new Error(`lab ${lab.name}: cluster ${cluster.name} has no running agent`);
    return { cluster: cluster.name, agent };
  });
}

/** Samples every agent of `lab` every 5 s for `seconds`, with nothing else asked of the clusters. */
export async function agentUsage(lab: LabState, seconds: number): Promise<AgentUsage[]> {
  return processUsage(
    agentsOf(lab).map(({ cluster, agent }) => ({ cluster, pid: agent.pid })),
    seconds,
  );
}

/** Samples each process every 5 s for `seconds`: its resident memory and its CPU share. */
export async function processUsage(
  processes: readonly { readonly cluster: string; readonly pid: number }[],
  seconds: number,
): Promise<AgentUsage[]> {
  const ticksPerSecond = Number(await run("getconf", ["CLK_TCK"]));
  const start = performance.now();
  const startTicks = processes.map(({ pid }) => cpuTicks(pid));
  const peaks = processes.map(({ pid }) => rssMiB(pid));
  while (performance.now() - start < seconds * 1000) {
    await delay(Math.min(5000, seconds * 1000 - (performance.now() - start)));
    processes.forEach(({ pid }, i) => (peaks[i] = Math.max(peaks[i]!, rssMiB(pid))));
  }
  const elapsed = (performance.now() - start) / 1000;
  return processes.map(({ cluster, pid }, i) => ({
    cluster,
    rssMiB: rssMiB(pid),
    peakRssMiB: peaks[i]!,
    cpuPercent: Math.round(((cpuTicks(pid) - startTicks[i]!) / ticksPerSecond / elapsed) * 10000) / 100,
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
