/**
 * Progress of a long operation, numbered and labelled by step ("[2/3] negotiation: waiting for an
 * offer from provider b"): one small interface, the same for resource hooks, the agent and tests.
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
