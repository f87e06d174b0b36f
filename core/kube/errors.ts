/** Short, readable descriptions of Kubernetes API errors (client-node's own messages dump headers). */

interface ApiErrorLike {
  readonly code?: number;
  readonly body?: unknown;
  readonly message?: string;
}

/** The HTTP status of a Kubernetes API error, if it carries one. */
export function statusOf(error: unknown): number | undefined {
  const code = (error as ApiErrorLike | undefined)?.code;
  return typeof code === "number" ? code : undefined;
}

/**
 * The HTTP status a failed call ended with: a client error's own, or the one that a failure
 * described by `describeFailure` (core/kube/client.ts) kept. Apart from {@link statusOf} so
 * that "not found" checks never mistake a described failure for a client error.
 */
export function httpStatusOf(error: unknown): number | undefined {
  const kept = (error as { readonly httpStatus?: unknown } | undefined)?.httpStatus;
  return statusOf(error) ?? (typeof kept === "number" ? kept : undefined);
}

/**
 * Whether the API server refused the caller itself: its credentials (401) or its rights (403),
 * rather than the object asked for or the way there.
 */
export function isRefusal(error: unknown): boolean {
  const status = httpStatusOf(error);
  return status === 401 || status === 403;
}

/** The error's message, and its cause's when the message alone says nothing (undici's `fetch failed`). */
function withCause(error: unknown): string {
  const message = (error as Error | undefined)?.message ?? String(error);
  const cause = (error as { cause?: { message?: unknown } } | undefined)?.cause?.message;
  return typeof cause === "string" && cause && !message.includes(cause) ? `${message}: ${cause}` : message;
}

/** `HTTP 404: leases.coordination.k8s.io "x" not found`, the connection's failure, or the error's own message. */
export function describeKubeError(error: unknown): string {
  const e = error as ApiErrorLike;
  const code = statusOf(error);
  if (code === undefined) return describeConnectionFailure(error) ?? withCause(error);
  let body: unknown = e.body;
  if (typeof body === "string") {
    try {
      body = JSON.parse(body);
    } catch {
      // Not JSON: the text itself is the message.
    }
  }
  const message = typeof body === "string" ? body : (body as { message?: unknown } | undefined)?.message;
  return `HTTP ${code}: ${typeof message === "string" && message.trim() ? message.trim() : "no message"}`;
}

/** What kept a connection from being made, in the terms a reader acts on. */
export type ConnectionFault =
  | "connection refused"
  | "timed out"
  | "host unreachable"
  | "host name not resolved"
  | "connection reset"
  | "TLS: unknown authority"
  | "TLS: name mismatch"
  | "TLS: certificate expired or not yet valid"
  | "TLS: client certificate refused";

/** A connection's failure as {@link classifyConnectionError} reads it. */
export interface ConnectionFailure {
  readonly fault: ConnectionFault;
  /** The system's or the TLS library's code it was read from, e.g. `ECONNREFUSED`. */
  readonly code: string;
  /** One line for a reader: the fault, what it means here, and the code. */
  readonly description: string;
}

/** Which fault each code means, and what to say of it. */
const FAULTS: Readonly<Record<string, readonly [ConnectionFault, string]>> = {
  ECONNREFUSED: ["connection refused", "nothing listens at that address and port"],
  UND_ERR_CONNECT_TIMEOUT: [
    "timed out",
    "no answer to the connection attempt: the host is down or a firewall drops the packets",
  ],
  ETIMEDOUT: ["timed out", "no answer to the connection attempt: the host is down or a firewall drops the packets"],
  EHOSTUNREACH: ["host unreachable", "no route to the host"],
  ENETUNREACH: ["host unreachable", "no route to the host's network"],
  EHOSTDOWN: ["host unreachable", "the host is down"],
  ENOTFOUND: ["host name not resolved", "DNS has no address for the host"],
  EAI_AGAIN: ["host name not resolved", "DNS did not answer"],
  ECONNRESET: ["connection reset", "the other side closed the connection"],
  UND_ERR_SOCKET: ["connection reset", "the other side closed the connection"],
  EPIPE: ["connection reset", "the other side closed the connection"],
  DEPTH_ZERO_SELF_SIGNED_CERT: [
    "TLS: unknown authority",
    "the server's certificate is self-signed and is not the CA given",
  ],
  SELF_SIGNED_CERT_IN_CHAIN: [
    "TLS: unknown authority",
    "the server's certificate chains to a CA other than the one given",
  ],
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: ["TLS: unknown authority", "the server's certificate is not signed by the CA given"],
  UNABLE_TO_GET_ISSUER_CERT: ["TLS: unknown authority", "the server's certificate is not signed by the CA given"],
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: [
    "TLS: unknown authority",
    "the server's certificate is not signed by the CA given",
  ],
  CERT_SIGNATURE_FAILURE: ["TLS: unknown authority", "the server's certificate is not signed by the CA given"],
  ERR_TLS_CERT_ALTNAME_INVALID: [
    "TLS: name mismatch",
    "the server's certificate is not for the host name or address dialled",
  ],
  CERT_HAS_EXPIRED: ["TLS: certificate expired or not yet valid", "the server's certificate has expired"],
  CERT_NOT_YET_VALID: [
    "TLS: certificate expired or not yet valid",
    "the server's certificate is not valid yet (clocks apart?)",
  ],
  ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE: [
    "TLS: client certificate refused",
    "the server did not accept the client certificate",
  ],
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: [
    "TLS: client certificate refused",
    "the server asks for a client certificate",
  ],
  ERR_SSL_TLSV1_ALERT_UNKNOWN_CA: [
    "TLS: client certificate refused",
    "the server does not know the client certificate's CA",
  ],
};

/**
 * The errors an error stands for, outermost first: undici's `fetch failed` carries the socket's
 * error as its `cause`, and a connection to a host with several addresses fails with an
 * AggregateError of one error per address.
 */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  const queue = [error];
  while (queue.length > 0 && chain.length < 10) {
    const next = queue.shift();
    if (next === null || typeof next !== "object" || chain.includes(next)) continue;
    chain.push(next);
    const { cause, errors } = next as { cause?: unknown; errors?: unknown };
    if (cause !== undefined) queue.push(cause);
    if (Array.isArray(errors)) queue.push(...errors);
  }
  return chain;
}

/**
 * Reads why a connection failed, whatever library made it (undici's `fetch failed` hides the
 * reason in `cause`; node:https and node:tls reject with it). Pure: it only looks at the error's
 * `code` and `name` fields. Undefined when the error is not a connection's failure.
 */
export function classifyConnectionError(error: unknown): ConnectionFailure | undefined {
  for (const link of causeChain(error)) {
    const { code, name } = link as { code?: unknown; name?: unknown };
    const known = typeof code === "string" ? FAULTS[code] : undefined;
    // An abort by a deadline is a timeout, whichever signal carried it.
    const found = known
      ? ([known, code as string] as const)
      : name === "TimeoutError"
        ? ([FAULTS["ETIMEDOUT"]!, "TimeoutError"] as const)
        : undefined;
    if (found) {
      const [[fault, meaning], which] = found;
      return { fault, code: which, description: `${fault} (${meaning}; ${which})` };
    }
  }
  return undefined;
}

/** `connection refused (nothing listens at that address and port; ECONNREFUSED)`, or undefined when the error is not a connection's failure. */
export function describeConnectionFailure(error: unknown): string | undefined {
  return classifyConnectionError(error)?.description;
}

/**
 * The same error with a message that names its cause (the code stays, for callers that test it),
 * or the error itself when it is not a connection's failure.
 */
export function explainConnectionError(error: unknown): unknown {
  const description = describeConnectionFailure(error);
  if (!description) return error;
  const { code } = error as { code?: unknown };
  return Object.assign(new Error(description, { cause: error }), code === undefined ? {} : { code });
}
