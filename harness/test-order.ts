/**
 * The order in which Jest's workers take the test files (test/sequencer.js asks): most of the
 * suite's time is waiting, every worker has its own shared lab (harness/labs.ts), so the files are
 * independent and the longest go first, so that no long file starts last while the other worker
 * is idle. Pure, so it is unit-tested.
 */

/** A test file to place. */
export interface TimedFile<T> {
  /** What the caller orders (Jest's test object). */
  readonly test: T;
  /** How long the file lasts, in seconds (its last run's, or a known figure). */
  readonly seconds: number;
}

/** Longest first (list scheduling: Jest hands the files out in this order as its workers come free); ties keep their order. */
export function testOrder<T>(files: readonly TimedFile<T>[]): TimedFile<T>[] {
  return [...files].sort((a, b) => b.seconds - a.seconds);
}
