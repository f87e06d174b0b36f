/**
 * Network namespaces as the host sees them: whether one exists, and which processes live in it.
 * A namespace is named (`ip netns`), or undefined for this process's own: a gateway in a
 * hostNetwork pod works in its node's namespace, which it is already in.
 */
import { existsSync, readdirSync, readlinkSync } from "node:fs";
import { run } from "./exec.js";

/** Whether network namespace `name` exists (this process's own always does). */
export function namespaceExists(name: string | undefined): boolean {
  return name === undefined || existsSync(`/var/run/netns/${name}`);
}

/** How errors name a namespace: `netns NAME`, or this process's own. */
export function describeNamespace(name: string | undefined): string {
  return name === undefined ? "this network namespace" : `netns ${name}`;
}

/** The namespace a process is in (`net:[inode]`), or undefined when it is gone or not ours to read. */
function networkNamespaceOf(pid: number | "self"): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return undefined;
  }
}

/**
 * PIDs of the processes whose network namespace is `netns`; for this process's own, those among
 * the processes it can see (in a pod: its own PID namespace) that share its network namespace.
 */
export async function namespacePids(netns: string | undefined): Promise<number[]> {
  if (netns === undefined) {
    const own = networkNamespaceOf("self");
    return readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number)
      .filter((pid) => pid !== process.pid && networkNamespaceOf(pid) === own);
  }
  if (!namespaceExists(netns)) return [];
  const out = await run("ip", ["netns", "pids", netns]);
  return out.split(/\s+/).filter(Boolean).map(Number);
}
