/**
 * The suite's images in the local clusters' nodes: built once per run (image/build-e2e.ts) into
 * `dist/image/e2e/`, then imported into every node's containerd under the suite's references, each
 * alias tagged beside its image.
 */
import { join } from "node:path";
import { REPO_ROOT } from "../../image/build.js";
import { buildE2eImages, type BuiltE2eImage } from "../../image/build-e2e.js";
import type { ClusterState } from "../../local-cluster/lab.js";
import { importImages, nodeBinaries } from "../../local-cluster/node.js";
import { tagImageOnNodes } from "../../local-cluster/pods.js";

/** Where the archives go. */
const ARCHIVE_DIR = join(REPO_ROOT, "dist", "image", "e2e");

/** How long a node's containerd may take to answer before its first import. */
const CONTAINERD_BOUND_MS = 60_000;

/** This run's build, so that the second pass imports what the first built. */
let built: Promise<BuiltE2eImage[]> | undefined;

/** Builds the suite's images, once per run; resolves the archives and their aliases. */
export function suiteImages(agnhostDir: string, log: (line: string) => void): Promise<BuiltE2eImage[]> {
  built ??= (async () => {
    const started = Date.now();
    const images = await buildE2eImages(agnhostDir, ARCHIVE_DIR);
    for (const image of images)
      log(
        `images: ${image.reference} (${(image.bytes / 1e6).toFixed(1)} MB)` +
          image.aliases.map((alias) => `, also ${alias}`).join(""),
      );
    log(`images: built in ${((Date.now() - started) / 1000).toFixed(1)} s into ${ARCHIVE_DIR}`);
    return images;
  })();
  return built;
}

/** Imports `images` into every node of `clusters`, and tags each alias beside its image. */
export async function importSuiteImages(
  clusters: readonly ClusterState[],
  images: readonly BuiltE2eImage[],
): Promise<void> {
  const { ctr } = nodeBinaries();
  const archives = images.map((image) => image.file);
  for (const cluster of clusters) {
    // The lab is up: its nodes' containerd answers, and a dead one fails the import with its error.
    for (const node of cluster.nodes) await importImages(node, ctr, archives, () => undefined, CONTAINERD_BOUND_MS);
    for (const image of images)
      for (const alias of image.aliases) await tagImageOnNodes(cluster, image.reference, alias);
  }
}
