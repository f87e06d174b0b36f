/**
 * The package schema (schema.json), made from the declarations: what the provider plugin serves
 * and what `pulumi package gen-sdk` makes the Go, Python and .NET SDKs from. Pure.
 */
import {
  PACKAGE_NAME,
  RESOURCES,
  TYPES,
  typeTokenOf,
  type PropertyDeclaration,
  type PropertyType,
  type ResourceDeclaration,
} from "../declarations/index.js";
import { accessTypesOf, replacesOnChanges, servedOutputsOf } from "../declarations/derived.js";

/** The package's facts that are not a resource's: names, description, the languages' settings. */
const PACKAGE_FACTS = {
  name: PACKAGE_NAME,
  displayName: "pulumi-liqo",
  publisher: "pulumi-liqo",
  logoUrl: "https://raw.githubusercontent.com/pulumi-liqo/pulumi-liqo/main/docs/logo.png",
  description:
    "Peers Kubernetes clusters the way Liqo does: authentication, parameters negotiation, " +
    "virtual node and a WireGuard network fabric, out-of-band or in-band. Served by the " +
    "provider plugin pulumi-resource-liqo to programs of any language (type tokens such as " +
    "liqo:index:Cluster); the TypeScript SDK also offers them as dynamic resources (such as " +
    "pulumi-nodejs:dynamic/liqo:Cluster), which take a Cluster or a Peering where the plugin's " +
    "resources take its access output.",
  keywords: ["kubernetes", "liqo", "multi-cluster", "wireguard"],
  license: "Apache-2.0",
  meta: { supportPack: true },
};

/** The language settings, after `types` and `resources` in the file as `pulumi package` writes them. */
const LANGUAGES = {
  nodejs: { packageName: "pulumi-liqo" },
  go: { importBasePath: "github.com/pulumi-liqo/pulumi-liqo/sdk/go/liqo", respectSchemaVersion: true },
};

/** A property's type in the schema's words. */
function typeSpec(type: PropertyType, accessTypes: Readonly<Record<string, string>>): Record<string, unknown> {
  switch (type.kind) {
    case "string":
      return type.values ? { type: "string", enum: type.values.map((value) => ({ value })) } : { type: "string" };
    case "integer":
    case "number":
    case "boolean":
      return { type: type.kind };
    case "list":
      return { type: "array", items: typeSpec(type.of, accessTypes) };
    case "map":
      return { type: "object", additionalProperties: typeSpec(type.of, accessTypes) };
    case "object":
      return { $ref: `#/types/${typeTokenOf({ name: type.type })}` };
    case "resource":
      return { $ref: `#/types/${typeTokenOf({ name: accessTypes[type.resource]! })}` };
  }
}

/** A property's description in the schema: its text, then its default and example. */
export function describe(property: Pick<PropertyDeclaration, "description" | "default" | "example">): string {
  return [
    property.description,
    property.default === undefined ? "" : `Default: ${property.default}.`,
    property.example === undefined ? "" : `Example: ${property.example}.`,
  ]
    .filter((part) => part !== "")
    .join(" ");
}

/** One property of the schema. */
function propertySpec(
  property: PropertyDeclaration,
  accessTypes: Readonly<Record<string, string>>,
  replaceOnChanges = false,
): Record<string, unknown> {
  return {
    ...typeSpec(property.type, accessTypes),
    description: describe(property),
    ...(property.secret ? { secret: true } : {}),
    ...(replaceOnChanges ? { replaceOnChanges: true } : {}),
  };
}

/** The names of `properties` that are required. */
const requiredOf = (properties: readonly [string, PropertyDeclaration][]): string[] =>
  properties.filter(([, property]) => property.required).map(([name]) => name);

/** One resource of the schema. */
function resourceSpec(declaration: ResourceDeclaration, accessTypes: Readonly<Record<string, string>>) {
  const inputs = Object.entries(declaration.inputs);
  const outputs: [string, PropertyDeclaration][] = servedOutputsOf(declaration);
  const access = declaration.access;
  if (access)
    outputs.push(["access", { type: { kind: "object", type: access.type }, description: access.description }]);
  return {
    description: declaration.summary,
    inputProperties: Object.fromEntries(
      inputs.map(([name, input]) => [name, propertySpec(input, accessTypes, replacesOnChanges(input))]),
    ),
    requiredInputs: requiredOf(inputs),
    properties: Object.fromEntries(outputs.map(([name, output]) => [name, propertySpec(output, accessTypes)])),
    required: requiredOf(outputs),
  };
}

/** The whole schema of the package at `version`. */
export function packageSchema(version: string): Record<string, unknown> {
  const accessTypes = accessTypesOf(RESOURCES);
  return {
    ...PACKAGE_FACTS,
    version,
    language: LANGUAGES,
    types: Object.fromEntries(
      Object.entries(TYPES).map(([name, type]) => {
        const fields = Object.entries(type.fields);
        const required = requiredOf(fields);
        return [
          typeTokenOf({ name }),
          {
            type: "object",
            description: type.description,
            properties: Object.fromEntries(fields.map(([field, spec]) => [field, propertySpec(spec, accessTypes)])),
            ...(required.length > 0 ? { required } : {}),
          },
        ];
      }),
    ),
    resources: Object.fromEntries(
      RESOURCES.map((declaration) => [typeTokenOf(declaration), resourceSpec(declaration, accessTypes)]),
    ),
  };
}
