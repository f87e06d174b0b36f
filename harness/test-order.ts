/**
 * The order in which Jest's workers take the test files (test/sequencer.js asks). Most of the
 * suite's time is waiting, and every worker has its own shared lab (harness/labs.ts), so the files
 * are independent. Two rules:
 * - the files that use the shared lab go first, the others (private labs, no lab) after them: Jest
 *   hands the files out in this order as its workers come free, so a worker that takes one of the
 *   others will never need its shared lab again and takes it down (test/setup-after-env.ts). Two
 *   idle clusters cost about 15 % of a core, and a third of the suite's time is in the others;
 * - within each group the longest go first, so that no long file starts last while the other
 *   workers are idle.
 * Pure, so it is unit-tested.
 */

/** A test file to place. */
export interface TimedFile<T> {
  /** What the caller orders (Jest's test object). */
  readonly test: T;
  /** How long the file lasts, in seconds (its last run's, or a known figure). */
  readonly seconds: number;
  /** Whether the file uses its worker's shared lab ({@link usesSharedLab} of its source). */
  readonly usesSharedLab: boolean;
}

/**
 * Whether a test file's source uses the worker's shared lab: it calls `sharedLab`,
 * `withSharedLabProfile` or a helper named `…OnSharedLab` (test/support), or hands `--shared-lab`
 * to a child process (the benchmark's sections). Letting the lab go (`releaseSharedLab`,
 * `retireSharedLab`) is no use. Either mistake only costs time: a file taken for a user keeps the
 * lab up, one taken for a non-user that uses it anyway starts it again.
 */
export function usesSharedLab(source: string): boolean {
  return /\b(?:sharedLab|withSharedLabProfile|\w+OnSharedLab)\(|["']--shared-lab["']/.test(source);
}

/** The shared lab's users first, then the others; longest first within each; ties keep their order. */
export function testOrder<T>(files: readonly TimedFile<T>[]): TimedFile<T>[] {
  const longestFirst = (group: readonly TimedFile<T>[]): TimedFile<T>[] =>
    [...group].sort((a, b) => b.seconds - a.seconds);
  return [
    ...longestFirst(files.filter((f) => f.usesSharedLab)),
    ...longestFirst(files.filter((f) => !f.usesSharedLab)),
  ];
}
