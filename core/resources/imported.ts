/**
 * What `pulumi import` recovers of a resource from its clusters: the inputs that would make it as
 * it stands, its outputs, and the inputs it cannot read back, each with why. Only the provider
 * plugin imports (the engine never asks a dynamic resource to).
 */

/** One input an import cannot recover: the program must give it. */
export interface Unrecovered {
  /** The input's name, as the resource's code takes it (e.g. `kubeconfig`). */
  readonly input: string;
  /** Why the clusters cannot show it. */
  readonly why: string;
}

/** A resource as an import found it. */
export interface Imported<I, O> {
  /** Its ID in the state (what its create would have answered). */
  readonly id: string;
  /** The inputs that reproduce it, as its code takes them; defaults and unrecovered inputs left out. */
  readonly inputs: Partial<I>;
  readonly outputs: O;
  /** Inputs the program must supply: secrets the clusters never show. */
  readonly unrecovered: readonly Unrecovered[];
  /** Optional inputs that leave no trace in the clusters: recovered as left out. */
  readonly untraced: readonly string[];
  /**
   * The URN of the resource the clusters record as its maker, when another than the importing one
   * (another stack's, or the TypeScript SDK's dynamic resource): the import takes it over.
   */
  readonly takenFrom?: string;
}
