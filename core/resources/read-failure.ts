/**
 * Errors thrown from a dynamic resource's `read`, shaped for what Pulumi's dynamic provider host
 * does with them: it writes `${error}: ${error.stack}` to its stderr, which `pulumi refresh`
 * shows, so a plain Error puts a stack trace in front of the user. Drift (an identity revoked, a
 * node gone) is never thrown: it is the status that read returns. What is thrown is a read that
 * could not be done (a cluster out of reach), as lines that name the resource and say what failed
 * where, and no trace. A failed delete is shaped alike.
 */

/** What the engine is told when a read fails: the state stays as last recorded. */
const STATE_KEPT = "its state is left as last recorded; refresh again once the cluster answers";

/** What the engine is told when a delete fails: the resource stays. */
const RESOURCE_KEPT = "the resource stays in the stack; run pulumi destroy again once the cause is dealt with";

/** `message` as the host prints it, `pulumi-liqo: <message>: <afterward>`: two plain sentences, no stack trace. */
function untraced(message: string, afterward: string): Error {
  const failure = new Error(message);
  // The host prints `${name}: ${message}: ${stack}`: this name and stack make it two plain sentences.
  failure.name = "pulumi-liqo";
  failure.stack = afterward;
  return failure;
}

const messageOf = (error: unknown): string => (error as Error | undefined)?.message ?? String(error);

/** An Error for a failed read of resource `kind` `label` (its name), without a stack trace. */
export function readFailure(kind: string, label: string, error: unknown): Error {
  return untraced(`${kind} "${label}": refresh could not read it: ${messageOf(error)}`, STATE_KEPT);
}

/**
 * What the engine is told when a delete waited out its deadline: a wait that keeps timing out may
 * be on a provider that is gone, and `force` is the way out that running destroy again is not.
 */
const RESOURCE_KEPT_AFTER_WAIT =
  "the resource stays in the stack; run pulumi destroy again once the cause is dealt with, or, if its provider is gone for good, " +
  "set force: true on it, run pulumi up (which does not need the provider) and then pulumi destroy";

/**
 * An Error for a failed delete of resource `kind` `label`, without a stack trace (the host prints
 * delete's errors as read's). A delete that timed out names `force`.
 */
export function deleteFailure(kind: string, label: string, error: unknown): Error {
  const timedOut = (error as { isWaitTimeoutError?: boolean } | undefined)?.isWaitTimeoutError === true;
  return untraced(
    `${kind} "${label}": delete failed: ${messageOf(error)}`,
    timedOut ? RESOURCE_KEPT_AFTER_WAIT : RESOURCE_KEPT,
  );
}

/** Resolves to `read()`'s result, or throws it as a {@link readFailure}. */
export async function readOrFail<T>(kind: string, label: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw readFailure(kind, label, error);
  }
}
