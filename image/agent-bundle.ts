/**
 * The last step of `npm run build`: the agent bundled into one file, `dist/agent-bundle/agent.js`
 * (what its image runs), and the build's identity, `dist/core/cluster/agent-build.json`: the package
 * version, the first 12 hex digits of the bundle's SHA-256 (the version is baked into the bundle
 * too) and the agent image's reference, tagged `<version>-<build>`, so that two builds of different
 * code never share a reference. The package deploys that reference (core/cluster/agent-image.ts
 * reads the file, which ships with it); the image is built from the same bundle. The bundle is
 * rewritten only when its bytes change, so a build that changed nothing of the agent leaves its
 * image current.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { build } from "esbuild";
import { agentImageReference } from "./reference.js";

/** The repository root (this package's, wherever the build runs from: dist or sources under Jest). */
const REPO_ROOT = dirname(require.resolve("pulumi-liqo/package.json"));

/** Where `npm run build` writes the agent's bundle. */
export const AGENT_BUNDLE = join(REPO_ROOT, "dist", "agent-bundle", "agent.js");

/** Where it writes the build's identity: in the compiled core, which ships it. */
export const AGENT_BUILD_FILE = join(REPO_ROOT, "dist", "core", "cluster", "agent-build.json");

/** One build of the package: its version, the id of its agent bundle, and the agent image's reference. */
export interface AgentBuild {
  /** The package's version, e.g. `0.1.0`. */
  readonly version: string;
  /** The first 12 hex digits of the SHA-256 of the agent's bundle. */
  readonly build: string;
  /** `pulumi-liqo.local/agent:<version>-<build>`. */
  readonly image: string;
}

/** The build `npm run build` last wrote; throws naming the command when there is none. */
export function readAgentBuild(): AgentBuild {
  if (!existsSync(AGENT_BUILD_FILE)) throw new Error(`no ${AGENT_BUILD_FILE}: run npm run build first`);
  return JSON.parse(readFileSync(AGENT_BUILD_FILE, "utf8")) as AgentBuild;
}

/** The build id of bundle `text`: the first 12 hex digits of its SHA-256. Pure. */
export const buildIdOf = (text: string | Buffer): string =>
  createHash("sha256").update(text).digest("hex").slice(0, 12);

/**
 * Bundles agent/main.ts and its npm dependencies into one CommonJS file, with the options that
 * `npm run build` bundles the Kubernetes client with (package.json `bundle-client`), and resolves its text.
 */
async function bundleText(version: string): Promise<string> {
  const result = await build({
    entryPoints: [join(REPO_ROOT, "agent", "main.ts")],
    absWorkingDir: REPO_ROOT,
    bundle: true,
    minify: true,
    keepNames: true,
    platform: "node",
    format: "cjs",
    target: "node24",
    logLevel: "warning",
    // The agent says which build it is (agent/build.ts).
    define: { PULUMI_LIQO_VERSION: JSON.stringify(version) },
    write: false,
  });
  return result.outputFiles[0]!.text;
}

/** Bundles the agent to {@link AGENT_BUNDLE} (when its bytes changed) and writes {@link AGENT_BUILD_FILE}; resolves the build. */
export async function writeAgentBundle(): Promise<AgentBuild> {
  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
  const text = await bundleText(version);
  const build = buildIdOf(text);
  const made: AgentBuild = { version, build, image: agentImageReference(version, build) };
  mkdirSync(dirname(AGENT_BUNDLE), { recursive: true });
  if (!existsSync(AGENT_BUNDLE) || readFileSync(AGENT_BUNDLE, "utf8") !== text) {
    rmSync(AGENT_BUNDLE, { force: true });
    writeFileSync(AGENT_BUNDLE, text);
  }
  const json = `${JSON.stringify(made, null, 2)}\n`;
  if (!existsSync(AGENT_BUILD_FILE) || readFileSync(AGENT_BUILD_FILE, "utf8") !== json) {
    mkdirSync(dirname(AGENT_BUILD_FILE), { recursive: true });
    writeFileSync(AGENT_BUILD_FILE, json);
  }
  return made;
}

if (require.main === module) {
  writeAgentBundle().catch((error: Error) => {
    console.error(`build: bundling the agent: ${error.message}`);
    process.exitCode = 1;
  });
}
