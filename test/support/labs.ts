/**
 * Local clusters for tests. One shared lab (clusters `a` and `b`, distinct pod CIDRs) serves every
 * suite that needs no special topology: the first suite that asks starts it, later suites find it
 * healthy and reuse it, and the global teardown removes it. Suites that need their own topology
 * make a private lab with a unique name and remove it in `finally`.
 */
import { randomBytes } from "node:crypto";
import { downLab, upLab, type ClusterRequest, type LabOptions, type LabState } from "../../local-cluster/lab.js";

/** Lab state of every test run lives apart from the labs a developer may have up. */
export const TEST_LAB_ROOT = process.env["LIQO_TEST_LAB_ROOT"] ?? "/tmp/pulumi-liqo-test-labs";

/** Name of the lab shared by the suites of one run. */
export const SHARED_LAB = "shared";

const quiet = (): void => undefined;

/** The shared lab, started on first use. */
export function sharedLab(): Promise<LabState> {
  return upLab([{ name: "a" }, { name: "b" }], { name: SHARED_LAB, root: TEST_LAB_ROOT, log: quiet });
}

/** A lab name no other test uses: `t` and six random hex digits. */
export function uniqueLabName(): string {
  return `t${randomBytes(3).toString("hex")}`;
}

/**
 * Runs `body` with a private lab of `clusters`, and removes the lab afterwards, also when `body`
 * or the lab's start fails.
 */
export async function withLab<T>(clusters: readonly ClusterRequest[], options: LabOptions, body: (lab: LabState) => Promise<T>): Promise<T> {
  const name = options.name ?? uniqueLabName();
  try {
    const lab = await upLab(clusters, { log: quiet, ...options, name, root: TEST_LAB_ROOT });
    return await body(lab);
  } finally {
    await downLab(name, TEST_LAB_ROOT);
  }
}
