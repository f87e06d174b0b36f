/**
 * Locks between processes of one machine: a `flock` (util-linux) child process holds the lock on a
 * file for as long as its stdin stays open. The kernel releases a flock when its holder exits, so a
 * lock never outlives the process that took it, even one killed with SIGKILL (its end of the pipe
 * closes, the holder exits): no stale lock file to guess about, no timing.
 */
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

/** A lock taken with {@link lockFile}. */
export interface FileLock {
  /** Lets the lock go and resolves once it is free for others. Calling it again does nothing. */
  release(): Promise<void>;
}

/**
 * Waits until this process holds the lock on `file` (created, with its directory, if missing) and
 * returns it. `shared` locks may be held by many at once, an `exclusive` one by one holder alone.
 */
export function lockFile(file: string, mode: "exclusive" | "shared" = "exclusive"): Promise<FileLock> {
  mkdirSync(dirname(file), { recursive: true });
  // The holder says "locked" once it has the lock, then waits for its stdin to close.
  const holder = spawn("flock", [`--${mode}`, file, "-c", "echo locked; exec cat >/dev/null"], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  holder.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => holder.once("close", () => resolve()));
  const release = async (): Promise<void> => {
    holder.stdin.end();
    await exited;
  };
  return new Promise((resolve, reject) => {
    holder.stdout.once("data", () => resolve({ release }));
    holder.once("error", (error) =>
      reject(new Error(`cannot lock ${file}: flock (util-linux) did not start: ${error.message}`)),
    );
    holder.once("exit", (code) =>
      reject(new Error(`cannot lock ${file}: flock exited ${code ?? "on a signal"}: ${stderr.trim() || "no output"}`)),
    );
  });
}

/** Runs `body` holding the exclusive lock on `file`, and lets it go afterwards, also when `body` fails. */
export async function withFileLock<T>(file: string, body: () => Promise<T>): Promise<T> {
  const lock = await lockFile(file);
  try {
    return await body();
  } finally {
    await lock.release();
  }
}
