/**
 * Where a section of the benchmark gets its lab. By default each section makes a private lab of the
 * clusters it asks for, and removes it afterwards. The suite's smoke run (test/integration/bench-smoke)
 * passes `--shared-lab` instead: a section that asks for plain clusters `a` and/or `b` then runs on the
 * test run's shared lab (harness/labs.ts), which is already up, and leaves it as it found it.
 */
import { sharedLab, withLab } from "../harness/labs.js";
import type { ClusterRequest, LabOptions, LabState } from "../local-cluster/lab.js";

/** Runs `body` with a lab of `clusters`, made with `options`. */
export type LabRunner = <T>(
  clusters: readonly ClusterRequest[],
  options: LabOptions,
  body: (lab: LabState) => Promise<T>,
) => Promise<T>;

/** A private lab per section: made for it, removed after it. */
export const privateLabs: LabRunner = withLab;

/** Whether the shared lab (clusters `a` and `b`, default CIDRs and options) serves a request of `clusters` and `options`. */
export function sharedLabServes(clusters: readonly ClusterRequest[], options: LabOptions): boolean {
  const plain = clusters.every((c) => (c.name === "a" || c.name === "b") && Object.keys(c).length === 1);
  return plain && Object.keys(options).length === 0;
}

/** The shared lab where it serves the request; a private lab for the rest (larger meshes, special options). */
export const sharedLabs: LabRunner = async (clusters, options, body) =>
  sharedLabServes(clusters, options) ? body(await sharedLab()) : withLab(clusters, options, body);
