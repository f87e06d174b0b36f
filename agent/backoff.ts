/**
 * The one backoff of everything that retries: the agent's loops and watches, the gateway's start of
 * wireguard-go, the in-band advance, and the local clusters' supervisor. Capped exponential
 * (1 s, 2 s, 4 s … 30 s by default) with a little jitter, so that many retries after one shared
 * fault (an API server that restarted) do not all come back in the same instant.
 *
 * Reporting without flooding: a retry says why it waits when the reason changes and each time
 * the pause grows; once at the cap with the same reason it is silent, and it says so once when
 * it has recovered. Pure: the clock and the random source are given.
 */

/** How a retry backs off. */
export interface BackoffPolicy {
  /** Pause after the first failure. */
  readonly initialMs: number;
  /** No pause is longer. */
  readonly maxMs: number;
  /** How much each failure multiplies the pause. @default 2 */
  readonly factor?: number;
  /**
   * Share of the pause taken off at random (0: none; 0.2: the pause lies in [0.8 d, d]). Never
   * added, so the cap holds.
   * @default 0.2
   */
  readonly jitter?: number;
}

/** The agent's backoff: 1 s, 2 s, 4 s … capped at 30 s, as client-node's list-watch does. */
export const AGENT_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 30_000 };

/** The pause after `failures` consecutive failures, before jitter: `initialMs · factor^(failures-1)`, capped. */
export function backoffStepMs(policy: BackoffPolicy, failures: number): number {
  const raw = policy.initialMs * (policy.factor ?? 2) ** Math.max(0, failures - 1);
  return Math.min(policy.maxMs, raw);
}

/** The pause after `failures` consecutive failures, jitter taken off with `random` (in [0, 1)). */
export function backoffDelayMs(policy: BackoffPolicy, failures: number, random: () => number = Math.random): number {
  const step = backoffStepMs(policy, failures);
  return Math.round(step * (1 - (policy.jitter ?? 0.2) * random()));
}

/** What one failure decided. */
export interface RetryDecision {
  /** How long to wait before the next attempt. */
  readonly delayMs: number;
  /** Consecutive failures so far, this one included. */
  readonly failures: number;
  /** A line to report (reason, attempt, pause), or undefined when it would repeat the last one. */
  readonly report: string | undefined;
}

/**
 * One retrying thing's backoff and what it last reported. Call {@link failed} on each failure
 * and {@link succeeded} on success; {@link dueAt} says when the next attempt may run.
 */
export class Backoff {
  private failures = 0;
  private lastReason: string | undefined;
  private lastStep = 0;
  private nextAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly label: string,
    private readonly policy: BackoffPolicy = AGENT_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {}

  /** Records a failure at `now` (ms) for `reason`; resolves the pause and whether to report it. */
  failed(reason: string, now: number): RetryDecision {
    this.failures += 1;
    const step = backoffStepMs(this.policy, this.failures);
    const delayMs = backoffDelayMs(this.policy, this.failures, this.random);
    this.nextAt = now + delayMs;
    const news = reason !== this.lastReason || step > this.lastStep;
    this.lastReason = reason;
    this.lastStep = step;
    const report = news
      ? `${this.label}: ${reason} (attempt ${this.failures}, retry in ${formatSeconds(delayMs)})`
      : undefined;
    return { delayMs, failures: this.failures, report };
  }

  /** Records a success; resolves a line saying it recovered, if it had been failing. */
  succeeded(): string | undefined {
    const had = this.failures;
    this.failures = 0;
    this.lastReason = undefined;
    this.lastStep = 0;
    this.nextAt = Number.NEGATIVE_INFINITY;
    return had > 0 ? `${this.label}: recovered after ${had} failed attempt${had === 1 ? "" : "s"}` : undefined;
  }

  /** Consecutive failures so far. */
  get failureCount(): number {
    return this.failures;
  }

  /** When (ms, the clock given to {@link failed}) the next attempt may run; -Infinity when not backing off. */
  get dueAt(): number {
    return this.nextAt;
  }
}

/** `1.5 s`, `30 s`: a pause as a person reads it. */
function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
