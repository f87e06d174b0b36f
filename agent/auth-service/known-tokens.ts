/**
 * The ids of the peering tokens a provider holds, as the auth service lists them. A caller that
 * names one of them is charged to that token's failure budget instead of its address's (see
 * callers.ts), so that a stranger flooding from behind the same address (a NodePort Service's
 * masquerade, a NAT) cannot lock a consumer out.
 *
 * Two promises meet here:
 * - a flood of made-up ids costs at most one list call per interval, whatever its rate;
 * - a token is recognised from the moment its create returns, whatever else arrives at the same
 *   time. So an id the last list did not have is answered from a list that started after the
 *   request arrived (a quorum read, which sees every create that returned before it): the request
 *   waits for the next list, at most one interval away, and shares it with every request waiting.
 *   Answering from the last list instead would charge a token made a moment ago to the flooded
 *   address, since the flood keeps that list fresh and older than the token.
 */

/** Knobs of {@link KnownTokenIds}. */
export interface KnownTokenIdsOptions {
  /** Lists the ids of the tokens recorded now. */
  readonly list: () => Promise<readonly string[]>;
  /** Current time in ms. */
  readonly now: () => number;
  /** Least time between the starts of two lists. @default 1000 */
  readonly minRefreshMs?: number;
  /** Told when a list fails (the ids listed before stay in use). */
  readonly onListFailure?: (error: unknown) => void;
  /** Waits until the next list may start. @default a timer */
  readonly sleep?: (ms: number) => Promise<void>;
}

const timerSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The token ids listed, listed again (at most once per interval) when asked for one it does not know. */
export class KnownTokenIds {
  private ids: ReadonlySet<string> = new Set();
  /** When the newest list, done, running or waiting for its turn, starts (or started). */
  private newestStart = Number.NEGATIVE_INFINITY;
  /** Settles when that list has ended. */
  private newest: Promise<void> = Promise.resolve();
  private readonly minRefreshMs: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: KnownTokenIdsOptions) {
    this.minRefreshMs = options.minRefreshMs ?? 1_000;
    this.sleep = options.sleep ?? timerSleep;
  }

  /**
   * Whether `tokenId` is a token's id: at once when it is known, else after a list that started
   * no earlier than this call. Never rejects.
   */
  async has(tokenId: string): Promise<boolean> {
    if (this.ids.has(tokenId)) return true;
    await this.listStartingFrom(this.options.now());
    return this.ids.has(tokenId);
  }

  /** A list that starts at `askedAt` or later: the newest one if it does, else the next, one interval after it. */
  private listStartingFrom(askedAt: number): Promise<void> {
    if (this.newestStart >= askedAt) return this.newest;
    const startAt = Math.max(askedAt, this.newestStart + this.minRefreshMs);
    const previous = this.newest;
    this.newestStart = startAt;
    this.newest = previous.then(async () => {
      const wait = startAt - this.options.now();
      if (wait > 0) await this.sleep(wait);
      try {
        this.ids = new Set(await this.options.list());
      } catch (error) {
        this.options.onListFailure?.(error);
      }
    });
    return this.newest;
  }
}
