/**
 * The agent image `Cluster` deploys unless told another. Apart from agent-components.ts because it
 * reads this package's own package.json where the package is installed: the agent, bundled into
 * its image without one, must never load it.
 */
import { createRequire } from "node:module";

/** This package's version, from its own package.json. */
const { version } = createRequire(__filename)("pulumi-liqo/package.json") as { version: string };

/**
 * The agent image this version of the package deploys when `agent.image` is not given: the one
 * `npm run image` builds and the local clusters load into their nodes. Users of real clusters
 * push that archive to their registry and set `agent.image`.
 */
export const DEFAULT_AGENT_IMAGE = `pulumi-liqo.local/agent:${version}`;
