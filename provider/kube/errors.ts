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

/** `HTTP 404: leases.coordination.k8s.io "x" not found`, or the error's own message. */
export function describeKubeError(error: unknown): string {
  const e = error as ApiErrorLike;
  const code = statusOf(error);
  if (code === undefined) return e?.message ?? String(error);
  let message: unknown;
  try {
    message = (typeof e.body === "string" ? JSON.parse(e.body) : e.body as { message?: string })?.message;
  } catch {
    message = e.body;
  }
  return `HTTP ${code}: ${typeof message === "string" ? message : "no message"}`;
}
