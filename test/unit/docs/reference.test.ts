/**
 * The reference pages (docs/reference/<resource>.md) cannot drift from the code. Each page's
 * Inputs and Outputs tables name exactly the resource's inputs and outputs in schema.json and the
 * SDK; every object type the schema uses is documented once, field by field; an input's row says
 * what its change does as the resource's diff rules decide it (replaces, or in place); and every
 * input and output has TSDoc in the SDK, whose literal `@default` the row repeats.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as ts from "typescript";
import type { DiffRule } from "../../../core/resources/diff-rules.js";
import { CLUSTER_DIFF } from "../../../core/resources/cluster.js";
import { NAMESPACE_OFFLOADING_DIFF } from "../../../core/resources/namespace-offloading.js";
import { PEERING_DIFF } from "../../../core/resources/peering.js";
import { PEERING_TOKEN_DIFF } from "../../../core/resources/peering-token.js";
import { TUNNEL_DIFF } from "../../../core/resources/tunnel.js";
import { declaredOutputs, sdkProgram } from "../../support/sdk-program.js";
import { headingsOf, tableUnder } from "./markdown.js";

const REPO = join(__dirname, "..", "..", "..");

interface PropertySchema {
  readonly $ref?: string;
  readonly items?: PropertySchema;
  readonly secret?: boolean;
}
interface ObjectSchema {
  readonly inputProperties?: Record<string, PropertySchema>;
  readonly properties: Record<string, PropertySchema>;
}
interface PackageSchema {
  readonly resources: Record<string, ObjectSchema>;
  readonly types: Record<string, ObjectSchema>;
}
const schema = JSON.parse(readFileSync(join(REPO, "schema.json"), "utf8")) as PackageSchema;

/**
 * Each resource: its page, its SDK file and names, its diff rules, and which rules an SDK input's
 * change goes through (an input the SDK turns into others, such as a `Cluster` passed as
 * `consumer`, is diffed as its id and its kubeconfig); other inputs are diffed under their own name.
 */
const RESOURCES = {
  Cluster: { page: "cluster.md", sdk: "cluster.ts", args: "ClusterArgs", rules: CLUSTER_DIFF, diffedAs: {} },
  PeeringToken: {
    page: "peering-token.md",
    sdk: "peering-token.ts",
    args: "PeeringTokenArgs",
    rules: PEERING_TOKEN_DIFF,
    diffedAs: { cluster: ["kubeconfig", "clusterId", "authUrl", "authCaCert"] },
  },
  Peering: {
    page: "peering.md",
    sdk: "peering.ts",
    args: "PeeringArgs",
    rules: PEERING_DIFF,
    diffedAs: {
      consumer: ["consumerClusterId", "consumerKubeconfig"],
      provider: ["provider.clusterId", "provider.authUrl", "provider.authCaCert"],
      providerCluster: ["providerClusterId", "providerKubeconfig", "providerAuthUrl"],
    },
  },
  Tunnel: {
    page: "tunnel.md",
    sdk: "tunnel.ts",
    args: "TunnelArgs",
    rules: TUNNEL_DIFF,
    diffedAs: { peering: ["consumerClusterId", "providerClusterId", "consumerKubeconfig", "tenantNamespace"] },
  },
  NamespaceOffloading: {
    page: "namespace-offloading.md",
    sdk: "namespace-offloading.ts",
    args: "NamespaceOffloadingArgs",
    rules: NAMESPACE_OFFLOADING_DIFF,
    diffedAs: { consumer: ["consumerClusterId", "consumerKubeconfig"], peerings: ["virtualNodes"] },
  },
} as const;
type ResourceName = keyof typeof RESOURCES;
const NAMES = Object.keys(RESOURCES) as ResourceName[];
/** Rules about what `pulumi refresh` recorded, not about an input. */
const NOT_INPUTS = new Set(["status"]);

const pageText = (name: ResourceName): string =>
  readFileSync(join(REPO, "docs", "reference", RESOURCES[name].page), "utf8");
const typeName = (ref: string): string => ref.replace(/^#\/types\/liqo:index:/, "");
const refOf = (p: PropertySchema): string | undefined => p.$ref ?? p.items?.$ref;
const isTypeRef = (ref: string | undefined): ref is string => !!ref?.startsWith("#/types/");

/** The input or output named in a row's first cell (`` `name` ``, perhaps followed by a remark). */
const nameOfRow = (row: readonly string[]): string => /^`([^`]+)`/.exec(row[0] ?? "")?.[1] ?? `(no name: ${row[0]})`;
const rowsByName = (rows: readonly string[][]): Map<string, string[]> =>
  new Map(rows.map((row) => [nameOfRow(row), row]));
/** A cell as a reader reads it: no code marks or quotes. */
const plain = (cell: string): string => cell.replace(/[`"]/g, "");

/** What one page says wrongly or leaves out, against the schema, the diff rules and the SDK. */
function pageProblems(name: ResourceName, page: string, sdk: SdkDocs): string[] {
  const problems: string[] = [];
  const resource = schema.resources[`liqo:index:${name}`]!;
  const inputs = resource.inputProperties ?? {};
  const compare = (what: string, documented: Iterable<string>, actual: Iterable<string>): void => {
    const shown = [...documented].sort();
    const real = [...actual].sort();
    for (const n of real) if (!shown.includes(n)) problems.push(`${what} ${n}: not documented`);
    for (const n of shown) if (!real.includes(n)) problems.push(`${what} ${n}: documented, but there is none`);
  };

  const inputRows = tableUnder(page, "Inputs");
  const outputRows = tableUnder(page, "Outputs");
  if (!inputRows) problems.push("no table under the heading Inputs");
  if (!outputRows) problems.push("no table under the heading Outputs");
  const inputsShown = rowsByName(inputRows ?? []);
  const outputsShown = rowsByName(outputRows ?? []);
  compare("input", inputsShown.keys(), Object.keys(inputs));
  compare("output", outputsShown.keys(), Object.keys(resource.properties));

  const { rules, diffedAs } = RESOURCES[name];
  const ruleOf = rules as Record<string, DiffRule<object, object>>;
  const mapped = new Set<string>();
  for (const [input, property] of Object.entries(inputs)) {
    const row = inputsShown.get(input);
    if (!row) continue;
    const ref = refOf(property);
    if (isTypeRef(ref) && !row[1]?.includes(`type \`${typeName(ref)}\``))
      problems.push(`input ${input}: its row does not name its type \`${typeName(ref)}\``);
    if (property.secret && !row[1]?.includes("secret") && !row[0]?.includes("secret"))
      problems.push(`input ${input}: a secret, and its row does not say so`);
    const keys = (diffedAs as Record<string, readonly string[]>)[input] ?? [input];
    keys.forEach((k) => mapped.add(k));
    const unruled = keys.filter((k) => ruleOf[k] === undefined);
    if (unruled.length > 0) problems.push(`input ${input}: no diff rule for ${unruled.join(", ")}`);
    const effects = new Set(keys.flatMap((k) => ruleOf[k]?.effect ?? []));
    const change = row[2] ?? "";
    for (const [effect, words] of [
      ["replaces", "replaces"],
      ["updates in place", "in place"],
    ] as const) {
      if (effects.has(effect) && !change.includes(words))
        problems.push(`input ${input}: a change of it ${effect}, and its row does not say "${words}"`);
      if (!effects.has(effect) && change.includes(words))
        problems.push(`input ${input}: its row says "${words}", and no change of it ${effect}`);
    }
    const fallback = sdk.inputDefaults.get(input);
    if (fallback !== undefined && !plain(row[1] ?? "").includes(`default ${fallback}`))
      problems.push(
        `input ${input}: the SDK's @default is ${fallback}, and its row does not say "default ${fallback}"`,
      );
  }
  for (const key of Object.keys(rules))
    if (!mapped.has(key) && !NOT_INPUTS.has(key))
      problems.push(`diff rule ${key}: no input of the page goes through it`);

  for (const [output, property] of Object.entries(resource.properties)) {
    const ref = refOf(property);
    const row = outputsShown.get(output);
    if (row && isTypeRef(ref) && !row[1]?.includes(`type \`${typeName(ref)}\``))
      problems.push(`output ${output}: its row does not name its type \`${typeName(ref)}\``);
  }

  compare("SDK input", sdk.inputs.keys(), Object.keys(inputs));
  compare("SDK output", sdk.outputs.keys(), Object.keys(resource.properties));
  for (const [what, docs] of [
    ["input", sdk.inputs],
    ["output", sdk.outputs],
  ] as const)
    for (const [n, doc] of docs) if (doc.trim() === "") problems.push(`SDK ${what} ${n}: no TSDoc`);

  const types = typesUsedBy(resource);
  for (const type of types) {
    const documentedOn = NAMES.filter((other) => typeSection(pageFor(other, name, page), type) !== undefined);
    if (documentedOn.length !== 1)
      problems.push(`type ${type}: documented on ${documentedOn.length} reference pages (${documentedOn}), not one`);
    const here = typeSection(page, type);
    if (!here && !page.includes(`#type-${type.toLowerCase()})`))
      problems.push(`type ${type}: neither documented on this page nor linked from it`);
  }
  for (const heading of headingsOf(page)) {
    const type = /^type `(\w+)`$/.exec(heading.text)?.[1];
    if (!type) continue;
    const spec = schema.types[`liqo:index:${type}`];
    if (!spec) {
      problems.push(`type ${type}: documented, but the schema has none`);
      continue;
    }
    compare(`field of ${type}`, rowsByName(typeSection(page, type) ?? []).keys(), Object.keys(spec.properties));
  }
  return problems;
}

/** Page `other`, or `page` itself when `other` is the resource being checked (so a test may alter it). */
const pageFor = (other: ResourceName, name: ResourceName, page: string): string =>
  other === name ? page : pageText(other);
const typeSection = (page: string, type: string): string[][] | undefined => tableUnder(page, `type \`${type}\``);

/** The object types a resource uses, through its inputs and outputs and the types they use. */
function typesUsedBy(resource: ObjectSchema): Set<string> {
  const found = new Set<string>();
  const visit = (p: PropertySchema): void => {
    const ref = refOf(p);
    if (!isTypeRef(ref) || found.has(typeName(ref))) return;
    found.add(typeName(ref));
    Object.values(schema.types[ref.slice("#/types/".length)]!.properties).forEach(visit);
  };
  [...Object.values(resource.inputProperties ?? {}), ...Object.values(resource.properties)].forEach(visit);
  return found;
}

/** A resource's SDK docs: each input's and output's TSDoc, and each input's literal `@default`. */
interface SdkDocs {
  readonly inputs: Map<string, string>;
  readonly outputs: Map<string, string>;
  readonly inputDefaults: Map<string, string>;
}

/** Every resource's SDK docs, read with the TypeScript compiler (inherited Args properties included). */
function readSdkDocs(): Map<ResourceName, SdkDocs> {
  // Each resource's Args and declared outputs are generated (sdk/nodejs/generated/), its class is written.
  const sourcesOf = (n: ResourceName): string[] =>
    [RESOURCES[n].sdk, `generated/${RESOURCES[n].sdk}`].map((file) => join(REPO, "sdk", "nodejs", file));
  const files = NAMES.flatMap(sourcesOf);
  const program = sdkProgram(files);
  const checker = program.getTypeChecker();
  const docOf = (symbol: ts.Symbol): string => ts.displayPartsToString(symbol.getDocumentationComment(checker));
  const result = new Map<ResourceName, SdkDocs>();
  for (const name of NAMES) {
    const docs: SdkDocs = { inputs: new Map(), outputs: new Map(), inputDefaults: new Map() };
    for (const file of sourcesOf(name))
      ts.forEachChild(program.getSourceFile(file)!, (node) => {
        if (ts.isInterfaceDeclaration(node) && node.name.text === RESOURCES[name].args) {
          for (const p of checker.getPropertiesOfType(checker.getTypeAtLocation(node))) {
            docs.inputs.set(p.name, docOf(p));
            const fallback = p
              .getJsDocTags(checker)
              .find((t) => t.name === "default")
              ?.text?.map((part) => part.text)
              .join("")
              .trim();
            // Only a literal is held to the page; a default in words ("never", "none") is the row's own.
            if (fallback && /^(-?\d+|true|false|"[^"]*"|`[^`]*`)$/.test(fallback))
              docs.inputDefaults.set(p.name, plain(fallback));
          }
        }
        if (ts.isClassDeclaration(node) && (node.name?.text === name || node.name?.text === `${name}Resource`)) {
          for (const member of declaredOutputs(node)) {
            docs.outputs.set((member.name as ts.Identifier).text, docOf(checker.getSymbolAtLocation(member.name)!));
          }
        }
      });
    result.set(name, docs);
  }
  return result;
}

describe("reference pages", () => {
  const sdk = readSdkDocs();

  test.each(NAMES)(
    "GIVEN docs/reference for %s WHEN held to schema.json, the diff rules and the SDK's TSDoc THEN nothing is missing, extra or contradicting",
    (name) => {
      expect(pageProblems(name, pageText(name), sdk.get(name)!)).toEqual([]);
    },
  );

  test("GIVEN the Tunnel's page with an input's row removed and a row of an input that does not exist WHEN checked THEN both are named", () => {
    const page = pageText("Tunnel")
      .split("\n")
      .filter((line) => !line.startsWith("| `mtu` |"))
      .join("\n")
      .replace("| `port` |", "| `listenPort` | gone | in place: x |\n| `port` |");
    expect(pageProblems("Tunnel", page, sdk.get("Tunnel")!)).toEqual(
      expect.arrayContaining(["input mtu: not documented", "input listenPort: documented, but there is none"]),
    );
  });

  test("GIVEN the Peering's page saying a replacing input updates in place, and a type's field gone WHEN checked THEN both are named", () => {
    const page = pageText("Peering")
      .replace(/(\| `virtualNodeName` \|[^|]*\| )replaces/, "$1in place")
      .replace(/\n\| `sharePercent` \|[^\n]*/, "");
    expect(pageProblems("Peering", page, sdk.get("Peering")!)).toEqual(
      expect.arrayContaining([
        'input virtualNodeName: a change of it replaces, and its row does not say "replaces"',
        "field of ResourceRequest sharePercent: not documented",
      ]),
    );
  });

  test("GIVEN the Cluster's page with a default changed WHEN checked THEN the SDK's @default is named", () => {
    const page = pageText("Cluster").replace(/(\| `timeoutSeconds` \|[^|]*)default 300/, "$1default 600");
    expect(pageProblems("Cluster", page, sdk.get("Cluster")!)).toEqual([
      'input timeoutSeconds: the SDK\'s @default is 300, and its row does not say "default 300"',
    ]);
  });
});
