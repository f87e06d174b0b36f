/**
 * One image layer: a gzip'd tar of entries, written so that the same entries give the same bytes.
 * Entries are sorted by path, missing parent directories are added, mtime is 0, owners are 0 unless
 * the entry says otherwise, and the gzip header carries no name, no time and a fixed OS byte.
 * The tar is streamed through deflate into a file, so a 100 MB binary never sits in memory twice.
 */
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { constants, createDeflateRaw, crc32 } from "node:zlib";
import { tarHeader, tarPadding, TAR_END, type TarHeader } from "./tar.js";

/** One file, directory or symlink of an image layer. */
export interface ImageEntry {
  /** Absolute or relative path inside the image, for example `/usr/local/bin/node`. */
  readonly path: string;
  /** What the entry is. */
  readonly type: "file" | "dir" | "symlink";
  /**
   * Permission bits.
   * @default 0o755 for directories and for files copied from an executable host file, 0o644 for other files, 0o777 for symlinks
   */
  readonly mode?: number;
  /** Owner user id. @default 0 */
  readonly uid?: number;
  /** Owner group id. @default 0 */
  readonly gid?: number;
  /** A file's content: the bytes (a Buffer), or the path of a host file to copy (a string; symlinks are followed). */
  readonly content?: Buffer | string;
  /** A symlink's target, as the link stores it. */
  readonly target?: string;
}

/** An entry ready to write: normalized path, every field decided, its size known. */
export interface LayerMember extends TarHeader {
  /** Where a file's bytes come from. */
  readonly content?: Buffer | string;
}

/** What writing a layer produced. */
export interface LayerBlob {
  /** sha256 of the compressed layer (its blob digest), `sha256:<hex>`. */
  readonly digest: string;
  /** sha256 of the uncompressed tar (the config's diff_id), `sha256:<hex>`. */
  readonly diffId: string;
  /** Compressed size in bytes. */
  readonly size: number;
  /** Uncompressed tar size in bytes. */
  readonly uncompressedSize: number;
}

/** `path` without leading `/` or `./` and without a trailing `/`; throws on empty, `.` or `..` components. */
export function normalizePath(path: string): string {
  const parts = path.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.length === 0 || parts.includes(".."))
    throw new Error(`image entry ${JSON.stringify(path)}: not a path inside the image`);
  return parts.join("/");
}

/**
 * The layer's members in write order: paths normalized, sorted bytewise (a parent always sorts
 * before its children), missing parent directories added as root-owned 0o755. Host files are
 * stat'ed for their size (and default mode). Throws naming the path on a duplicate or a missing field.
 */
export async function layerMembers(entries: readonly ImageEntry[]): Promise<LayerMember[]> {
  const members = new Map<string, LayerMember>();
  for (const entry of entries) {
    const path = normalizePath(entry.path);
    if (members.has(path)) throw new Error(`image entry /${path}: listed twice in one layer`);
    members.set(path, await member(path, entry));
  }
  for (const path of [...members.keys()]) {
    for (let i = path.indexOf("/"); i > 0; i = path.indexOf("/", i + 1)) {
      const parent = path.slice(0, i);
      if (!members.has(parent))
        members.set(parent, { path: parent, type: "dir", mode: 0o755, uid: 0, gid: 0, size: 0 });
    }
  }
  return [...members.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function member(path: string, entry: ImageEntry): Promise<LayerMember> {
  const owner = { uid: entry.uid ?? 0, gid: entry.gid ?? 0 };
  if (entry.type === "dir") return { path, type: "dir", mode: entry.mode ?? 0o755, ...owner, size: 0 };
  if (entry.type === "symlink") {
    if (!entry.target) throw new Error(`image entry /${path}: a symlink needs a target`);
    return { path, type: "symlink", mode: entry.mode ?? 0o777, ...owner, size: 0, target: entry.target };
  }
  if (entry.content === undefined) throw new Error(`image entry /${path}: a file needs content`);
  if (Buffer.isBuffer(entry.content)) {
    return {
      path,
      type: "file",
      mode: entry.mode ?? 0o644,
      ...owner,
      size: entry.content.length,
      content: entry.content,
    };
  }
  const host = await stat(entry.content).catch((error: NodeJS.ErrnoException) => {
    throw new Error(`image entry /${path}: cannot read host file ${entry.content}: ${error.code ?? error.message}`);
  });
  const mode = entry.mode ?? (host.mode & 0o111 ? 0o755 : 0o644);
  return { path, type: "file", mode, ...owner, size: host.size, content: entry.content };
}

/** The tar stream of `members`, chunk by chunk; checks that each host file still has the size it was stat'ed with. */
async function* tarStream(members: readonly LayerMember[]): AsyncGenerator<Buffer> {
  for (const item of members) {
    yield tarHeader(item);
    if (item.type !== "file") continue;
    if (Buffer.isBuffer(item.content)) {
      yield item.content;
    } else {
      let read = 0;
      for await (const chunk of createReadStream(item.content as string)) {
        read += (chunk as Buffer).length;
        if (read > item.size) break;
        yield chunk as Buffer;
      }
      if (read !== item.size)
        throw new Error(`image entry /${item.path}: host file ${item.content} changed size while being read`);
    }
    yield tarPadding(item.size);
  }
  yield TAR_END;
}

/**
 * gzip's fixed 10-byte header: deflate, no flags, mtime 0, no extra flags, OS 255 ("unknown"),
 * so that the bytes do not depend on the clock or on the system that wrote them.
 */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]);

/** A pass-through stream that feeds every chunk to `see`. */
function tap(see: (chunk: Buffer) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      see(chunk);
      done(null, chunk);
    },
  });
}

/** Writes the gzip'd tar of `members` to `file` and returns its digests and sizes. */
export async function writeLayer(file: string, members: readonly LayerMember[]): Promise<LayerBlob> {
  const tarHash = createHash("sha256");
  let crc = 0;
  let uncompressedSize = 0;
  const gzHash = createHash("sha256");
  let size = 0;
  await pipeline(
    tarStream(members),
    tap((chunk) => {
      tarHash.update(chunk);
      crc = crc32(chunk, crc);
      uncompressedSize += chunk.length;
    }),
    createDeflateRaw({ level: constants.Z_BEST_COMPRESSION, memLevel: 9 }),
    async function* (deflated: AsyncIterable<Buffer>) {
      yield GZIP_HEADER;
      yield* deflated;
      // The trailer: CRC-32 and length (mod 2^32) of the uncompressed data, little-endian.
      const trailer = Buffer.alloc(8);
      trailer.writeUInt32LE(crc >>> 0, 0);
      trailer.writeUInt32LE(uncompressedSize % 2 ** 32, 4);
      yield trailer;
    },
    tap((chunk) => {
      gzHash.update(chunk);
      size += chunk.length;
    }),
    createWriteStream(file),
  );
  return {
    digest: `sha256:${gzHash.digest("hex")}`,
    diffId: `sha256:${tarHash.digest("hex")}`,
    size,
    uncompressedSize,
  };
}
