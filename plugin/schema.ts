/**
 * The package's schema.json, which the plugin serves (GetSchema) and whose version it reports:
 * found beside the sources (plugin/ in the repository) or beside the build (dist/plugin/ in the
 * repository or in the plugin's archive).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The schema's text, as the package ships it. */
export function schemaText(): string {
  const candidates = [join(__dirname, "..", "schema.json"), join(__dirname, "..", "..", "schema.json")];
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`liqo plugin: schema.json is at none of ${candidates.join(", ")}`);
  return readFileSync(found, "utf8");
}

/** What the plugin reads of the schema. */
export interface SchemaFacts {
  /** The package's version, e.g. `0.1.0`. */
  readonly version: string;
  /** The output properties of each resource, by type token. */
  readonly outputs: Readonly<Record<string, readonly string[]>>;
}

/** The facts of schema `text`. */
export function schemaFacts(text: string): SchemaFacts {
  const schema = JSON.parse(text) as {
    version: string;
    resources: Record<string, { properties?: Record<string, unknown> }>;
  };
  return {
    version: schema.version,
    outputs: Object.fromEntries(
      Object.entries(schema.resources).map(([type, spec]) => [type, Object.keys(spec.properties ?? {})]),
    ),
  };
}
