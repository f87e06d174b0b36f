/**
 * Slows down guessing: a source that was refused too often within a window is answered 429 until
 * its oldest refusal leaves the window. Pure (the clock is passed in), so it is tested without time.
 */

/** Knobs of a {@link FailureLimiter}. */
export interface FailureLimiterOptions {
  /** Refusals allowed per source within the window; the next request is turned away. @default 5 */
  readonly maxFailures?: number;
  /** Length of the sliding window. @default 60000 */
  readonly windowMs?: number;
  /** Sources tracked at most; beyond, the oldest are forgotten (bounds memory under a flood). @default 10000 */
  readonly maxSources?: number;
}

/** Counts refusals per source (an IP address) in a sliding window. */
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

  /** Milliseconds until `source` may try again, or undefined when it may try now. */
  blockedFor(source: string, now: number): number | undefined {
    const recent = this.recent(source, now);
    if (recent.length < this.maxFailures) return undefined;
    return Math.max(1, recent[recent.length - this.maxFailures]! + this.windowMs - now);
  }

  /** Records one refusal of `source`. */
  recordFailure(source: string, now: number): void {
    const recent = this.recent(source, now);
    recent.push(now);
    // Re-insert so that Map order is least-recently-failed first, for eviction.
    this.failures.delete(source);
    this.failures.set(source, recent);
    while (this.failures.size > this.maxSources) this.failures.delete(this.failures.keys().next().value!);
  }

  private recent(source: string, now: number): number[] {
    const kept = (this.failures.get(source) ?? []).filter((at) => at > now - this.windowMs);
    if (kept.length === 0) this.failures.delete(source);
    else this.failures.set(source, kept);
    return kept;
  }
}
