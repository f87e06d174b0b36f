/**
 * Which build of the agent this process is: `<version>-<build>`, as its image's tag names it (the
 * version baked into the bundle by `npm run build`, the build the hash of the bundle itself, which
 * is this file once bundled). The agent says it on its Lease, so a `Cluster` shows what runs, not
 * what it asked for. Run from the compiled sources (the local clusters' host agents) it is
 * `unbundled`. The build is worked out as image/agent-bundle.ts `buildIdOf` does it when it tags the
 * image: the image build imports nothing of the product, so the one line is written in both.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

/** Set by esbuild's `define` in the bundle (image/agent-bundle.ts); absent when run from the compiled sources. */
declare const PULUMI_LIQO_VERSION: string | undefined;

let found: string | undefined;

/** This agent's `<version>-<build>`, worked out once. */
export function agentBuild(): string {
  if (found) return found;
  found =
    typeof PULUMI_LIQO_VERSION === "string"
      ? `${PULUMI_LIQO_VERSION}-${createHash("sha256").update(readFileSync(__filename)).digest("hex").slice(0, 12)}`
      : "unbundled";
  return found;
}
