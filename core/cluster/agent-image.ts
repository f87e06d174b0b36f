/**
 * The agent image `Cluster` deploys unless told another. Apart from agent-components.ts because it
 * reads this build's identity where the package is installed: the agent, bundled into its image
 * without it, must never load it.
 */
import { createRequire } from "node:module";

/** What one build of the package is (written by `npm run build` beside the compiled core). */
export interface AgentBuild {
  /** The package's version, e.g. `0.1.0`. */
  readonly version: string;
  /** The first 12 hex digits of the SHA-256 of the agent's bundle. */
  readonly build: string;
  /** The agent image's reference: `pulumi-liqo.local/agent:<version>-<build>`. */
  readonly image: string;
}

/** This package's build. */
export const AGENT_BUILD = createRequire(__filename)("pulumi-liqo/agent-build.json") as AgentBuild;

/**
 * The agent image this build of the package deploys when `agent.image` is not given: the one
 * `npm run image` builds from the same bundle and the local clusters load into their nodes. Its tag
 * names the version and the bundle, so a build of other code never takes its place under one
 * reference. Users of real clusters push that archive to their registry and set `agent.image`.
 */
export const DEFAULT_AGENT_IMAGE = AGENT_BUILD.image;
