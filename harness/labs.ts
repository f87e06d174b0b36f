/**
 * Local clusters for the tests and the benchmark (which runs as one "run" of its own, its process
 * id recording the labs it makes). One shared lab per Jest worker of a test run (clusters `a` and `b`,
 * distinct pod CIDRs) serves every suite of that worker that needs no special topology: the first
 * suite that asks starts it, later suites find it healthy and reuse it, and it goes down when the
 * worker takes its first file that does not use it (the test order runs those last) or at the
 * global teardown. (One lab for all workers would have to serve one file at a time, since suites
 * install `Cluster`s on it, peer it and change its profile: its files would then run one after
 * another.) Suites that need their own topology make a private lab with a unique name and remove
 * it in `finally`. Every lab records the run that made it, so a run going on beside this one keeps
 * its labs.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lockFile, withFileLock, type FileLock } from "../host/file-lock.js";
import {
  DEFAULT_LOAD_BALANCER,
  downLab,
  listLabs,
  setProfile,
  upLab,
  type ClusterRequest,
  type LabOptions,
  type LabState,
} from "../local-cluster/lab.js";
import type { ConnectivityProfile } from "../local-cluster/connectivity.js";

/** Lab state of every test run lives apart from the labs a developer may have up. */
export const TEST_LAB_ROOT = process.env["LIQO_TEST_LAB_ROOT"] ?? "/tmp/pulumi-liqo-test-labs";

const quiet = (): void => undefined;

/**
 * One lab starts at a time on this machine, whatever worker or run asks: a start (etcd, API
 * servers, image imports into every node) is the heaviest moment of a lab's life, and several at
 * once on two cores starved components into exiting before the lab was ready. A lab that is up
 * costs little; a start waits for the one before it.
 */
const LAB_START_LOCK = join(TEST_LAB_ROOT, ".locks", "lab-start");

/**
 * Starts (or finds healthy) lab `name` of `clusters`, one start at a time machine-wide. Without a
 * load balancer unless `options` ask for one: a private lab's suite drives its resources on node
 * ports or asks for MetalLB itself, and a load balancer would only add to every private lab's start
 * and idle load. The shared lab asks for the default one ({@link sharedLab}).
 */
function startLab(
  clusters: readonly ClusterRequest[],
  options: LabOptions & { readonly name: string },
): Promise<LabState> {
  return withFileLock(LAB_START_LOCK, () =>
    upLab(clusters, { log: quiet, loadBalancer: "none", ...options, root: TEST_LAB_ROOT }),
  );
}

/** This test run's id (the Jest process, set by test/global-setup.js), or this process. */
function runId(): number {
  return Number(process.env["LIQO_TEST_RUN"] ?? process.pid);
}

const ownerFile = (lab: string): string => join(TEST_LAB_ROOT, ".owners", lab);

/** The locks of a shared lab: `use` is held by the file using it, `start` while it starts or goes down. */
export const LAB_LOCK_KINDS = ["use", "start"] as const;

/** The file of lab `name`'s lock of `kind`. */
export const labLockFile = (name: string, kind: (typeof LAB_LOCK_KINDS)[number]): string =>
  join(TEST_LAB_ROOT, ".locks", `${name}.${kind}`);

/** Records that lab `name` belongs to this run, before it is made, so teardown can tell. */
function claim(name: string): void {
  mkdirSync(join(TEST_LAB_ROOT, ".owners"), { recursive: true });
  writeFileSync(ownerFile(name), String(runId()));
}

/** The run (process id) that made lab `name`, if it recorded one. */
export function labOwner(name: string): number | undefined {
  return existsSync(ownerFile(name)) ? Number(readFileSync(ownerFile(name), "utf8")) : undefined;
}

/** Name of the shared lab of worker `worker` of run `run` (this worker of this run by default). */
export const sharedLabName = (run = runId(), worker = process.env["JEST_WORKER_ID"] ?? "0"): string =>
  `s${run.toString(36)}${worker}`.slice(0, 8);

/**
 * How long a test file's hook may wait for {@link sharedLab}: the lab's first start (behind any
 * other lab's start, one at a time machine-wide) on a loaded machine. A hook that does more adds
 * its own steps' bounds to it.
 */
export const SHARED_LAB_BOUND_MS = 5 * 60_000;

/** This test file's use of the shared lab, once it asked for it (Jest gives each file its own module registry). */
let sharedUse: Promise<FileLock> | undefined;

/**
 * The lab shared by the suites of this worker of this run (clusters `a` and `b`), started on first
 * use. One suite file at a time uses it: the first call of a file waits for the lab to be free and
 * keeps it until {@link releaseSharedLab} (test/setup-after-env.ts calls it after each file), which
 * matters when processes other than Jest's worker ask for it (a test's child processes, the bench).
 * Its clusters have the load balancer a lab gets by default, so that the programs run on it (the
 * examples) keep the default exposure, `LoadBalancer`, as on the clusters users have.
 */
export async function sharedLab(): Promise<LabState> {
  const name = sharedLabName();
  sharedUse ??= lockFile(labLockFile(name, "use"));
  await sharedUse;
  // Also within one file, two calls at once must not both start the lab.
  return withFileLock(labLockFile(name, "start"), async () => {
    claim(name);
    return startLab([{ name: "a" }, { name: "b" }], { name, loadBalancer: DEFAULT_LOAD_BALANCER });
  });
}

/**
 * Runs `body` on the shared lab under connectivity `profile`, and puts the lab back to `open`
 * afterwards, also when `body` fails: a file that needs another profile shares the lab instead of
 * starting one.
 */
export async function withSharedLabProfile<T>(
  profile: ConnectivityProfile,
  body: (lab: LabState) => Promise<T>,
): Promise<T> {
  const lab = await sharedLab();
  await setProfile(lab, profile);
  try {
    return await body(lab);
  } finally {
    await setProfile(lab, "open");
  }
}

/** Lets the next suite file use the shared lab (the lab stays up until the run's global teardown). */
export async function releaseSharedLab(): Promise<void> {
  const held = sharedUse;
  sharedUse = undefined;
  await (await held)?.release();
}

/**
 * How long a file's hook may wait for {@link retireSharedLab}: the lab's removal (about 5 s),
 * behind a start of it that may be under way.
 */
export const RETIRE_SHARED_LAB_BOUND_MS = SHARED_LAB_BOUND_MS + 60_000;

/**
 * Takes this worker's shared lab (or lab `name`) down, if it is up, and removes its owner and
 * lock files: for a file that does not use it
 * (test/setup-after-env.ts). The test order hands out such files only after every file that uses
 * the lab (harness/test-order.ts), so the worker will not need it again, and two idle clusters
 * would cost about 15 % of a core for the rest of the run. A later file that asks for it anyway
 * starts it again.
 */
export async function retireSharedLab(name = sharedLabName()): Promise<void> {
  if (!listLabs(TEST_LAB_ROOT).includes(name)) return;
  const use = await lockFile(labLockFile(name, "use"));
  try {
    await withFileLock(labLockFile(name, "start"), () => downLab(name, TEST_LAB_ROOT));
  } finally {
    await use.release();
  }
  forgetLab(name);
}

/** Removes the owner and lock files of lab `name`, once it is down and no process of its run is left. */
export function forgetLab(name: string): void {
  rmSync(ownerFile(name), { force: true });
  for (const kind of LAB_LOCK_KINDS) rmSync(labLockFile(name, kind), { force: true });
}

/** A lab name no other test uses: `t` and six random hex digits. */
export function uniqueLabName(): string {
  return `t${randomBytes(3).toString("hex")}`;
}

/**
 * Runs `body` with a private lab of `clusters`, and removes the lab afterwards, also when `body`
 * or the lab's start fails.
 */
export async function withLab<T>(
  clusters: readonly ClusterRequest[],
  options: LabOptions,
  body: (lab: LabState) => Promise<T>,
): Promise<T> {
  const name = options.name ?? uniqueLabName();
  claim(name);
  try {
    const lab = await startLab(clusters, { ...options, name });
    return await body(lab);
  } finally {
    await downLab(name, TEST_LAB_ROOT);
    rmSync(ownerFile(name), { force: true });
  }
}

/** A private lab held up across a suite's tests (see {@link holdLab}). */
export interface HeldLab {
  /** The lab, up. */
  readonly lab: LabState;
  /** Lets the lab go and resolves once it is removed (call in `afterAll`). */
  readonly release: () => Promise<void>;
}

/**
 * Starts a private lab, as {@link withLab} does, and keeps it up until `release` is called: for a
 * suite whose tests share one lab (`beforeAll` holds it, `afterAll` releases it). The lab is
 * removed also when its start fails.
 */
export async function holdLab(clusters: readonly ClusterRequest[], options: LabOptions): Promise<HeldLab> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let up!: (state: LabState) => void;
  const ready = new Promise<LabState>((resolve) => (up = resolve));
  const done = withLab(clusters, options, async (state) => {
    up(state);
    await released;
  });
  const lab = await Promise.race([
    ready,
    done.then(() => {
      throw new Error("the lab ended before the tests used it");
    }),
  ]);
  return {
    lab,
    release: async () => {
      release();
      await done;
    },
  };
}
