/**
 * The package's schema.json, which the plugin serves (GetSchema) and whose version it reports:
 * found beside the sources (plugin/ in the repository) or beside the build (dist/plugin/ in the
 * repository or in the plugin's archive).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { conformObject, type ObjectSpec, type TypeSpec } from "./conform.js";

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
  /** A resource's inputs brought to the schema's types (conform.ts), by type token. */
  readonly conformInputs: (type: string, inputs: Record<string, unknown>) => Record<string, unknown>;
}

/** The facts of schema `text`. */
export function schemaFacts(text: string): SchemaFacts {
  const schema = JSON.parse(text) as {
    version: string;
    types: Record<string, ObjectSpec>;
    resources: Record<string, { properties?: Record<string, unknown>; inputProperties?: Record<string, TypeSpec> }>;
  };
  return {
    version: schema.version,
    conformInputs: (type, inputs) =>
      conformObject(inputs, schema.resources[type]?.inputProperties ?? {}, schema.types) as Record<string, unknown>,
    outputs: Object.fromEntries(
      Object.entries(schema.resources).map(([type, spec]) => [type, Object.keys(spec.properties ?? {})]),
    ),
  };
}
