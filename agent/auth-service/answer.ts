/** What a handler of the auth service answers; the server only writes it out. */
import type { ErrorBody } from "../../core/authentication/protocol.js";

/** An HTTP answer with a JSON body. */
export interface Answer {
  /** HTTP status. */
  readonly status: number;
  /** JSON body: the protocol's answer, or `{error}`. */
  readonly body: unknown;
  /** Extra headers, e.g. `Retry-After`. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Whether this answer is a refusal that counts against the source's failure budget (see
   * FailureLimiter). Server errors do not count: they are not the client's doing.
   */
  readonly countsAsFailure?: boolean;
}

/** A refusal: `{error}` with a status, counted against the source. */
export function refuse(status: number, error: string, headers?: Record<string, string>): Answer {
  const body: ErrorBody = { error };
  return { status, body, countsAsFailure: true, ...(headers ? { headers } : {}) };
}

/** A failure of the service itself (not counted against the source). */
export function fail(status: number, error: string): Answer {
  const body: ErrorBody = { error };
  return { status, body };
}

/** A failure of the service itself that asking again will not cure (see {@link ErrorBody.terminal}). */
export function failForGood(status: number, error: string): Answer {
  const body: ErrorBody = { error, terminal: true };
  return { status, body };
}
