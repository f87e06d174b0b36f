/** Work on many objects at once, but not all at once: as many kubelet workers would, each waiting on an API server. */

/** How many pods a pass works on at once, as many as a kubelet has workers, on either side. */
export const POD_WORKERS = 8;

/** `work` on every item, at most `limit` at once; resolves the results in the items' order, or rejects with the first failure. */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
