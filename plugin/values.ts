/**
 * Property values as the engine sends them to a plugin that accepts secrets, and back. Pure.
 *
 * A secret arrives as an envelope at whatever depth the program made it secret: `{ <SIG_KEY>:
 * <SECRET_SIG>, value }`. The resources' code takes plain values, so a request is unwrapped once,
 * after its secret-ness was noted; outputs are wrapped again on the way out, or the engine would
 * store them in plain text (it re-marks secrets only for plugins that do not accept them). A value
 * not known yet (preview) arrives as the string {@link UNKNOWN}, at any depth, and an input the
 * program left out may arrive as `null`.
 */
import { UNKNOWN } from "../core/resources/inputs.js";

/** The key that marks a special value: the signature of Pulumi's wire format. */
export const SIG_KEY = "4dabf18193072939515e22adb298388d";
/** The signature of a secret. */
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** A plain object of properties, as a request's `Struct` converts to. */
export type Properties = Record<string, unknown>;

const isObject = (value: unknown): value is Properties =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Whether `value` is a secret's envelope. */
export function isSecret(value: unknown): value is { readonly value: unknown } {
  return isObject(value) && value[SIG_KEY] === SECRET_SIG;
}

/** `value` in a secret's envelope (once: a secret is not wrapped again). */
export function secret(value: unknown): unknown {
  return isSecret(value) ? value : { [SIG_KEY]: SECRET_SIG, value };
}

/** Whether a secret is anywhere in `value`. */
export function containsSecret(value: unknown): boolean {
  if (isSecret(value)) return true;
  if (Array.isArray(value)) return value.some(containsSecret);
  return isObject(value) && Object.values(value).some(containsSecret);
}

/**
 * `value` with every secret's envelope taken off, at any depth, and every property left out
 * (`null` or `undefined`) dropped from its objects: the resources' code tells "given" from "left
 * out" by `undefined`.
 */
export function reveal(value: unknown): unknown {
  if (isSecret(value)) return reveal(value.value);
  if (Array.isArray(value)) return value.map(reveal);
  if (!isObject(value)) return value;
  const plain: Properties = {};
  for (const [key, item] of Object.entries(value)) if (item !== null && item !== undefined) plain[key] = reveal(item);
  return plain;
}

/** {@link reveal} of a whole property map. */
export const revealed = (properties: Properties): Properties => reveal(properties) as Properties;

/**
 * Property `name` of `value`, looking through a secret (the part taken stays secret) and a value
 * not known yet (its parts are not known either); undefined when `value` has none.
 */
export function field(value: unknown, name: string): unknown {
  if (value === UNKNOWN) return UNKNOWN;
  if (isSecret(value)) {
    const part = field(value.value, name);
    return part === undefined || part === null ? part : secret(part);
  }
  return isObject(value) ? value[name] : undefined;
}

/**
 * The value at `path` of `properties`: segments separated by dots, `*` taking the segment after it
 * from each element of an array (`peerings.*.virtualNodeName`).
 */
export function valueAt(properties: unknown, path: string): unknown {
  const [head, ...rest] = path.split(".");
  if (head === undefined || head === "") return properties;
  if (head === "*") {
    const list = isSecret(properties) ? properties.value : properties;
    if (list === UNKNOWN || !Array.isArray(list)) return list === UNKNOWN ? UNKNOWN : undefined;
    const items = list.map((item) => valueAt(item, rest.join(".")));
    return isSecret(properties) ? secret(items) : items;
  }
  const part = field(properties, head);
  return rest.length === 0 ? part : valueAt(part, rest.join("."));
}

/** `properties` without the keys whose values are `undefined` or `null`. */
export function compact(properties: Properties): Properties {
  return Object.fromEntries(Object.entries(properties).filter(([, value]) => value !== undefined && value !== null));
}

/** `properties` with the value at each of `keys` (top-level names) that it holds put in a secret's envelope. */
export function withSecrets(properties: Properties, keys: Iterable<string>): Properties {
  const wrapped = { ...properties };
  for (const key of keys) if (wrapped[key] !== undefined && wrapped[key] !== null) wrapped[key] = secret(wrapped[key]);
  return wrapped;
}

/** The top-level names of `properties` whose values hold a secret anywhere. */
export function secretKeysOf(properties: Properties): string[] {
  return Object.keys(properties).filter((key) => containsSecret(properties[key]));
}
