/**
 * The words a resource's declaration is written in: each property's type, documentation, default,
 * secrecy, and what a change of an input does to the resource and why. Data only, no I/O and no
 * import of the product: the shims, both doors (the TypeScript SDK and the provider plugin) and
 * the generator (codegen/) read the same declaration, so none of them restates it.
 */

/** A property's type, as the schema and every SDK see it. */
export type PropertyType =
  | { readonly kind: "string"; readonly values?: readonly string[] }
  | { readonly kind: "integer" | "number" | "boolean" }
  | { readonly kind: "list" | "map"; readonly of: PropertyType }
  | { readonly kind: "object"; readonly type: string }
  | { readonly kind: "resource"; readonly resource: string };

/** A string; with `values`, one of them. */
export const string = (...values: string[]): PropertyType =>
  values.length > 0 ? { kind: "string", values } : { kind: "string" };
/** A number. */
export const number: PropertyType = { kind: "number" };
/** A whole number. */
export const integer: PropertyType = { kind: "integer" };
/** `true` or `false`. */
export const boolean: PropertyType = { kind: "boolean" };
/** A list of `of`. */
export const listOf = (of: PropertyType): PropertyType => ({ kind: "list", of });
/** A map from strings to `of`. */
export const mapOf = (of: PropertyType): PropertyType => ({ kind: "map", of });
/** An object of the named type of declarations/types.ts, e.g. `Endpoint`. */
export const object = (type: string): PropertyType => ({ kind: "object", type });
/**
 * Another resource of this package (`Cluster`, `Peering`): the TypeScript SDK takes the resource
 * itself, the provider plugin its `access` output (declared with that resource).
 */
export const resource = (name: string): PropertyType => ({ kind: "resource", resource: name });

/** What one change of an input does to the resource, and why (the clause a preview prints). */
export interface ChangeEffect {
  /** Whether the resource is replaced, or updated in place. */
  readonly effect: "replaces" | "updates in place";
  /** Why: what the resource's provider does, or what holds the resource to its old value. Never a value. */
  readonly reason: string;
}

/** A change that replaces the resource, for `reason`. */
export const replaces = (reason: string): ChangeEffect => ({ effect: "replaces", reason });
/** A change that updates the resource in place, for `reason`. */
export const inPlace = (reason: string): ChangeEffect => ({ effect: "updates in place", reason });

/** What every property says of itself. */
export interface PropertyDeclaration {
  /** Its type. */
  readonly type: PropertyType;
  /** What it is and what it means, in Markdown (its first sentence is its summary). */
  readonly description: string;
  /** Whether it must be given (an input, a field of an input type) or is always set (an output). */
  readonly required?: boolean;
  /** Whether its value is a secret wherever it goes (state, outputs, logs). */
  readonly secret?: boolean;
  /** What it is when left out, as the documentation says it (`300`, `"LoadBalancer"`, `detected`). */
  readonly default?: string;
  /** A value, where its format is not obvious. */
  readonly example?: string;
}

/** An input of a resource. */
export interface InputDeclaration extends PropertyDeclaration {
  /** What its change does: one effect for the input as a whole. */
  readonly change?: ChangeEffect;
  /**
   * What its change does where the provider's code diffs it as several inputs (a resource input:
   * by the code's input names; an object input: by `<input>.<field>`), in the order a preview lists them.
   */
  readonly changes?: Readonly<Record<string, ChangeEffect>>;
  /**
   * A resource input: the inputs of the provider's code it becomes, each the path of a field of
   * that resource's access type (`*` for each element of a list of resources).
   */
  readonly passes?: Readonly<Record<string, string>>;
  /**
   * The value both doors send when the program gives none, where the code must tell "left out"
   * from the default only in state written before the input existed.
   */
  readonly sent?: string;
  /**
   * Whether the engine replaces the resource on any change of it (the schema's `replaceOnChanges`,
   * which generated SDKs turn into a resource option). Default: whether a change of it replaces.
   */
  readonly replaceOnChanges?: boolean;
}

/** An output of a resource. */
export interface OutputDeclaration extends PropertyDeclaration {
  /**
   * The output the resource's code keeps for itself in its state: the SDK registers it, the schema
   * does not serve it.
   */
  readonly internal?: boolean;
  /**
   * A status output that `pulumi refresh` may find unhealthy: why the next `pulumi up` updates in
   * place then (the code decides what is healthy).
   */
  readonly repairedByUpdate?: string;
}

/** How other resources reach one: its `access` output, an object of `type`. */
export interface AccessDeclaration {
  /** The access type, declared in declarations/types.ts. */
  readonly type: string;
  /** Each field of the access (a path), from the resource's state: the name of an input or output of its code. */
  readonly fromState: Readonly<Record<string, string>>;
  /**
   * Where the TypeScript SDK's resource object holds a field of the access, where that is not the
   * same path (a `Peering`'s `consumer.clusterId` is its `consumerClusterId` output).
   */
  readonly inProgram?: Readonly<Record<string, string>>;
  /** What it is, for the schema and the SDKs. */
  readonly description: string;
}

/** A resource, declared once. */
export interface ResourceDeclaration {
  /** Its name, the last part of its type token (`liqo:index:<name>`). */
  readonly name: string;
  /** Its shim's module, `core/resources/<module>.ts`, which both doors load. */
  readonly module: string;
  /** What it is, in one sentence. */
  readonly summary: string;
  /** Its inputs, in the order the schema, the SDK and the reference list them. */
  readonly inputs: Readonly<Record<string, InputDeclaration>>;
  /** Its outputs (every input is in its state too). */
  readonly outputs: Readonly<Record<string, OutputDeclaration>>;
  /** Its access output, for resources that others take. */
  readonly access?: AccessDeclaration;
}

/** A named object type, used by inputs, outputs or both. */
export interface TypeDeclaration {
  /** What it is. */
  readonly description: string;
  /** Its fields. */
  readonly fields: Readonly<Record<string, PropertyDeclaration>>;
  /**
   * The TypeScript SDK's names for it: `input` where a program gives it (`EndpointArgs`), `output`
   * where a program reads it (`TunnelEnd`).
   */
  readonly tsNames: { readonly input?: string; readonly output?: string };
}

/** Types a declaration as what it is, keeping its literal keys (so the shims' rule tables are checked against them). */
export const declareResource = <const R extends ResourceDeclaration>(declaration: R): R => declaration;
