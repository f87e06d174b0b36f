/**
 * The agent's one loop shape: run a pass, wait, repeat until aborted. A failed pass is retried with
 * the agent's capped exponential backoff (backoff.ts: 1 s up to 30 s), its reason reported when it
 * changes and at each step; a good pass resets it and says it recovered. The delay and the random
 * source of the jitter are injectable so that loops are tested without real time.
 *
 * Passes relist what they need each time rather than keeping a cache from a watch: the
 * project's custom resources come and go with the `Cluster` resource. Watches only wake a loop
 * (see watch.ts), so a loop can pass rarely while nothing changes and at once when something does.
 */
import { AGENT_BACKOFF, Backoff, type BackoffPolicy } from "./backoff.js";
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
  /** How failed passes back off. @default {@link AGENT_BACKOFF} */
  readonly backoff?: BackoffPolicy;
  /** Random source of the backoff's jitter, in [0, 1). @default Math.random */
  readonly random?: () => number;
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
  async sleep(
    ms: number,
    signal: AbortSignal,
    delay: (ms: number, signal: AbortSignal) => Promise<void>,
  ): Promise<void> {
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
  const backoff = new Backoff(options.name, options.backoff ?? AGENT_BACKOFF, options.random);
  while (!options.signal.aborted) {
    let pause: number;
    try {
      const next = await pass();
      const recovered = backoff.succeeded();
      if (recovered) options.reporter.info(recovered);
      pause = next ?? options.intervalMs;
    } catch (error) {
      const decision = backoff.failed((error as Error).message ?? String(error), Date.now());
      if (decision.report) options.reporter.warn(decision.report);
      pause = decision.delayMs;
    }
    // A failing loop is not woken early: every change it is told of would be another attempt.
    await (options.wakeup && backoff.failureCount === 0
      ? options.wakeup.sleep(pause, options.signal, delay)
      : delay(pause, options.signal));
  }
}
