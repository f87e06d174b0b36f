/**
 * A lab's state file, `lab.json`: read, written whole, or updated in place. Three kinds of writer
 * share it (the `clusters` CLI, and each cluster's supervisor recording a restarted process), so a
 * write replaces the file atomically (readers never see half of one) and an update reads, changes
 * and writes under a lock file, so that no writer loses another's change. Loads nothing heavy:
 * the supervisor uses it. What the file records ({@link LabState}) is declared here, below
 * `lab.ts` and the supervisor, which both read and write it.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ProcessRecord } from "../host/processes.js";
import type { ConnectivityProfile } from "./connectivity.js";
import type { Launch } from "./control-plane.js";
import type { LabPlan, PlannedCluster } from "./plan.js";

/** One running cluster of a lab, as recorded in the lab's state file. */
export interface ClusterState extends PlannedCluster {
  /** Admin kubeconfig that works from the host. */
  readonly kubeconfig: string;
  /** API server URL as the host reaches it. */
  readonly apiServerUrl: string;
  /** The agent's auth service URL as the host and other clusters reach it (open profile). */
  readonly authUrl: string;
  /** Processes started for this cluster, in start order; a restarted one replaces its record. */
  readonly processes: ProcessRecord[];
  /** How each process was started, by name: what the supervisor runs again when it exits. */
  readonly launches: Record<string, Launch>;
  /** The cluster's supervisor, once started (the last thing `up` does). */
  supervisor?: ProcessRecord;
}

/** Whether `cluster` runs the project's agent as a host process (a lab made with `hostAgent`), not as pods. */
export function runsHostAgent(cluster: Pick<ClusterState, "launches">): boolean {
  return "agent" in cluster.launches;
}

/** A lab as recorded in its state file. */
export interface LabState extends Omit<LabPlan, "clusters"> {
  /** Directory of this lab's files. */
  readonly dir: string;
  /** Current connectivity profile. */
  profile: ConnectivityProfile;
  /** The node lifecycle controller's grace period the clusters run with. */
  readonly nodeMonitorGracePeriodSeconds: number;
  /** The wireguard-go executable the agents' gateways run, if not the one on PATH. */
  readonly wireguardGo?: string;
  /** False when the agents run no gateway (see LabOptions.hostGateway). @default true */
  readonly hostGateway?: boolean;
  /** Whether the clusters run the agent as a host process (see LabOptions.hostAgent); absent in states written before it was recorded, which all did. */
  readonly hostAgent?: boolean;
  /** The clusters, in creation order. */
  readonly clusters: ClusterState[];
}

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
