/**
 * An operation's `customTimeouts`, held to. The engine only passes the timeout on (it enforces
 * none): the code's steps take it as their shared deadline (operations.ts), and each ends its own
 * wait with its own message (step, object, endpoint, last state). This guard answers the engine
 * shortly after the timeout even if a step overruns it, naming the timeout.
 */

/** How long after the timeout the guard waits for the steps' own, more telling, error. */
export const GRACE_MS = 1_000;

/** Starts a timer; hands back its cancel. Injectable, so that tests pass no real time. */
export type Schedule = (run: () => void, ms: number) => () => void;

const realSchedule: Schedule = (run, ms) => {
  const timer = setTimeout(run, ms);
  return () => clearTimeout(timer);
};

/** What {@link withinTimeout} holds an operation to. */
export interface TimeoutOptions {
  /** The operation's timeout in seconds; 0 (none given) guards nothing. */
  readonly seconds: number;
  /** The operation, as errors name it: `Peering "b-to-a": create`. */
  readonly what: string;
  /** @default {@link GRACE_MS} */
  readonly graceMs?: number;
  /** @default setTimeout */
  readonly schedule?: Schedule;
}

/** An error that says the operation outlived its customTimeouts. */
export function timeoutError(what: string, seconds: number): Error {
  return new Error(
    `${what}: did not finish within its customTimeouts of ${seconds} s; what it made so far stays in the clusters, ` +
      `and the next pulumi up converges it`,
  );
}

/** Resolves as `work` does, or rejects with {@link timeoutError} once the timeout and its grace have passed. */
export function withinTimeout<T>(work: Promise<T>, options: TimeoutOptions): Promise<T> {
  if (!(options.seconds > 0)) return work;
  const schedule = options.schedule ?? realSchedule;
  return new Promise<T>((resolve, reject) => {
    const cancel = schedule(
      () => reject(timeoutError(options.what, options.seconds)),
      options.seconds * 1000 + (options.graceMs ?? GRACE_MS),
    );
    work.then(
      (value) => {
        cancel();
        resolve(value);
      },
      (error: unknown) => {
        cancel();
        reject(error);
      },
    );
  });
}
