/**
 * Where a section of the benchmark gets its lab. By default each section makes a private lab of the
 * clusters it asks for, and removes it afterwards. The suite's smoke run (test/integration/bench-smoke)
 * passes `--shared-lab` instead: a section that asks for plain clusters `a` and/or `b` then runs on the
 * test run's shared lab (harness/labs.ts), which is already up, and leaves it as it found it. A test
 * that holds a private lab of a section's shape passes `--lab NAME` (see {@link heldLab}).
 */
import { sharedLab, TEST_LAB_ROOT, withLab } from "../harness/labs.js";
import {
  isHealthy,
  readLab,
  sameClusters,
  type ClusterRequest,
  type LabOptions,
  type LabState,
} from "../local-cluster/lab.js";

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

/**
 * Test lab `name`, which a test holds up (test/integration/pods-across lends its lab of two clusters
 * with two nodes each to the gateway-move section): a section runs on it, and leaves it up, when it
 * is up and has the shape the section asks for; otherwise the section fails naming what differs,
 * since starting or replacing a lab someone else holds would pull it from under them.
 */
export function heldLab(name: string): LabRunner {
  return async (clusters, options, body) => {
    const lab = readLab(name, TEST_LAB_ROOT);
    const wanted = `${clusters.map((c) => c.name).join(", ")} with ${options.nodes ?? 1} node(s) each`;
    if (!lab || !isHealthy(lab))
      throw new Error(
        `--lab ${name}: no healthy lab of that name under ${TEST_LAB_ROOT} (this section wants ${wanted})`,
      );
    if (!sameClusters(lab, clusters, options.nodes ?? 1) || lab.profile !== (options.profile ?? "open"))
      throw new Error(`--lab ${name}: its clusters are not the ${wanted}, profile ${options.profile ?? "open"}`);
    return body(lab);
  };
}
