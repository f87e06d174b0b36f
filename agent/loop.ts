/**
 * The agent's one loop shape: run a pass, wait, repeat until aborted. A failed pass is logged and
 * retried with capped exponential backoff (1 s up to 30 s); a good pass resets it. The delay is
 * injectable so that loops are tested without real time.
 *
 * Passes relist what they need each time instead of holding a watch: the project's custom
 * resources come and go with the `Cluster` resource, and a relist needs no 410 handling.
 */
import type { Reporter } from "./reporter.js";

/** A periodic loop's settings. */
export interface LoopOptions {
  /** Name used in log lines, e.g. `heartbeat`. */
  readonly name: string;
  /** Pause between two good passes. */
  readonly intervalMs: number;
  /** Ends the loop. */
  readonly signal: AbortSignal;
  /** Where failures are reported. */
  readonly reporter: Reporter;
  /** @default a setTimeout sleep that ends early on abort */
  readonly delay?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Backoff after `failures` consecutive failed passes: 1 s, 2 s, 4 s … capped at 30 s. */
export function backoffMs(failures: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, failures - 1));
}

/** Sleeps `ms`, resolving early when `signal` aborts. */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

/** Runs `pass` every `intervalMs` until the signal aborts; resolves when it has stopped. */
export async function runLoop(options: LoopOptions, pass: () => Promise<void>): Promise<void> {
  const delay = options.delay ?? abortableDelay;
  let failures = 0;
  while (!options.signal.aborted) {
    try {
      await pass();
      failures = 0;
    } catch (error) {
      failures += 1;
      options.reporter.warn(`${options.name}: ${(error as Error).message ?? String(error)} (retry in ${backoffMs(failures) / 1000} s)`);
    }
    await delay(failures === 0 ? options.intervalMs : backoffMs(failures), options.signal);
  }
}
