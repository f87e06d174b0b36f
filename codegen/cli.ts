/**
 * `npm run generate`: writes every file the declarations make (codegen/files.ts); with `--check`,
 * writes nothing and fails naming each file that is not what the declarations make (stale, or
 * edited by hand). The Go, Python and .NET SDKs come from the schema next, by scripts/sdk.sh.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { generatedFiles } from "./files.js";

const root = join(__dirname, "..", "..");
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
const check = process.argv.includes("--check");
const stale: string[] = [];
for (const [path, content] of Object.entries(generatedFiles(root, version))) {
  const file = join(root, path);
  const current = existsSync(file) ? readFileSync(file, "utf8") : undefined;
  if (current === content) continue;
  if (check) stale.push(path);
  else {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
    console.log(`generate: wrote ${path}`);
  }
}
if (stale.length > 0) {
  console.error(`generate: not what the declarations make (run npm run generate): ${stale.join(", ")}`);
  process.exit(1);
}
