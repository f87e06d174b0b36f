/**
 * Progress of a long operation, numbered and labelled by step ("[2/3] negotiation: waiting for an
 * offer from provider b"): one small interface, the same for resource hooks, the agent and tests.
 * Every task's steps report through it, so it sits below them all (core/operation/).
 */

/** Receives numbered progress lines. */
export interface Progress {
  /** Step `index` of `total` has started; `message` names the task and the cluster acting. */
  step(index: number, total: number, message: string): void;
}

/** A Progress that formats lines and hands them to `write`. */
export function progressTo(write: (line: string) => void): Progress {
  return { step: (index, total, message) => write(`[${index}/${total}] ${message}`) };
}

/**
 * The steps of step `index` of `total` (the tunnel an in-band peering builds as its first step):
 * each line keeps the outer count, so the numbering never goes back, and adds its own,
 * `[1/4] (2/4) network fabric: telling the gateway of a …`.
 */
export function withinStep(outer: Progress, index: number, total: number): Progress {
  return { step: (i, n, message) => outer.step(index, total, `(${i}/${n}) ${message}`) };
}

/** Progress shown as one live status that each step replaces, as a resource's row in `pulumi up` shows it. */
export interface LiveStatus extends Progress {
  /** Clears the status (the operation ended, done or failed); resolves once it and every step before it were sent. */
  end(): Promise<void>;
}

/**
 * Sends each step's line through `send`, and `""` on `end`, one at a time and in order: each
 * send settles before the next starts, since two messages in flight at once may reach the engine
 * in either order and an older step would then stay shown. A status is best effort: a failed
 * send is dropped, so `end` never rejects (it runs in a `finally`, where it must not replace the
 * operation's own result or error). `send` must not wait long, since `end` waits for every one.
 */
export function liveStatus(send: (status: string) => Promise<void>): LiveStatus {
  let sent = Promise.resolve();
  const enqueue = (status: string): Promise<void> => (sent = sent.then(() => send(status)).catch(() => undefined));
  return {
    ...progressTo((line) => void enqueue(line)),
    end: () => enqueue(""),
  };
}
