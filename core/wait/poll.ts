/**
 * The one way this project waits for a fact: poll a check until it says done, with a deadline and
 * an error that names the step, the object, the endpoint, the timeout and the last state seen.
 */

/** Where a wait happens, for its progress and error messages. */
export interface WaitContext {
  /** The step that waits, e.g. `authentication` or `local cluster a`. */
  readonly step: string;
  /** What is awaited, e.g. `CertificateSigningRequest peer-b`. */
  readonly object: string;
  /** The cluster or endpoint asked, e.g. `https://172.29.1.10:6443`. */
  readonly endpoint: string;
}

/** One look at the awaited fact. */
export type CheckResult<T> =
  | { readonly done: true; readonly value: T }
  | {
      readonly done: false;
      readonly state: string;
      /** Look again no sooner than this (a service's `Retry-After`); the deadline still ends the wait. */
      readonly retryAfterMs?: number;
    }
  | { readonly failed: true; readonly reason: string };

/** `90 s`, or `0.3 s` for waits shorter than ten seconds. */
function formatSeconds(ms: number): string {
  return ms < 10_000 ? `${Number((ms / 1000).toFixed(1))} s` : `${Math.round(ms / 1000)} s`;
}

/** A wait that ran out of time. Every wait in the project throws this same shape. */
export class WaitTimeoutError extends Error {
  /** Brand for checks across copies of this module (no `instanceof`). */
  readonly isWaitTimeoutError = true;
  constructor(
    readonly context: WaitContext,
    readonly timeoutMs: number,
    readonly lastState: string,
  ) {
    super(
      `${context.step}: timed out after ${formatSeconds(timeoutMs)} waiting for ${context.object} at ${context.endpoint}; last state: ${lastState}`,
    );
    this.name = "WaitTimeoutError";
  }
}

/** A wait that saw a terminal failure and stopped early. */
export class WaitFailedError extends Error {
  /** Brand for checks across copies of this module (no `instanceof`). */
  readonly isWaitFailedError = true;
  constructor(
    readonly context: WaitContext,
    readonly reason: string,
  ) {
    super(`${context.step}: ${context.object} at ${context.endpoint} failed: ${reason}`);
    this.name = "WaitFailedError";
  }
}

/** Knobs of a wait; the clock and the sleep are injectable so that waits are tested without time. */
export interface PollOptions {
  /** Give up after this long. */
  readonly timeoutMs: number;
  /** Pause between two looks. @default 250 */
  readonly intervalMs?: number;
  /** Ends the wait early (the operation's shared deadline). */
  readonly signal?: AbortSignal;
  /** @default Date.now */
  readonly now?: () => number;
  /** @default setTimeout-based sleep */
  readonly sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Calls `check` until it reports done (returns its value), a terminal failure (throws
 * {@link WaitFailedError}) or the timeout passes (throws {@link WaitTimeoutError}). A check that
 * throws counts as "not yet", with the error's message as the state: endpoints that refuse
 * connections while starting up are the normal case here.
 */
export async function poll<T>(
  context: WaitContext,
  options: PollOptions,
  check: () => Promise<CheckResult<T>>,
): Promise<T> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? realSleep;
  const deadline = now() + options.timeoutMs;
  let lastState = "not checked yet";
  // A look that the deadline cut short only says "aborted": the reason the wait ends with is the
  // last one a look completed with, which is what either side last reported.
  const seen = (state: string): void => {
    if (!options.signal?.aborted || lastState === "not checked yet") lastState = state;
  };
  for (;;) {
    if (options.signal?.aborted)
      throw new WaitTimeoutError(context, options.timeoutMs, `${lastState} (operation deadline reached)`);
    let pauseMs = options.intervalMs ?? 250;
    try {
      const result = await check();
      if ("failed" in result) throw new WaitFailedError(context, result.reason);
      if (result.done) return result.value;
      seen(result.state);
      pauseMs = Math.max(pauseMs, result.retryAfterMs ?? 0);
    } catch (error) {
      if ((error as Partial<WaitFailedError> | null)?.isWaitFailedError) throw error;
      seen((error as Error | null)?.message ?? String(error));
    }
    if (now() >= deadline) throw new WaitTimeoutError(context, options.timeoutMs, lastState);
    await sleep(Math.min(pauseMs, Math.max(0, deadline - now())));
  }
}
