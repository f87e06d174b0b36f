/**
 * A deterministic OCI image archive: a tar of an OCI image layout (`oci-layout`, `index.json`,
 * `blobs/sha256/...`) holding one image, written with no Docker and no registry. The same spec
 * gives the same bytes and so the same manifest digest. `ctr images import` loads it under
 * `reference` (the index names it with containerd's `io.containerd.image.name` annotation), and
 * `skopeo copy oci-archive:FILE docker://...` or `crane push FILE ...` push it to a registry.
 */
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { layerMembers, writeLayer, type ImageEntry, type LayerBlob, type LayerMember } from "./layer.js";
import { tarHeader, tarPadding, TAR_END } from "./tar.js";

export type { ImageEntry } from "./layer.js";

/** The runtime settings of an image (the `config` object of an OCI image config). */
export interface ImageRuntimeConfig {
  /** The command's first words, which `args` in a pod spec do not replace. */
  readonly entrypoint?: readonly string[];
  /** Default arguments after the entrypoint. */
  readonly cmd?: readonly string[];
  /** Environment, `NAME=value` each. @example ["PATH=/usr/local/bin:/usr/bin"] */
  readonly env?: readonly string[];
  /** User (and group) the process runs as. @example "65532:65532" */
  readonly user?: string;
  /** Working directory of the process. */
  readonly workingDir?: string;
}

/** Everything an image archive is made from. */
export interface ImageSpec {
  /** The full reference the image is loaded under. @example "pulumi-liqo.local/agent:0.1.0" */
  readonly reference: string;
  /** The layers, bottom first; each is a list of entries. */
  readonly layers: readonly (readonly ImageEntry[])[];
  /** How the image runs. */
  readonly config: ImageRuntimeConfig;
}

/** What writing an image archive produced. */
export interface ImageArchive {
  /** The reference the image is loaded under (as given). */
  readonly reference: string;
  /** Digest of the image manifest, `sha256:<hex>`: what `ctr images ls` shows. */
  readonly digest: string;
  /** Size of the archive file in bytes. */
  readonly bytes: number;
  /** Size of the image's layers uncompressed, in bytes (about what it takes on a node). */
  readonly uncompressedBytes: number;
  /** Each layer's digest and sizes, in the order of `spec.layers`. */
  readonly layers: readonly Omit<LayerBlob, "diffId">[];
}

const MEDIA = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar+gzip",
} as const;

/** A blob of the layout: JSON written here, or a layer file written to the temporary directory. */
interface Blob {
  readonly digest: string;
  readonly size: number;
  readonly data: Buffer | string;
}

function jsonBlob(value: unknown): Blob {
  const data = Buffer.from(JSON.stringify(value));
  return { digest: `sha256:${createHash("sha256").update(data).digest("hex")}`, size: data.length, data };
}

/** The OCI image config: platform linux/amd64 (the toolchain's binaries), no creation time, so nothing varies with the clock. */
export function forgeImageConfig(config: ImageRuntimeConfig, diffIds: readonly string[]): object {
  const runtime: Record<string, unknown> = {};
  if (config.user !== undefined) runtime.User = config.user;
  if (config.env !== undefined) runtime.Env = config.env;
  if (config.entrypoint !== undefined) runtime.Entrypoint = config.entrypoint;
  if (config.cmd !== undefined) runtime.Cmd = config.cmd;
  if (config.workingDir !== undefined) runtime.WorkingDir = config.workingDir;
  return { architecture: "amd64", os: "linux", config: runtime, rootfs: { type: "layers", diff_ids: diffIds } };
}

/** The members of the outer archive: the layout's files and blobs, sorted like every tar here. */
function layoutMembers(index: Blob, blobs: readonly Blob[]): LayerMember[] {
  const file = (path: string, blob: Blob): LayerMember => ({
    path,
    type: "file",
    mode: 0o644,
    uid: 0,
    gid: 0,
    size: blob.size,
    content: blob.data,
  });
  const dir = (path: string): LayerMember => ({ path, type: "dir", mode: 0o755, uid: 0, gid: 0, size: 0 });
  const unique = new Map(blobs.map((blob) => [blob.digest, blob]));
  const members = [
    dir("blobs"),
    dir("blobs/sha256"),
    ...[...unique.values()].map((blob) => file(`blobs/sha256/${blob.digest.slice("sha256:".length)}`, blob)),
    file("index.json", index),
    file("oci-layout", jsonBlob({ imageLayoutVersion: "1.0.0" })),
  ];
  return members.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Writes the uncompressed tar of `members` (the outer archive) to `file`; returns its size. */
async function writeTar(file: string, members: readonly LayerMember[]): Promise<number> {
  let bytes = 0;
  await pipeline(async function* () {
    for (const item of members) {
      yield tarHeader(item);
      if (Buffer.isBuffer(item.content)) yield item.content;
      else if (item.content !== undefined) yield* createReadStream(item.content);
      yield tarPadding(item.size);
      bytes += 512 + item.size + tarPadding(item.size).length;
    }
    yield TAR_END;
    bytes += TAR_END.length;
  }, createWriteStream(file));
  return bytes;
}

/**
 * Writes the OCI image archive of `spec` to `file` (through a temporary file, renamed at the end,
 * so a failure never leaves a partial archive under that name).
 */
export async function writeImageArchive(file: string, spec: ImageSpec): Promise<ImageArchive> {
  const work = await mkdtemp(join(tmpdir(), "liqo-image-"));
  const partial = join(dirname(file), `.${file.split("/").pop()}.partial`);
  try {
    const layers: (LayerBlob & { file: string })[] = [];
    for (const [i, entries] of spec.layers.entries()) {
      const layerFile = join(work, `layer-${i}`);
      layers.push({ ...(await writeLayer(layerFile, await layerMembers(entries))), file: layerFile });
    }
    const config = jsonBlob(
      forgeImageConfig(
        spec.config,
        layers.map((layer) => layer.diffId),
      ),
    );
    const manifest = jsonBlob({
      schemaVersion: 2,
      mediaType: MEDIA.manifest,
      config: { mediaType: MEDIA.config, digest: config.digest, size: config.size },
      layers: layers.map((layer) => ({ mediaType: MEDIA.layer, digest: layer.digest, size: layer.size })),
    });
    const annotations = {
      "io.containerd.image.name": spec.reference,
      "org.opencontainers.image.ref.name": spec.reference,
    };
    const index = jsonBlob({
      schemaVersion: 2,
      mediaType: MEDIA.index,
      manifests: [{ mediaType: MEDIA.manifest, digest: manifest.digest, size: manifest.size, annotations }],
    });
    const blobs = [
      config,
      manifest,
      ...layers.map((layer) => ({ digest: layer.digest, size: layer.size, data: layer.file })),
    ];
    const bytes = await writeTar(partial, layoutMembers(index, blobs));
    await rename(partial, file);
    const uncompressedBytes = layers.reduce((sum, layer) => sum + layer.uncompressedSize, 0);
    const sizes = layers.map(({ digest, size, uncompressedSize }) => ({ digest, size, uncompressedSize }));
    return { reference: spec.reference, digest: manifest.digest, bytes, uncompressedBytes, layers: sizes };
  } finally {
    await rm(work, { recursive: true, force: true });
    await rm(partial, { force: true });
  }
}
