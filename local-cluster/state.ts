/**
 * A lab's state file, `lab.json`: read, written whole, or updated in place. Three kinds of writer
 * share it (the `clusters` CLI, and each cluster's supervisor recording a restarted process), so a
 * write replaces the file atomically (readers never see half of one) and an update reads, changes
 * and writes under a lock file, so that no writer loses another's change. Loads nothing heavy:
 * the supervisor uses it.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LabState } from "./lab.js";

/** The state file of the lab in directory `dir`. */
export const stateFile = (dir: string): string => join(dir, "lab.json");

/** A lock older than this was left by a writer that died holding it. */
const STALE_LOCK_MS = 5000;

/** Sleeps `ms` without an event loop (the lock is taken by synchronous writers). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `body` holding the lab's lock (a directory: its creation is atomic). */
function withLock<T>(dir: string, body: () => T): T {
  const lock = join(dir, ".lab.lock");
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const age = (() => {
        try {
          return Date.now() - statSync(lock).mtimeMs;
        } catch {
          return 0; // Released meanwhile.
        }
      })();
      if (age > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      else sleepSync(10);
    }
  }
  try {
    return body();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Writes the file whole: to a temporary file first, renamed over the old one. */
function writeAtomically(state: LabState): void {
  const file = stateFile(state.dir);
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(state, null, 2), { mode: 0o600 });
  renameSync(temporary, file);
}

/** Reads the state of the lab in `dir`, or undefined if there is none. */
export function readLabFile(dir: string): LabState | undefined {
  const file = stateFile(dir);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as LabState) : undefined;
}

/** Writes `state` whole (its directory must exist). */
export function saveLab(state: LabState): void {
  withLock(state.dir, () => writeAtomically(state));
}

/**
 * Reads the lab in `dir`, lets `change` modify it, and writes it back, all under the lock.
 * Resolves the state written, or undefined (nothing written) if the lab is gone.
 */
export function updateLab(dir: string, change: (state: LabState) => void): LabState | undefined {
  if (!existsSync(dir)) return undefined;
  return withLock(dir, () => {
    const state = readLabFile(dir);
    if (!state) return undefined;
    change(state);
    writeAtomically(state);
    return state;
  });
}
