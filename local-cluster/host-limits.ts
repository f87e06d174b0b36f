/**
 * Kernel limits of this machine that worker nodes need raised. Every kubelet, containerd and
 * kube-proxy holds inotify instances (watches of its configuration, cgroups and pod logs), all as
 * root: with a few labs side by side, the default 128 instances per user run out and a node's
 * processes exit at start ("too many open files"). `up` raises them, never lowers them, and says so.
 */
import { readFileSync, writeFileSync } from "node:fs";

/** The inotify limits a machine running several labs needs, as /proc/sys paths and least values. */
export const INOTIFY_LIMITS: readonly { readonly path: string; readonly least: number }[] = [
  { path: "/proc/sys/fs/inotify/max_user_instances", least: 8192 },
  { path: "/proc/sys/fs/inotify/max_user_watches", least: 524288 },
];

/** Raises each limit of {@link INOTIFY_LIMITS} that is below its least value; resolves what it raised. */
export function raiseHostLimits(log: (line: string) => void): string[] {
  const raised: string[] = [];
  for (const { path, least } of INOTIFY_LIMITS) {
    const current = Number(readFileSync(path, "utf8").trim());
    if (current >= least) continue;
    try {
      writeFileSync(path, String(least));
    } catch (error) {
      throw new Error(
        `local clusters: ${path} is ${current}, below the ${least} that worker nodes need, and could not be raised ` +
          `(${(error as Error).message}); raise it as root: sysctl -w ${path.slice("/proc/sys/".length).replaceAll("/", ".")}=${least}`,
        { cause: error },
      );
    }
    raised.push(`${path} ${current} -> ${least}`);
  }
  if (raised.length > 0) log(`[host] raised for the worker nodes: ${raised.join(", ")}`);
  return raised;
}
