/**
 * The Kubernetes release a local cluster runs: its control plane's and nodes' binaries. The default
 * release's are on PATH (scripts/env.sh); another supported release's are in the cache directory
 * `scripts/toolchain.sh kubernetes <minor>` builds them into.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { commandPath } from "./commands.js";

/** The Kubernetes binaries a cluster's processes run, by absolute path. */
export interface ReleaseCommands {
  readonly apiServer: string;
  readonly controllerManager: string;
  readonly scheduler: string;
  readonly kubelet: string;
  readonly kubeProxy: string;
}

/**
 * The patch releases the lab can build, oldest first: scripts/versions.sh's `KUBERNETES_RELEASES`,
 * which scripts/env.sh hands over as `LIQO_KUBERNETES_RELEASES`.
 */
export function labReleases(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  const listed = env["LIQO_KUBERNETES_RELEASES"]?.split(/\s+/).filter(Boolean) ?? [];
  if (listed.length === 0)
    throw new Error(
      "local clusters: LIQO_KUBERNETES_RELEASES is not set; source scripts/env.sh (it lists the releases)",
    );
  return listed;
}

/** The minor releases `releases` cover (`1.35.4` → `1.35`). */
export function minorsOf(releases: readonly string[]): readonly string[] {
  return releases.map((release) => release.split(".").slice(0, 2).join("."));
}

/** The patch release pinned for `minor` (`1.37` → `1.37.2`); throws naming the supported ones. */
export function patchReleaseOf(minor: string, releases: readonly string[]): string {
  const found = releases.find((release) => release.split(".").slice(0, 2).join(".") === minor);
  if (!found) throw new Error(`--kubernetes ${minor}: expected one of ${minorsOf(releases).join(", ")}`);
  return found;
}

/**
 * The binaries of `minor` (absent: the default release, on PATH). Throws, naming the command that
 * builds them, when that release is not built yet: said before anything of the lab exists.
 */
export function releaseCommands(minor: string | undefined, env: NodeJS.ProcessEnv = process.env): ReleaseCommands {
  if (minor === undefined)
    return {
      apiServer: commandPath("kube-apiserver"),
      controllerManager: commandPath("kube-controller-manager"),
      scheduler: commandPath("kube-scheduler"),
      kubelet: commandPath("kubelet"),
      kubeProxy: commandPath("kube-proxy"),
    };
  const release = patchReleaseOf(minor, labReleases(env));
  const cache = env["LIQO_CACHE"];
  if (!cache) throw new Error("local clusters: LIQO_CACHE is not set; source scripts/env.sh");
  const controlPlane = join(cache, `kubernetes-${release}`, "bin");
  const node = join(cache, `kubernetes-node-${release}`, "bin");
  const commands = {
    apiServer: join(controlPlane, "kube-apiserver"),
    controllerManager: join(controlPlane, "kube-controller-manager"),
    scheduler: join(controlPlane, "kube-scheduler"),
    kubelet: join(node, "kubelet"),
    kubeProxy: join(node, "kube-proxy"),
  };
  const missing = Object.values(commands).filter((path) => !existsSync(path));
  if (missing.length > 0)
    throw new Error(
      `--kubernetes ${minor}: Kubernetes ${release} is not built (no ${missing.join(", ")}); ` +
        `run scripts/toolchain.sh kubernetes ${minor}`,
    );
  return commands;
}
