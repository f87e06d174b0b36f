/**
 * What an image takes from this machine: executables found on PATH and the shared libraries
 * `ldd` says they load. Parsing is pure (unit-tested); running `ldd` and resolving paths is the
 * I/O at the edge.
 */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { readlink, realpath } from "node:fs/promises";
import { basename, delimiter, dirname, join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Where Debian keeps system tools that a non-root PATH may lack. */
const SYSTEM_DIRS = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/** The first executable `name` on PATH (then the system directories); throws naming the tool and what to install. */
export function findOnPath(name: string, hint: string): string {
  const dirs = [...(process.env.PATH ?? "").split(delimiter).filter(Boolean), ...SYSTEM_DIRS];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  throw new Error(`image: ${name} not found on PATH or in ${SYSTEM_DIRS.join(", ")} (${hint})`);
}

/**
 * The library paths in `ldd`'s output for `binary`, the dynamic loader included, the kernel's
 * vDSO left out (no file). Returns [] for a static executable. Throws naming the binary and
 * the library when one is not found.
 */
export function parseLdd(binary: string, output: string): string[] {
  if (/not a dynamic executable|statically linked/.test(output)) return [];
  const paths: string[] = [];
  for (const line of output.split("\n").map((l) => l.trim())) {
    if (line === "") continue;
    const missing = /^(\S+) => not found/.exec(line);
    if (missing) throw new Error(`image: ${binary} needs ${missing[1]}, which ldd does not find`);
    const path = /^(?:\S+ => )?(\/\S+) \(0x[0-9a-f]+\)$/.exec(line)?.[1];
    if (path) paths.push(path);
  }
  return paths;
}

/** A host file to put in the image: where it goes, and the real file its bytes come from. */
export interface HostFile {
  /** Path in the image (as the binary or ldd names it). */
  readonly path: string;
  /** The host file read, symlinks resolved. */
  readonly source: string;
}

/**
 * Every shared library the `binaries` load, each under the name `ldd` prints in the real directory
 * behind the one it prints (`/lib/x86_64-linux-gnu/libc.so.6` is `/usr/lib/x86_64-linux-gnu/libc.so.6`
 * on a merged-/usr system: the image gets the same layout, see mergedUsrLinks), with the bytes
 * of the real file behind its symlinks. Sorted by path, no duplicates.
 */
export async function sharedLibraries(binaries: readonly string[]): Promise<HostFile[]> {
  const found = new Map<string, string>();
  for (const binary of binaries) {
    const output = await run("ldd", [binary]).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string; stderr?: string; message: string }) => {
        // ldd exits 1 on a static executable; anything else is a failure to report.
        const text = `${error.stdout ?? ""}${error.stderr ?? ""}`;
        if (/not a dynamic executable/.test(text)) return text;
        throw new Error(`image: ldd ${binary} failed: ${text.trim() || error.message}`);
      },
    );
    for (const printed of parseLdd(binary, output)) {
      const path = join(await realpath(dirname(printed)), basename(printed));
      if (!found.has(path)) found.set(path, await realpath(printed));
    }
  }
  return [...found.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, source]) => ({ path, source }));
}

/** The backend of an `iptables -V` line: `nft` for "(nf_tables)", `legacy` for "(legacy)" or no suffix (before 1.8). */
export function iptablesBackend(versionLine: string): "nft" | "legacy" {
  if (/\(nf_tables\)/.test(versionLine)) return "nft";
  if (/\(legacy\)/.test(versionLine) || /^iptables v1\.[0-7]\./.test(versionLine.trim())) return "legacy";
  throw new Error(`image: cannot tell the iptables backend from ${JSON.stringify(versionLine.trim())}`);
}

/** The host's iptables: its backend and the multi-call binary of that backend (what kube-proxy on the node uses too). */
export async function hostIptables(): Promise<{ backend: "nft" | "legacy"; multi: string; version: string }> {
  const iptables = findOnPath("iptables", "install Debian's iptables");
  const { stdout } = await run(iptables, ["-V"]);
  const backend = iptablesBackend(stdout);
  const multi = await realpath(iptables);
  const expected = backend === "nft" ? "xtables-nft-multi" : "xtables-legacy-multi";
  if (!multi.endsWith(`/${expected}`)) {
    throw new Error(
      `image: iptables (${iptables}) reports the ${backend} backend but resolves to ${multi}, not ${expected}`,
    );
  }
  return { backend, multi, version: stdout.trim() };
}

/**
 * The host's merged-/usr links (`/lib -> usr/lib`, `/lib64`, `/bin`, `/sbin`), to repeat in an
 * image: the dynamic loader's path in every binary is `/lib64/ld-linux-x86-64.so.2`, and
 * iptables looks for its modules in `/usr/lib/...` while ldd names `/lib/...`.
 */
export async function mergedUsrLinks(): Promise<{ path: string; target: string }[]> {
  const links: { path: string; target: string }[] = [];
  for (const path of ["/bin", "/lib", "/lib64", "/sbin"]) {
    const target = await readlink(path).catch(() => undefined);
    if (target !== undefined) links.push({ path, target });
  }
  return links;
}
