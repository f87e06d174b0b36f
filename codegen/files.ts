/**
 * Every file the generator writes, by path from the repository's root, with its content: the
 * schema, the TypeScript SDK's generated part and the reference pages' tables. Pure but for
 * reading the reference pages, whose prose around the tables is written by hand.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { referencePages } from "./reference.js";
import { packageSchema } from "./schema.js";
import { typescriptFiles } from "./typescript.js";

/** The generated files of the repository at `root`, for package version `version`. */
export function generatedFiles(root: string, version: string): Record<string, string> {
  const pages = referencePages((path) => readFileSync(join(root, path), "utf8"));
  return {
    "schema.json": `${JSON.stringify(packageSchema(version), null, 2)}\n`,
    ...typescriptFiles(),
    ...pages,
  };
}
