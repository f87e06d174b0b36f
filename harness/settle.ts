/** Waiting for several things at once, as the tests and the benchmark do for clusters of one lab. */

/**
 * Runs every promise to its end; returns their values in order, or throws the first failure once
 * all have settled (so that no work of a failed batch is still running when the caller cleans up).
 */
export async function allOrFirstFailure<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}
