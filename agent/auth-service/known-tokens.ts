/**
 * The ids of the peering tokens a provider holds, as the auth service last listed them. A caller
 * that names one of them is charged to that token's failure budget instead of its address's (see
 * callers.ts), so that a stranger flooding from behind the same address (a NodePort Service's
 * masquerade, a NAT) cannot lock a consumer out. Listing all ids at most once per interval keeps
 * the cost of a flood of made-up ids at one list call per interval, whatever its rate.
 */

/** Knobs of {@link KnownTokenIds}. */
export interface KnownTokenIdsOptions {
  /** Lists the ids of the tokens recorded now. */
  readonly list: () => Promise<readonly string[]>;
  /** Current time in ms. */
  readonly now: () => number;
  /** Least time between two lists: an unknown id asked for sooner is answered from the last one. @default 1000 */
  readonly minRefreshMs?: number;
  /** Told when a list fails (the last ids stay in use). */
  readonly onListFailure?: (error: unknown) => void;
}

/** The token ids last listed, refreshed on demand when asked for one it does not know. */
export class KnownTokenIds {
  private ids: ReadonlySet<string> = new Set();
  private listedAt = Number.NEGATIVE_INFINITY;
  private listing: Promise<void> | undefined;
  private readonly minRefreshMs: number;

  constructor(private readonly options: KnownTokenIdsOptions) {
    this.minRefreshMs = options.minRefreshMs ?? 1_000;
  }

  /** Whether `tokenId` is a token's id; lists again first when it is not known and the last list is old enough. Never rejects. */
  async has(tokenId: string): Promise<boolean> {
    if (this.ids.has(tokenId)) return true;
    if (this.options.now() - this.listedAt >= this.minRefreshMs) await this.refresh();
    return this.ids.has(tokenId);
  }

  /** One list at a time: callers arriving while it runs share it. */
  private refresh(): Promise<void> {
    this.listing ??= this.options
      .list()
      .then(
        (ids) => void (this.ids = new Set(ids)),
        (error: unknown) => this.options.onListFailure?.(error),
      )
      .finally(() => {
        // A failed list counts too: the API server is not asked again before the interval.
        this.listedAt = this.options.now();
        this.listing = undefined;
      });
    return this.listing;
  }
}
