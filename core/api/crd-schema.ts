/**
 * Builders of the OpenAPI schemas and CustomResourceDefinitions of the project's custom resources
 * (pure, no I/O): crds.ts and offloading.ts describe their kinds with them.
 */
import type { V1CustomResourceDefinition } from "@kubernetes/client-node";
import { API_GROUP, API_VERSION, MANAGED_BY, MANAGED_BY_LABEL } from "./names.js";

/** An OpenAPI v3 schema, as CustomResourceDefinitions carry it. */
export type Schema = Record<string, unknown>;
/** Any string. */
export const str: Schema = { type: "string" };
/** Any integer. */
export const int: Schema = { type: "integer" };
/** A TCP or UDP port. */
export const port: Schema = { type: "integer", minimum: 1, maximum: 65535 };
/** A map of strings to strings (labels, annotations). */
export const stringMap: Schema = { type: "object", additionalProperties: { type: "string" } };
/** A list of strings. */
export const stringList: Schema = { type: "array", items: { type: "string" } };
/**
 * An object whose content the API server keeps as it is (a pod spec). Spelled as the client's
 * model names it: the client serializes a CustomResourceDefinition through its model, which drops
 * a key spelled as in JSON (`x-kubernetes-preserve-unknown-fields`), and the API server then
 * prunes every field inside.
 */
export const opaque: Schema = { type: "object", x_kubernetes_preserve_unknown_fields: true };
/** An object of `properties`, of which `required` must be set. */
export const obj = (properties: Record<string, Schema>, required: string[] = []): Schema => ({
  type: "object",
  properties,
  ...(required.length ? { required } : {}),
});

/**
 * `schema`, an object, replaced whole by each apply (`x-kubernetes-map-type: atomic`, spelled as
 * the client's model names it, see {@link opaque}). Without it, server-side apply merges an object
 * field by field: an apply whose object is empty releases the fields the manager set before, and
 * the API server stores the object as null, which a required field refuses.
 */
export const atomic = (schema: Schema): Schema => ({ ...schema, x_kubernetes_map_type: "atomic" });

/** A namespaced CustomResourceDefinition of the project's group, with a status subresource when it has a status. */
export function crd(kind: string, plural: string, spec: Schema, status?: Schema): V1CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${API_GROUP}`, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
    spec: {
      group: API_GROUP,
      scope: "Namespaced",
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: API_VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: obj({ spec, ...(status ? { status } : {}) }, ["spec"]) as never },
          // A status subresource keeps writers apart: the requesting side writes the spec, the answering side the status.
          ...(status ? { subresources: { status: {} } } : {}),
        },
      ],
    },
  };
}
