/**
 * The provider plugin as its users get it: packed by scripts/plugin.sh from the build into the
 * archive a pluginDownloadURL serves, and installed into a workspace's own Pulumi home with
 * `pulumi plugin install`, where the engine finds it.
 */
import { execa } from "execa";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { PulumiWorkspace } from "./pulumi.js";

// The repository root, whether this runs from sources (tests) or from dist/.
const REPO = dirname(require.resolve("pulumi-liqo/package.json"));

/** The package's version, which the archive and the plugin carry. */
export const PLUGIN_VERSION = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string })
  .version;

/** How long packing may take: the build's files and the production dependencies, gzipped. */
export const PACK_BOUND_MS = 3 * 60_000;

/** Packs the current build (dist/) into directory `into`; resolves to the archive's path. */
export async function packPlugin(into: string): Promise<string> {
  await execa("bash", [join(REPO, "scripts", "plugin.sh"), into], { timeout: PACK_BOUND_MS });
  return join(into, `pulumi-resource-liqo-v${PLUGIN_VERSION}-linux-amd64.tar.gz`);
}

/** Installs the plugin of `archive` into `workspace`'s Pulumi home. */
export async function installPlugin(workspace: PulumiWorkspace, archive: string): Promise<void> {
  await workspace.ok(["plugin", "install", "resource", "liqo", PLUGIN_VERSION, "--file", archive]);
}

/** A workspace of the program in `dir` with the plugin installed from `archive` in its own Pulumi home. */
export async function workspaceWithPlugin(dir: string, archive: string): Promise<PulumiWorkspace> {
  const workspace = await PulumiWorkspace.create(dir);
  try {
    await installPlugin(workspace, archive);
    return workspace;
  } catch (error) {
    workspace.dispose();
    throw error;
  }
}
