/**
 * Slows down guessing: a caller (an address, a token id, a consumer: see callers.ts) that was refused
 * too often within a window is answered 429 until its oldest refusal leaves the window. Pure (the clock is passed in), so it is tested without time.
 */

/** Knobs of a {@link FailureLimiter}. */
export interface FailureLimiterOptions {
  /** Refusals allowed per key within the window; the next request is turned away. @default 5 */
  readonly maxFailures?: number;
  /** Length of the sliding window. @default 60000 */
  readonly windowMs?: number;
  /** Keys tracked at most; beyond, the oldest are forgotten (bounds memory under a flood). @default 10000 */
  readonly maxSources?: number;
}

/** Counts refusals per key (a caller: see callers.ts) in a sliding window. */
export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();
  private readonly maxFailures: number;
  private readonly windowMs: number;
  private readonly maxSources: number;

  constructor(options: FailureLimiterOptions = {}) {
    this.maxFailures = options.maxFailures ?? 5;
    this.windowMs = options.windowMs ?? 60_000;
    this.maxSources = options.maxSources ?? 10_000;
  }

  /** Milliseconds until `key` may try again, or undefined when it may try now. */
  blockedFor(key: string, now: number): number | undefined {
    const recent = this.recent(key, now);
    if (recent.length < this.maxFailures) return undefined;
    return Math.max(1, recent[recent.length - this.maxFailures]! + this.windowMs - now);
  }

  /** Records one refusal of `key`. */
  recordFailure(key: string, now: number): void {
    const recent = this.recent(key, now);
    recent.push(now);
    // Re-insert so that Map order is least-recently-failed first, for eviction.
    this.failures.delete(key);
    this.failures.set(key, recent);
    while (this.failures.size > this.maxSources) this.failures.delete(this.failures.keys().next().value!);
  }

  private recent(key: string, now: number): number[] {
    const kept = (this.failures.get(key) ?? []).filter((at) => at > now - this.windowMs);
    if (kept.length === 0) this.failures.delete(key);
    else this.failures.set(key, kept);
    return kept;
  }
}
