/**
 * The ustar headers of a tar stream, written by our own code so that the same entries always give
 * the same bytes: no clock, no user names, no host file metadata except what the caller passes.
 * Image layers and the OCI archive around them both use it.
 */

/** One member of a tar stream, already normalized (see oci-archive.ts). */
export interface TarHeader {
  /** Path inside the archive, relative, no leading `/` or `./`, no trailing `/`. */
  readonly path: string;
  /** What the member is. */
  readonly type: "file" | "dir" | "symlink";
  /** Permission bits (for example 0o755). */
  readonly mode: number;
  /** Owner user id. */
  readonly uid: number;
  /** Owner group id. */
  readonly gid: number;
  /** Byte count of a file's content; 0 for directories and symlinks. */
  readonly size: number;
  /** A symlink's target. */
  readonly target?: string;
}

/** Size of a tar block: headers and the padding of every content are multiples of it. */
export const BLOCK = 512;

/** The end of a tar stream: two zero blocks. */
export const TAR_END = Buffer.alloc(2 * BLOCK);

const TYPE_FLAG = { file: "0", symlink: "2", dir: "5" } as const;

/** Writes `value` as zero-padded octal in a field of `width` bytes (the last one NUL). */
function octal(block: Buffer, offset: number, width: number, value: number, what: string, path: string): void {
  const digits = value.toString(8).padStart(width - 1, "0");
  if (digits.length > width - 1 || value < 0 || !Number.isInteger(value)) {
    throw new Error(`tar entry ${path}: ${what} ${value} does not fit a ustar header`);
  }
  block.write(digits, offset, width - 1, "ascii");
}

/** Splits a path into ustar's prefix (155 bytes) and name (100 bytes) fields, at a `/`. */
function splitPath(path: string): { prefix: string; name: string } {
  if (Buffer.byteLength(path) <= 100) return { prefix: "", name: path };
  for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return { prefix, name };
  }
  throw new Error(`tar entry ${path}: path too long for a ustar header (name 100, prefix 155 bytes)`);
}

/** The 512-byte ustar header of `entry`, with mtime 0 and empty user and group names. */
export function tarHeader(entry: TarHeader): Buffer {
  const block = Buffer.alloc(BLOCK);
  const { prefix, name } = splitPath(entry.type === "dir" ? `${entry.path}/` : entry.path);
  block.write(name, 0, 100, "utf8");
  octal(block, 100, 8, entry.mode & 0o7777, "mode", entry.path);
  octal(block, 108, 8, entry.uid, "uid", entry.path);
  octal(block, 116, 8, entry.gid, "gid", entry.path);
  octal(block, 124, 12, entry.size, "size", entry.path);
  octal(block, 136, 12, 0, "mtime", entry.path);
  block.write(TYPE_FLAG[entry.type], 156, 1, "ascii");
  if (entry.target !== undefined) {
    if (Buffer.byteLength(entry.target) > 100)
      throw new Error(`tar entry ${entry.path}: symlink target longer than 100 bytes`);
    block.write(entry.target, 157, 100, "utf8");
  }
  block.write("ustar\u000000", 257, 8, "ascii");
  block.write(prefix, 345, 155, "utf8");
  // The checksum is computed with its own field read as eight spaces.
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, "0")}\u0000 `, 148, 8, "ascii");
  return block;
}

/** The zero bytes that pad a content of `size` bytes to a whole block. */
export function tarPadding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}
