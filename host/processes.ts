/**
 * Long-running processes in a network namespace (a local cluster's control plane and agent, a
 * gateway's wireguard-go): started detached, recorded by PID and start time, and ended only by
 * that record, so that nothing but what was started here is ever signalled.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { describeNamespace } from "./namespaces.js";

/** What is needed to find, and only find, a process this harness started. */
export interface ProcessRecord {
  /** Role of the process, e.g. `kube-apiserver`. */
  readonly name: string;
  /** Its PID. */
  readonly pid: number;
  /** Its start time in clock ticks since boot (/proc/PID/stat field 22): guards against PID reuse. */
  readonly startTicks: number;
  /** File that receives its stdout and stderr. */
  readonly logFile: string;
}

interface ProcStat {
  readonly state: string;
  readonly startTicks: number;
}

function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: split after its closing ')'.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0]!, startTicks: Number(fields[19]) };
}

/** Whether the recorded process is still running (a zombie or a reused PID counts as gone). */
export function isRunning(record: ProcessRecord): boolean {
  const stat = readStat(record.pid);
  return stat !== undefined && stat.state !== "Z" && stat.startTicks === record.startTicks;
}

/**
 * How a process enters its network namespace. `ip netns exec` also gives it a mount namespace of
 * its own with `/sys` remounted for the network namespace; `nsenter` enters the network namespace
 * only, so the process keeps the host's `/sys/fs/cgroup` (kubelet and containerd need it).
 */
export type NamespaceEntry = "ip netns exec" | "nsenter";

/**
 * Starts `command args…` inside network namespace `netns` (undefined: this process's own), detached from this process so that it
 * outlives the command that started the cluster. `ip netns exec` and `nsenter` exec the command in
 * place, so the PID recorded is the command's own.
 */
export function startInNamespace(
  netns: string | undefined,
  name: string,
  command: string,
  args: readonly string[],
  logFile: string,
  environment?: Readonly<Record<string, string>>,
  entry: NamespaceEntry = "ip netns exec",
): ProcessRecord {
  const log = openSync(logFile, "a");
  try {
    const enter =
      netns === undefined
        ? []
        : entry === "nsenter"
          ? ["nsenter", `--net=/run/netns/${netns}`]
          : ["ip", "netns", "exec", netns];
    const argv = [...enter, command, ...args];
    const child = spawn(argv[0]!, argv.slice(1), {
      detached: true,
      stdio: ["ignore", log, log],
      ...(environment ? { env: { ...process.env, ...environment } } : {}),
    });
    if (child.pid === undefined) throw new Error(`could not start ${name} (${command}) in ${describeNamespace(netns)}`);
    child.unref();
    const stat = readStat(child.pid);
    if (!stat) throw new Error(`${name} (${command}) exited at once in ${describeNamespace(netns)}; see ${logFile}`);
    return { name, pid: child.pid, startTicks: stat.startTicks, logFile };
  } finally {
    closeSync(log);
  }
}

/** The last lines of a process's log file, on one line, for an error message; "(no log)" when there is none. */
export function logTail(file: string, lines = 5): string {
  try {
    return readFileSync(file, "utf8").trim().split("\n").slice(-lines).join(" | ") || "(no log)";
  } catch {
    return "(no log)";
  }
}

/** Resolves after `ms` milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Ends the recorded process: SIGTERM, then SIGKILL if it is still running after `graceMs`.
 * Does nothing if it has already exited or its PID now belongs to another process.
 */
export async function stopProcess(record: ProcessRecord, graceMs = 10_000): Promise<void> {
  if (!isRunning(record)) return;
  signal(record.pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (isRunning(record) && Date.now() < deadline) await delay(100);
  if (isRunning(record)) {
    signal(record.pid, "SIGKILL");
    while (isRunning(record)) await delay(50);
  }
}

/** Sends `name` to `pid`; a process that exited since it was last seen running needs none. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/**
 * PIDs of the processes (other than this one) that work from under directory `dir`: their
 * executable, their working directory or one of their arguments lies there.
 */
export function pidsUsing(dir: string): number[] {
  const under = (path: string): boolean => path === dir || path.startsWith(`${dir}/`);
  const link = (pid: string, name: string): string => {
    try {
      return readlinkSync(`/proc/${pid}/${name}`);
    } catch {
      return ""; // Exited meanwhile, or a kernel thread.
    }
  };
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .filter((pid) => {
      let args: string[];
      try {
        args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      } catch {
        return false;
      }
      return (
        under(link(pid, "exe")) || under(link(pid, "cwd")) || args.some((arg) => under(arg) || arg.includes(`=${dir}/`))
      );
    })
    .map(Number);
}

/** Reads the start time of a live process found by PID alone (e.g. listed in a namespace). */
export function recordOf(pid: number, name: string, logFile: string): ProcessRecord | undefined {
  const stat = readStat(pid);
  return stat && { name, pid, startTicks: stat.startTicks, logFile };
}
