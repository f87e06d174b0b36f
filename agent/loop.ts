/**
 * The agent's one loop shape: run a pass, wait, repeat until aborted. A failed pass is logged and
 * retried with capped exponential backoff (1 s up to 30 s); a good pass resets it. The delay is
 * injectable so that loops are tested without real time.
 *
 * Passes relist what they need each time rather than keeping a cache from a watch: the
 * project's custom resources come and go with the `Cluster` resource. Watches only wake a loop
 * (see watch.ts), so a loop can pass rarely while nothing changes and at once when something does.
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
  /** Ends the pause between passes early. */
  readonly wakeup?: Wakeup;
  /** @default a setTimeout sleep that ends early on abort */
  readonly delay?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * Ends a loop's pause early. A wake that comes while a pass runs is kept, and ends the next
 * pause at once: the pass may have listed just before the change.
 */
export class Wakeup {
  private pending = false;
  private resume: (() => void) | undefined;

  /** Asks for a pass now. */
  wake(): void {
    this.pending = true;
    this.resume?.();
  }

  /** Sleeps `ms` with `delay`, or less if woken (or woken since the last sleep). */
  async sleep(ms: number, signal: AbortSignal, delay: (ms: number, signal: AbortSignal) => Promise<void>): Promise<void> {
    if (!this.pending && !signal.aborted) {
      const woken = new AbortController();
      const cut = (): void => woken.abort();
      signal.addEventListener("abort", cut, { once: true });
      this.resume = cut;
      try {
        await delay(ms, woken.signal);
      } finally {
        this.resume = undefined;
        signal.removeEventListener("abort", cut);
      }
    }
    this.pending = false;
  }
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

/**
 * Runs `pass` every `intervalMs` until the signal aborts; resolves when it has stopped. A pass
 * that waits on something no watch sees (a remote cluster, a tunnel's handshake) returns the
 * shorter pause it needs.
 */
export async function runLoop(options: LoopOptions, pass: () => Promise<number | void>): Promise<void> {
  const delay = options.delay ?? abortableDelay;
  let failures = 0;
  while (!options.signal.aborted) {
    let next: number | void = undefined;
    try {
      next = await pass();
      failures = 0;
    } catch (error) {
      failures += 1;
      options.reporter.warn(`${options.name}: ${(error as Error).message ?? String(error)} (retry in ${backoffMs(failures) / 1000} s)`);
    }
    const pause = failures === 0 ? (next ?? options.intervalMs) : backoffMs(failures);
    await (options.wakeup && failures === 0 ? options.wakeup.sleep(pause, options.signal, delay) : delay(pause, options.signal));
  }
}
