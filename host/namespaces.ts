/** Network namespaces as the host sees them: whether one exists, and which processes live in it. */
import { existsSync } from "node:fs";
import { run } from "./exec.js";

/** Whether network namespace `name` exists. */
export function namespaceExists(name: string): boolean {
  return existsSync(`/var/run/netns/${name}`);
}

/** PIDs of the processes whose network namespace is `netns`. */
export async function namespacePids(netns: string): Promise<number[]> {
  if (!namespaceExists(netns)) return [];
  const out = await run("ip", ["netns", "pids", netns]);
  return out.split(/\s+/).filter(Boolean).map(Number);
}
