/**
 * `npm run image [-- --only agent,pause] [--out DIR] [--podtool PATH]`: builds the project's
 * images into OCI archives (default dist/image/) and prints their references, digests and sizes.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildImages, formatReport, IMAGE_NAMES, REPO_ROOT, type ImageName } from "./build.js";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { out: { type: "string" }, only: { type: "string" }, podtool: { type: "string" } },
  });
  const only = values.only?.split(",").map((name) => name.trim());
  const unknown = only?.filter((name) => !(IMAGE_NAMES as readonly string[]).includes(name));
  if (unknown?.length)
    throw new Error(`image: --only: unknown image ${unknown.join(", ")} (known: ${IMAGE_NAMES.join(", ")})`);
  const started = Date.now();
  const images = await buildImages({
    outDir: values.out ?? join(REPO_ROOT, "dist", "image"),
    only: only as ImageName[] | undefined,
    podtool: values.podtool,
  });
  console.log(formatReport(images));
  console.log(`built ${images.length} image(s) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exitCode = 1;
});
