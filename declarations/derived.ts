/**
 * What follows from a declaration, for the code that serves it: the inputs the resource's code
 * takes, what a change of each does, where each comes from in the schema's inputs, which state is
 * secret, and the access object other resources take. Pure: the shims' diff, both doors and the
 * generator ask here rather than restate it.
 */
import type {
  ChangeEffect,
  InputDeclaration,
  OutputDeclaration,
  PropertyType,
  ResourceDeclaration,
} from "./vocabulary.js";
import { TYPES } from "./types.js";

/** Every change the resource's code tells apart, by the code's name for it, in the declaration's order. */
export function changeEffectsOf(declaration: ResourceDeclaration): Readonly<Record<string, ChangeEffect>> {
  const effects: Record<string, ChangeEffect> = {};
  for (const [name, input] of Object.entries(declaration.inputs)) {
    if (input.change) effects[name] = input.change;
    Object.assign(effects, input.changes ?? {});
  }
  for (const [name, output] of Object.entries(declaration.outputs))
    if (output.repairedByUpdate) effects[name] = { effect: "updates in place", reason: output.repairedByUpdate };
  return effects;
}

/** Whether the engine replaces the resource on any change of `input` (the schema's `replaceOnChanges`). */
export function replacesOnChanges(input: InputDeclaration): boolean {
  if (input.replaceOnChanges !== undefined) return input.replaceOnChanges;
  const effects = [...(input.change ? [input.change] : []), ...Object.values(input.changes ?? {})];
  return effects.some((change) => change.effect === "replaces");
}

/**
 * For each input of the resource's code that a resource input becomes, its path in the schema's
 * inputs: `consumerClusterId` is `consumer.clusterId`, `virtualNodes` is `peerings.*.virtualNodeName`.
 */
export function drawnInputsOf(declaration: ResourceDeclaration): Readonly<Record<string, string>> {
  const drawn: Record<string, string> = {};
  for (const [name, input] of Object.entries(declaration.inputs))
    for (const [code, path] of Object.entries(input.passes ?? {})) drawn[code] = `${name}.${path}`;
  return drawn;
}

/** The resource a property of type `type` takes (`Cluster`, `Peering`; through lists and maps), if any. */
export function takenResourceOf(type: PropertyType): string | undefined {
  if (type.kind === "resource") return type.resource;
  if (type.kind === "list" || type.kind === "map") return takenResourceOf(type.of);
  return undefined;
}

/** The named type a property of type `type` takes its fields from (an access type for a resource), if any. */
export function namedTypeOf(type: PropertyType, accessTypes: Readonly<Record<string, string>>): string | undefined {
  if (type.kind === "object") return type.type;
  const taken = takenResourceOf(type);
  if (taken !== undefined) return accessTypes[taken];
  if (type.kind === "list" || type.kind === "map") return namedTypeOf(type.of, accessTypes);
  return undefined;
}

/** Whether field path `path` (`consumer.kubeconfig`, `*.virtualNodeName`) of type `type` is secret. */
function fieldIsSecret(type: string | undefined, path: string): boolean {
  let current = type;
  for (const part of path.split(".")) {
    if (part === "*") continue;
    const field: { readonly secret?: boolean; readonly type: PropertyType } | undefined =
      current === undefined ? undefined : TYPES[current]?.fields[part];
    if (!field) return false;
    if (field.secret) return true;
    current = field.type.kind === "object" ? field.type.type : undefined;
  }
  return false;
}

/** The access type of each resource that others take, by resource name. */
export function accessTypesOf(declarations: readonly ResourceDeclaration[]): Readonly<Record<string, string>> {
  return Object.fromEntries(declarations.flatMap((d) => (d.access ? [[d.name, d.access.type] as const] : [])));
}

/**
 * The state that is secret whatever the program marked: secret inputs and outputs, the inputs of
 * the code drawn from a secret field of another resource (its kubeconfig), and the access output
 * when it holds a secret. With `served: false`, what the TypeScript SDK registers (it builds
 * `access` in the program).
 */
export function secretStateOf(
  declaration: ResourceDeclaration,
  accessTypes: Readonly<Record<string, string>>,
  served = true,
): string[] {
  const secret = new Set<string>();
  for (const [name, input] of Object.entries(declaration.inputs)) {
    if (input.secret) secret.add(name);
    const type = namedTypeOf(input.type, accessTypes);
    for (const [code, path] of Object.entries(input.passes ?? {})) if (fieldIsSecret(type, path)) secret.add(code);
  }
  for (const [name, output] of Object.entries(declaration.outputs)) if (output.secret) secret.add(name);
  const access = declaration.access;
  if (served && access && Object.keys(access.fromState).some((path) => fieldIsSecret(access.type, path)))
    secret.add("access");
  return [...secret];
}

/** The outputs the schema serves (an internal one is the code's own). */
export function servedOutputsOf(declaration: ResourceDeclaration): [string, OutputDeclaration][] {
  return Object.entries(declaration.outputs).filter(([, output]) => !output.internal);
}

/** Sets `value` at dotted `path` of `into`, making the objects on the way. */
export function setAt(into: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let at = into;
  for (const part of parts.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
  at[parts[parts.length - 1]!] = value;
}

/** The access object of a resource, from its state (`fromState`); fields the state lacks are left out. */
export function accessFromState(
  declaration: ResourceDeclaration,
  state: Readonly<Record<string, unknown>>,
): Record<string, unknown> | undefined {
  if (!declaration.access) return undefined;
  const access: Record<string, unknown> = {};
  for (const [path, key] of Object.entries(declaration.access.fromState))
    if (state[key] !== undefined) setAt(access, path, state[key]);
  return access;
}
