/**
 * Errors thrown from a dynamic resource's `read`, shaped for what Pulumi's dynamic provider host
 * does with them: it writes `${error}: ${error.stack}` to its stderr, which `pulumi refresh`
 * shows, so a plain Error puts a stack trace in front of the user. Drift (an identity revoked, a
 * node gone) is never thrown: it is the status that read returns. What is thrown is a read that
 * could not be done (a cluster out of reach), as lines that name the resource and say what failed
 * where, and no trace.
 */

/** What the engine is told when a read fails: the state stays as last recorded. */
const STATE_KEPT = "its state is left as last recorded; refresh again once the cluster answers";

/** An Error for a failed read of resource `kind` `label` (its name), without a stack trace. */
export function readFailure(kind: string, label: string, error: unknown): Error {
  const cause = (error as Error | undefined)?.message ?? String(error);
  const failure = new Error(`${kind} "${label}": refresh could not read it: ${cause}`);
  // The host prints `${name}: ${message}: ${stack}`: this name and stack make it two plain sentences.
  failure.name = "pulumi-liqo";
  failure.stack = STATE_KEPT;
  return failure;
}

/** Resolves to `read()`'s result, or throws it as a {@link readFailure}. */
export async function readOrFail<T>(kind: string, label: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw readFailure(kind, label, error);
  }
}
