/**
 * The engine's resource operations, mapped onto a resource's own code: the plugin's whole
 * translation, with plain values in and out (server.ts converts them from and to the wire).
 *
 * Each request's inputs are drawn into the inputs the code takes (kinds.ts), their secrets noted
 * and then revealed, and the resource's URN added where the code looks for it (so its progress and
 * explanations show on the resource's row). The code's outputs go back with the URN taken out,
 * the operation's own timeout taken back out, the resource's `access` object added, and every
 * secret wrapped again. The operation's `customTimeouts` becomes the deadline the code's steps
 * share (its `timeoutSeconds`), and a preview of a create or update runs no step at all.
 */
import { logToEngine } from "../core/resources/engine-log.js";
import { TAKEN_FROM, URN_INPUT } from "../core/resources/hidden-inputs.js";
import { describeOwner } from "../core/api/names.js";
import { UNKNOWN } from "../core/resources/inputs.js";
import { codeInputsOf, passesAsIs, schemaInputsOf, schemaPathOf, type Kind } from "./kinds.js";
import { detailedDiffOf, type PropertyChange } from "./diff.js";
import { importLabel, parseImportId, readKubeconfigFile } from "./imports.js";
import { withinTimeout } from "./timeouts.js";
import {
  compact,
  containsSecret,
  reveal,
  revealed,
  secret,
  secretKeysOf,
  withSecrets,
  type Properties,
} from "./values.js";

/** The resource an operation is about. */
export interface Target {
  /** The resource's kind (from its type token). */
  readonly kind: Kind;
  /** Its type token, e.g. `liqo:index:Peering`. */
  readonly type: string;
  /** Its URN. */
  readonly urn: string;
}

/** One check failure, as the engine takes it. */
export interface Failure {
  /** The top-level input at fault, or "" when its value holds a secret: the engine prints that value. */
  readonly property: string;
  /** `<input path>: <what is wrong>`. */
  readonly reason: string;
}

const nameOf = (urn: string): string => urn.slice(urn.lastIndexOf("::") + 2);

/** The code's inputs for schema `inputs` of `target`, revealed, with its URN. */
function codeInputs(target: Target, inputs: Properties): Properties {
  return { ...revealed(codeInputsOf(target.kind, inputs)), [URN_INPUT]: target.urn };
}

/** A resource's state (its outputs, as the engine stored them), revealed, as the code takes it back. */
function codeState(target: Target, state: Properties): Properties {
  const { access: _access, ...outputs } = revealed(state);
  return { ...outputs, [URN_INPUT]: target.urn };
}

/**
 * Outputs for the engine from the code's `outputs`: without the URN, with `timeoutSeconds` as
 * `given` holds it (the operation's own timeout is no input), the `access` object added, and
 * every output of `secretKeys` (and of the kind's own) wrapped as a secret.
 */
function engineOutputs(
  target: Target,
  outputs: Properties,
  given: Properties,
  secretKeys: readonly string[],
): Properties {
  const { [URN_INPUT]: _urn, timeoutSeconds: _timeout, ...rest } = outputs;
  const own = compact({ ...rest, timeoutSeconds: given["timeoutSeconds"] });
  const withAccess = target.kind.access ? { ...own, access: target.kind.access(own) } : own;
  return withSecrets(withAccess, [...secretKeys, ...target.kind.secretOutputs]);
}

/** Validates `news` (schema inputs) against the resource's rules; hands back the inputs to store. */
export async function check(
  target: Target,
  olds: Properties,
  news: Properties,
): Promise<{ inputs: Properties; failures: Failure[] }> {
  const { kind } = target;
  const isCreate = Object.keys(olds).length === 0;
  const result = await kind.code.check(isCreate ? {} : codeInputs(target, olds), codeInputs(target, news));
  const codeNews = revealed(codeInputsOf(kind, news));
  // The code may normalize an input it takes as it is (a token trimmed): store what it checked.
  const inputs = { ...news };
  for (const key of Object.keys(news)) {
    const checked = result.inputs?.[key];
    if (!passesAsIs(kind, key) || checked === undefined) continue;
    if (JSON.stringify(checked) !== JSON.stringify(codeNews[key]))
      inputs[key] = containsSecret(news[key]) ? secret(checked) : checked;
  }
  const failures = (result.failures ?? []).map((failure) => failureOf(target, news, failure.reason));
  return { inputs, failures };
}

/** A failure of the code (`<input>: <reason>`), named as the schema names the input. */
function failureOf(target: Target, news: Properties, reason: string): Failure {
  const split = reason.indexOf(": ");
  const path = split > 0 ? schemaPathOf(target.kind, reason.slice(0, split)) : "";
  const top = path.split(".")[0] ?? "";
  const named = path ? `${path}${reason.slice(split)}` : reason;
  // The engine prints the program's value of a failure's property: never one holding a secret.
  const property = top in news && !containsSecret(news[top]) ? top : "";
  return { property, reason: named };
}

/** What a diff answers. */
export interface DiffAnswer {
  /** Whether anything changed. */
  readonly changes: boolean;
  /** The top-level inputs whose change replaces the resource. */
  readonly replaces: string[];
  /** The top-level inputs that changed. */
  readonly diffs: string[];
  /** Each change, by the schema's path of the input (or output) that changed. */
  readonly detailedDiff: PropertyChange[];
  /** Whether a replacement deletes the old resource first. */
  readonly deleteBeforeReplace: boolean;
}

/** Diffs the stored state `olds` against new schema inputs `news`, by the resource's own rules. */
export async function diff(target: Target, id: string, olds: Properties, news: Properties): Promise<DiffAnswer> {
  const { kind } = target;
  const state = codeState(target, olds);
  const inputs = codeInputs(target, news);
  const found = kind.changes(state, inputs);
  // The code's diff also tells the engine why, a line per changed input, on the resource's row.
  const answer = await kind.code.diff(id, state, inputs);
  const detailedDiff = detailedDiffOf(found, (path) => schemaPathOf(kind, path), new Set(Object.keys(news)));
  const tops = (paths: readonly string[]) => [...new Set(paths.map((path) => path.split(".")[0]!))];
  return {
    changes: found.changed.length > 0,
    replaces: tops((answer.replaces ?? []).map((path) => schemaPathOf(kind, path))),
    diffs: tops(detailedDiff.map((change) => change.path)),
    detailedDiff,
    deleteBeforeReplace: answer.deleteBeforeReplace ?? false,
  };
}

/** How one create, update or delete runs: its `customTimeouts` (0: none) and whether it is a preview. */
export interface Run {
  /** The operation's timeout in seconds, from the resource's `customTimeouts`; 0 when it has none. */
  readonly timeoutSeconds: number;
  /** Whether this is a preview: nothing is changed, outputs not known yet are marked unknown. */
  readonly preview: boolean;
}

/** The code's inputs, with the operation's timeout (when it has one) as the deadline its steps share. */
const timed = (inputs: Properties, run: Run): Properties =>
  run.timeoutSeconds > 0 ? { ...inputs, timeoutSeconds: run.timeoutSeconds } : inputs;

/** The operation's label in errors: `Peering "b-to-a": create`. */
const labelOf = (target: Target, operation: string): string =>
  `${target.kind.name} "${nameOf(target.urn)}": ${operation}`;

/**
 * Turns a partial failure of the code (an error carrying what was made) into one whose properties
 * are outputs for the engine, so that it records them; hands any other error back as it is.
 */
function asPartial(target: Target, error: unknown, given: Properties, secretKeys: readonly string[]): unknown {
  const made = error as { id?: unknown; properties?: Properties } | undefined;
  if (typeof made?.id !== "string" || made.id === "" || !made.properties) return error;
  return Object.assign(error as Error, { properties: engineOutputs(target, made.properties, given, secretKeys) });
}

/** Creates the resource from schema `inputs`; in preview, answers what it would hold. */
export async function create(
  target: Target,
  inputs: Properties,
  run: Run,
  outputNames: readonly string[],
): Promise<{ id: string; properties: Properties }> {
  const given = revealed(codeInputsOf(target.kind, inputs));
  const secretKeys = secretKeysOf(codeInputsOf(target.kind, inputs));
  if (run.preview) {
    const unknowns = Object.fromEntries(outputNames.filter((name) => !(name in given)).map((name) => [name, UNKNOWN]));
    return { id: "", properties: withSecrets({ ...unknowns, ...given }, secretKeys) };
  }
  try {
    const made = await withinTimeout(target.kind.code.create(timed(codeInputs(target, inputs), run)), {
      seconds: run.timeoutSeconds,
      what: labelOf(target, "create"),
    });
    return { id: made.id, properties: engineOutputs(target, made.outs ?? {}, given, secretKeys) };
  } catch (error) {
    throw asPartial(target, error, given, secretKeys);
  }
}

/** Updates the resource from state `olds` to schema inputs `news`; in preview, answers what it would hold. */
export async function update(
  target: Target,
  id: string,
  olds: Properties,
  news: Properties,
  run: Run,
): Promise<{ properties: Properties }> {
  const given = revealed(codeInputsOf(target.kind, news));
  const secretKeys = [...secretKeysOf(codeInputsOf(target.kind, news)), ...secretKeysOf(olds)];
  const state = codeState(target, olds);
  if (run.preview) return { properties: engineOutputs(target, { ...state, ...given }, given, secretKeys) };
  try {
    const updated = await withinTimeout(target.kind.code.update(id, state, timed(codeInputs(target, news), run)), {
      seconds: run.timeoutSeconds,
      what: labelOf(target, "update"),
    });
    return { properties: engineOutputs(target, updated.outs ?? {}, given, secretKeys) };
  } catch (error) {
    throw asPartial(target, error, given, secretKeys);
  }
}

/**
 * Reads the resource as it is now, from its stored state (refresh). An empty id says it is gone.
 * The inputs stay as stored: a refresh records what the clusters hold, never what the program said.
 * With neither state nor inputs, it is an import (see {@link importOf}).
 */
export async function read(
  target: Target,
  id: string,
  state: Properties,
  inputs: Properties,
): Promise<{ id: string; properties: Properties; inputs: Properties }> {
  if (Object.keys(state).length === 0 && Object.keys(inputs).length === 0) return importOf(target, id);
  const found = await target.kind.code.read(id, codeState(target, state));
  if (!found.id) return { id: "", properties: {}, inputs: {} };
  const properties = engineOutputs(
    target,
    found.props ?? {},
    { timeoutSeconds: reveal(state["timeoutSeconds"]) },
    secretKeysOf(state),
  );
  return { id: found.id, properties, inputs };
}

/** Deletes the resource of stored state `state`. */
export async function remove(target: Target, id: string, state: Properties, run: Run): Promise<void> {
  await withinTimeout(target.kind.code.delete(id, timed(codeState(target, state), run)), {
    seconds: run.timeoutSeconds,
    what: labelOf(target, "delete"),
  });
}

/**
 * Imports the resource of import ID `id` (`pulumi import`: a read with neither state nor inputs):
 * its outputs, and the inputs that reproduce it without any the clusters cannot show, which a
 * warning on the resource's row names for the program to give. Nothing is written anywhere.
 */
async function importOf(
  target: Target,
  id: string,
): Promise<{ id: string; properties: Properties; inputs: Properties }> {
  const { kind } = target;
  const label = importLabel(kind.name, id);
  if ("refused" in kind.imports) throw new Error(`${label}: ${kind.imports.refused}`);
  const parsed = parseImportId(kind.name, id, kind.imports.object);
  const found = await kind.imports.run(parsed.object, readKubeconfigFile(label, parsed), label, target.urn);
  const taken = found.takenFrom ? { [TAKEN_FROM]: found.takenFrom } : {};
  const properties = engineOutputs(target, { ...found.outputs, ...taken }, {}, []);
  const supply = found.unrecovered.map((each) => `${schemaPathOf(kind, each.input)} (${each.why})`);
  if (found.takenFrom)
    await logToEngine(
      `${label}: made by ${kind.name} ${describeOwner(found.takenFrom)}, which this one takes over: its next update ` +
        `records this one as the owner, after which that one can no longer change it. Remove it from that stack ` +
        `without deleting it (pulumi state delete) so that one stack manages it`,
      target.urn,
      { severity: "warning" },
    );
  await logToEngine(
    `${label}: give ${kind.name} "${nameOf(target.urn)}" these inputs in the program, which the import cannot recover: ` +
      `${supply.join("; ")}. Left out as not set, since the clusters keep no trace of them: ` +
      `${found.untraced.map((input) => schemaPathOf(kind, input)).join(", ")}`,
    target.urn,
    { severity: "warning" },
  );
  return { id: found.id, properties, inputs: compact(schemaInputsOf(kind, { ...found.inputs })) };
}
