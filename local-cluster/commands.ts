/** Finding the toolchain's executables (scripts/env.sh puts them on PATH) by absolute path. */
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

/**
 * The absolute path of executable `name` on PATH: what a process restarted later runs, whatever
 * its PATH then. Throws naming the command and how to get it.
 */
export function commandPath(name: string): string {
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  throw new Error(`\`${name}\` is not on PATH; run scripts/toolchain.sh and source scripts/env.sh`);
}
