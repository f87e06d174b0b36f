/** A directory's files as data, to compare a generated tree with a committed one in one assertion. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every file below `dir`, by its path there, with its text (a file that is not UTF-8, as base64). */
export function tree(dir: string): Record<string, string> {
  const files = (readdirSync(dir, { recursive: true }) as string[]).filter((path) =>
    statSync(join(dir, path)).isFile(),
  );
  return Object.fromEntries(files.sort().map((path) => [path, contentOf(join(dir, path))]));
}

function contentOf(path: string): string {
  const bytes = readFileSync(path);
  const text = bytes.toString("utf8");
  return Buffer.from(text, "utf8").equals(bytes) ? text : `base64:${bytes.toString("base64")}`;
}
