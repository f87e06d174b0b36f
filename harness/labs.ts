/**
 * Local clusters for the tests and the benchmark (which runs as one "run" of its own, its process
 * id recording the labs it makes). One shared lab per test run (clusters `a` and `b`, distinct pod CIDRs)
 * serves every suite that needs no special topology: the first suite that asks starts it, later
 * suites find it healthy and reuse it, and the global teardown removes it. Suites that need their
 * own topology make a private lab with a unique name and remove it in `finally`. Every lab records
 * the run that made it, so a run going on beside this one keeps its labs.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { downLab, upLab, type ClusterRequest, type LabOptions, type LabState } from "../local-cluster/lab.js";

/** Lab state of every test run lives apart from the labs a developer may have up. */
export const TEST_LAB_ROOT = process.env["LIQO_TEST_LAB_ROOT"] ?? "/tmp/pulumi-liqo-test-labs";

const quiet = (): void => undefined;

/** This test run's id (the Jest process, set by test/global-setup.js), or this process. */
function runId(): number {
  return Number(process.env["LIQO_TEST_RUN"] ?? process.pid);
}

const ownerFile = (lab: string): string => join(TEST_LAB_ROOT, ".owners", lab);

/** Records that lab `name` belongs to this run, before it is made, so teardown can tell. */
function claim(name: string): void {
  mkdirSync(join(TEST_LAB_ROOT, ".owners"), { recursive: true });
  writeFileSync(ownerFile(name), String(runId()));
}

/** The run (process id) that made lab `name`, if it recorded one. */
export function labOwner(name: string): number | undefined {
  return existsSync(ownerFile(name)) ? Number(readFileSync(ownerFile(name), "utf8")) : undefined;
}

/** The lab shared by the suites of this run (clusters `a` and `b`), started on first use. */
export function sharedLab(): Promise<LabState> {
  const name = `s${runId().toString(36)}`.slice(0, 8);
  claim(name);
  return upLab([{ name: "a" }, { name: "b" }], { name, root: TEST_LAB_ROOT, log: quiet });
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
    const lab = await upLab(clusters, { log: quiet, ...options, name, root: TEST_LAB_ROOT });
    return await body(lab);
  } finally {
    await downLab(name, TEST_LAB_ROOT);
    rmSync(ownerFile(name), { force: true });
  }
}
