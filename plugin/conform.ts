/**
 * Inputs brought to the types schema.json gives them. Pure.
 *
 * Not every language sends what its schema says: Pulumi YAML (v1.25.0) sent a `cpu` of `"2"` (a
 * string config value) as the number 2, which a Kubernetes API server then refused in the
 * ResourceRequest. A scalar of the wrong kind that converts without loss is converted (a number or
 * a boolean to a string, a numeric string to a number, "true"/"false" to a boolean); anything else
 * is left for the resource's own checks to name. Secrets stay secret, unknowns unknown.
 */
import { UNKNOWN } from "../core/resources/inputs.js";
import { isSecret, secret } from "./values.js";

/** A property's type, as schema.json writes it. */
export interface TypeSpec {
  readonly type?: string;
  readonly $ref?: string;
  readonly items?: TypeSpec;
  readonly additionalProperties?: TypeSpec;
}

/** An object type of schema.json: its properties. */
export interface ObjectSpec {
  readonly properties?: Readonly<Record<string, TypeSpec>>;
}

/** `value` brought to `spec`, object types looked up in `types` (by token, e.g. `liqo:index:Taint`). */
export function conform(value: unknown, spec: TypeSpec, types: Readonly<Record<string, ObjectSpec>>): unknown {
  if (value === UNKNOWN || value === null || value === undefined) return value;
  if (isSecret(value)) return secret(conform(value.value, spec, types));
  if (spec.$ref?.startsWith("#/types/")) {
    const object = types[spec.$ref.slice("#/types/".length)];
    return object ? conformObject(value, object.properties ?? {}, types) : value;
  }
  switch (spec.type) {
    case "string":
      return typeof value === "number" || typeof value === "boolean" ? String(value) : value;
    case "integer":
    case "number":
      return typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value)) ? Number(value) : value;
    case "boolean":
      return value === "true" ? true : value === "false" ? false : value;
    case "array":
      return Array.isArray(value) && spec.items ? value.map((item) => conform(item, spec.items!, types)) : value;
    case "object":
      return spec.additionalProperties && typeof value === "object" && !Array.isArray(value)
        ? Object.fromEntries(
            Object.entries(value).map(([key, item]) => [key, conform(item, spec.additionalProperties!, types)]),
          )
        : value;
    default:
      return value;
  }
}

/** The properties of `value` (an object) brought to `properties`; others left as they are. */
export function conformObject(
  value: unknown,
  properties: Readonly<Record<string, TypeSpec>>,
  types: Readonly<Record<string, ObjectSpec>>,
): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, properties[key] ? conform(item, properties[key], types) : item]),
  );
}
