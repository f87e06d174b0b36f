/** The toolchain's pinned versions, read from scripts/versions.sh, their one source. */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const text = readFileSync(join(__dirname, "..", "..", "scripts", "versions.sh"), "utf8");

/** The value of `NAME=value` in scripts/versions.sh; throws naming it when absent. */
export function pinnedVersion(name: string): string {
  const value = new RegExp(`^${name}=["']?([^"'\\s]+)`, "m").exec(text)?.[1];
  if (!value) throw new Error(`scripts/versions.sh sets no ${name}`);
  return value;
}

/** The pulumi CLI (and `@pulumi/pulumi`) version the toolchain builds. */
export const PULUMI_VERSION = pinnedVersion("PULUMI_VERSION");
