/**
 * One deadline per operation (a resource's create, update or delete): started once from the
 * operation's timeout, then taken by every step it runs, so that the steps share one end instead of
 * each counting its own. A step that waits hands {@link Deadline.left} and {@link Deadline.signal}
 * to its wait (see poll.ts); a step that calls out caps its call at what is left.
 */

/**
 * How long an operation may take unless its `timeoutSeconds` input says otherwise: peering (the
 * provider's agent answering, the virtual node turning Ready) and a tunnel's handshake take
 * seconds; a cluster's install waits for its agent, which may have to pull its image.
 */
export const DEFAULT_TIMEOUT_SECONDS = 300;

/** The time of one operation, shared by its steps. */
export interface Deadline {
  /** The operation's whole timeout, as it was started with. */
  readonly timeoutMs: number;
  /** Aborts when the deadline passes: every wait and call of the operation takes it. */
  readonly signal: AbortSignal;
  /**
   * Milliseconds left, at least 1: a step reached at the deadline still makes its one attempt, and
   * fails with its own message (naming what it waited for) rather than a bare "no time left".
   */
  left(): number;
}

/** Where a deadline reads the time and gets its signal; injectable so that tests pass no real time. */
export interface DeadlineClock {
  /** Current time in ms. @default Date.now */
  readonly now: () => number;
  /** A signal that aborts after `ms`. @default AbortSignal.timeout */
  readonly abortAfter: (ms: number) => AbortSignal;
}

const realClock: DeadlineClock = { now: Date.now, abortAfter: (ms) => AbortSignal.timeout(ms) };

/** Starts the deadline of an operation that may take `timeoutMs` from now. */
export function startDeadline(timeoutMs: number, clock: DeadlineClock = realClock): Deadline {
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new RangeError(`deadline: the timeout must be a positive number of milliseconds, got ${timeoutMs}`);
  const end = clock.now() + timeoutMs;
  return {
    timeoutMs,
    signal: clock.abortAfter(timeoutMs),
    left: () => Math.max(1, end - clock.now()),
  };
}
