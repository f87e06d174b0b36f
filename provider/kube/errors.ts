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
 * described by `describeFailure` (provider/kube/client.ts) kept. Apart from {@link statusOf} so
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

/** `HTTP 404: leases.coordination.k8s.io "x" not found`, or the error's own message. */
export function describeKubeError(error: unknown): string {
  const e = error as ApiErrorLike;
  const code = statusOf(error);
  if (code === undefined) return e?.message ?? String(error);
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
