/**
 * Inputs the SDK passes to every resource's provider that users never set and never see. No
 * imports: the SDK loads this module when a program starts, before any provider code.
 */

/**
 * The resource's own URN, so that what its provider tells the engine during a diff is shown with
 * the resource. The engine's displays leave out properties whose names start with `__`, and no
 * diff compares this one, so a user never sees it, nor sees it change (a renamed resource has a
 * new URN and nothing else to update).
 */
export const URN_INPUT = "__urn";

/** A resource's own URN from its inputs (or outputs, which keep them); undefined when absent. */
export function ownUrnOf(inputs: object): string | undefined {
  const urn = (inputs as Record<string, unknown>)[URN_INPUT];
  return typeof urn === "string" && urn !== "" ? urn : undefined;
}

/**
 * Where an import keeps the URN of the resource that made what it found, when that was another
 * (another stack's, or the TypeScript SDK's dynamic resource of the same thing): the clusters
 * record that URN as the owner, so this resource acts as it until a write of its own records its
 * URN instead. The engine's displays leave it out, no diff compares it, and it is read from the
 * state only, never from a program's inputs.
 */
export const TAKEN_FROM = "__takenFrom";

/** The URN an imported resource took its clusters' objects over from (see {@link TAKEN_FROM}); undefined when none. */
export function takenFromOf(state: object | undefined): string | undefined {
  const urn = (state as Record<string, unknown> | undefined)?.[TAKEN_FROM];
  return typeof urn === "string" && urn !== "" ? urn : undefined;
}
