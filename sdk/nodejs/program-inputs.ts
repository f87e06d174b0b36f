/**
 * What a resource of this package hands its code, from a program's Args, as its declaration says:
 * each input under its own name (a secret one marked secret, a left-out one with the value the
 * declaration sends), each resource it takes turned into the inputs of the code it `passes`, and
 * every output registered, so that the class's declared outputs are filled.
 */
import * as pulumi from "@pulumi/pulumi";
import type { ResourceDeclaration } from "../../declarations/index.js";
import { RESOURCES } from "../../declarations/index.js";
import { takenResourceOf } from "../../declarations/derived.js";
import { ownUrn } from "./own-urn.js";

/** The value at dotted `path` of a resource object of this program (`consumer.kubeconfig`). */
function valueAt(resource: unknown, path: string): unknown {
  return path.split(".").reduce<unknown>((at, part) => (at as Record<string, unknown> | undefined)?.[part], resource);
}

/** Where the SDK's resource object of `name` holds access field `path`. */
function pathInProgram(name: string, path: string): string {
  const declaration = RESOURCES.find((candidate) => candidate.name === name);
  return declaration?.access?.inProgram?.[path] ?? path;
}

/** The code's inputs that resource input `value` (a resource, or a list of them) of `declaration` becomes. */
function passedInputs(
  passes: Readonly<Record<string, string>>,
  taken: string,
  value: unknown,
): Record<string, pulumi.Input<unknown>> {
  const inputs: Record<string, pulumi.Input<unknown>> = {};
  for (const [code, path] of Object.entries(passes)) {
    if (path.startsWith("*.")) {
      const field = pathInProgram(taken, path.slice(2));
      inputs[code] = pulumi.all(((value as unknown[] | undefined) ?? []).map((item) => valueAt(item, field)));
    } else inputs[code] = valueAt(value, pathInProgram(taken, path)) as pulumi.Input<unknown>;
  }
  return inputs;
}

/**
 * The inputs resource `name` of `declaration` hands its code, from `args` (with its own URN, for
 * the code's messages and the objects it owns).
 */
export function programInputsOf(
  declaration: ResourceDeclaration,
  args: object,
  name: string,
  opts: pulumi.CustomResourceOptions | undefined,
): Record<string, pulumi.Input<unknown>> {
  const given = args as Record<string, unknown>;
  const inputs: Record<string, pulumi.Input<unknown>> = {};
  for (const [key, input] of Object.entries(declaration.inputs)) {
    const taken = takenResourceOf(input.type);
    if (taken && input.passes) {
      Object.assign(inputs, given[key] === undefined ? {} : passedInputs(input.passes, taken, given[key]));
      continue;
    }
    const value = (given[key] ?? input.sent) as pulumi.Input<unknown> | undefined;
    inputs[key] = input.secret && value !== undefined ? pulumi.secret(value) : value;
  }
  for (const key of Object.keys(declaration.outputs)) if (!(key in inputs)) inputs[key] = undefined;
  return { ...inputs, ...ownUrn(declaration.name, name, opts) };
}
