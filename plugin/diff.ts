/**
 * A resource's diff as the engine's detailed diff: one entry per changed input, by its schema path,
 * an update or a replacement as the resource's own rules say. Pure.
 */
import type { FoundChanges } from "../core/resources/diff-rules.js";

/** One entry of a detailed diff. */
export interface PropertyChange {
  /** The schema's path of what changed, e.g. `resources` or `consumer.clusterId`. */
  readonly path: string;
  /** Whether the change updates the resource in place or replaces it. */
  readonly kind: "update" | "update-replace";
  /**
   * Whether the path names an input (the engine then shows the change between old and new inputs)
   * rather than an output (a status that `pulumi refresh` recorded).
   */
  readonly inputDiff: boolean;
}

/**
 * The detailed diff of `found` (the code's input names), each path named by `schemaPathOf`;
 * `inputs` are the top-level schema inputs the program gave.
 */
export function detailedDiffOf(
  found: FoundChanges,
  schemaPathOf: (path: string) => string,
  inputs: ReadonlySet<string>,
): PropertyChange[] {
  return found.changed.map((key) => {
    const path = schemaPathOf(key);
    return {
      path,
      kind: found.replaces.includes(key) ? "update-replace" : "update",
      inputDiff: inputs.has(path.split(".")[0]!),
    };
  });
}
