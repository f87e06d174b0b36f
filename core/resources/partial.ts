/**
 * The error shape that makes the engine record a resource that was created but failed to
 * initialise: it carries the id and the properties, so a half-done create is never lost from the
 * state, and the next `pulumi up` continues from it.
 */

/**
 * The `status` output of a resource whose create failed half-way. Its next `pulumi up` updates it,
 * which runs create again (every step is idempotent): a create-retry, never a replacement.
 */
export const INCOMPLETE = "incomplete";

/** Whether `outputs` are what a create that failed half-way left (see {@link INCOMPLETE}). */
export function isIncomplete(outputs: { readonly status?: string } | undefined): boolean {
  return outputs?.status === INCOMPLETE;
}

/** An error that carries what was already created. */
export interface PartialFailure extends Error {
  readonly id: string;
  readonly properties: Record<string, unknown>;
  readonly reasons: string[];
}

/** Wraps `error` with the id and properties of what was created before it happened. */
export function partialFailure(error: unknown, id: string, properties: Record<string, unknown>): PartialFailure {
  const message = (error as Error)?.message ?? String(error);
  return Object.assign(new Error(message), { id, properties, reasons: [message] });
}

/** Resolves to `work()`'s result, or throws a {@link partialFailure} with `id` and `properties`. */
export async function orPartial<T>(
  id: string,
  properties: Record<string, unknown>,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw partialFailure(error, id, properties);
  }
}
