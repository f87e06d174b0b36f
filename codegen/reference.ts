/**
 * The reference pages' tables (docs/reference/<module>.md), made from the declarations: under the
 * headings `## Inputs`, `## Outputs` and `### type \`X\``, the first table is replaced by what the
 * declaration says; the prose around it, and where each type is documented, stay as written.
 * Pure: the pages' current text comes in through `read`.
 */
import {
  RESOURCES,
  TYPES,
  type ChangeEffect,
  type InputDeclaration,
  type PropertyDeclaration,
  type ResourceDeclaration,
} from "../declarations/index.js";
import { accessTypesOf, namedTypeOf, servedOutputsOf, takenResourceOf } from "../declarations/derived.js";

/** A Markdown table of `header` and `rows`, each cell kept on one line. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const cell = (text: string): string => text.replace(/\s+/g, " ").replace(/\|/g, "\\|").trim();
  return [header, header.map(() => "---"), ...rows].map((row) => `| ${row.map(cell).join(" | ")} |`);
}

/** A property's meaning: its description, its type, whether it is a secret, its default. */
function meaning(
  property: PropertyDeclaration,
  accessTypes: Readonly<Record<string, string>>,
  where: TypePages,
): string {
  const type = namedTypeOf(property.type, accessTypes);
  const link =
    type === undefined || where.here.has(type) || !where.pages.has(type)
      ? ""
      : ` ([fields](${where.pages.get(type)}#type-${type.toLowerCase()}))`;
  const isResource = takenResourceOf(property.type) !== undefined;
  const remarks = [
    type === undefined
      ? ""
      : isResource
        ? `to the provider plugin, the \`access\` output (type \`${type}\`${link})`
        : `type \`${type}\`${link}`,
    property.secret ? "a secret" : "",
    property.required ? "required" : "",
    property.default === undefined ? "" : `default ${property.default}`,
  ].filter((remark) => remark !== "");
  return remarks.length === 0 ? property.description : `${property.description} (${remarks.join("; ")})`;
}

/** Which page documents each type (the page of a heading `### type \`X\``), and which types this page does. */
interface TypePages {
  readonly pages: ReadonlyMap<string, string>;
  readonly here: ReadonlySet<string>;
}

/** The types documented on `page` (its `### type \`X\`` headings). */
const typesOn = (page: string): Set<string> =>
  new Set([...page.matchAll(/^### type `(\w+)`$/gm)].map((match) => match[1]!));

/** What a change does, as a row says it. */
const effect = (change: ChangeEffect): string =>
  `${change.effect === "replaces" ? "replaces" : "in place"}: ${change.reason}`;

/** What a change of `input` does: one effect, or one per part the code diffs. */
function changeOf(input: InputDeclaration): string {
  if (input.change) return effect(input.change);
  // Parts that change alike are named together: `consumerClusterId`, `providerClusterId`: replaces: …
  const alike = new Map<string, string[]>();
  for (const [part, change] of Object.entries(input.changes ?? {}))
    alike.set(effect(change), [...(alike.get(effect(change)) ?? []), `\`${part}\``]);
  const parts = [...alike].map(([said, names]) => `${names.join(", ")}: ${said}`);
  return parts.length > 0 ? parts.join("; ") : "no change of it is told apart: the engine compares it";
}

/** The tables of `declaration`'s page, by the heading they sit under. */
function tablesOf(declaration: ResourceDeclaration, where: TypePages): Map<string, string[]> {
  const accessTypes = accessTypesOf(RESOURCES);
  const outputs: [string, PropertyDeclaration][] = servedOutputsOf(declaration);
  if (declaration.access)
    outputs.push([
      "access",
      { type: { kind: "object", type: declaration.access.type }, description: declaration.access.description },
    ]);
  const tables = new Map<string, string[]>([
    [
      "## Inputs",
      table(
        ["input", "meaning", "a change"],
        Object.entries(declaration.inputs).map(([name, input]) => [
          `\`${name}\``,
          meaning(input, accessTypes, where),
          changeOf(input),
        ]),
      ),
    ],
    [
      "## Outputs",
      table(
        ["output", "meaning"],
        outputs.map(([name, output]) => [`\`${name}\``, meaning(output, accessTypes, where)]),
      ),
    ],
  ]);
  for (const [name, type] of Object.entries(TYPES))
    tables.set(
      `### type \`${name}\``,
      table(
        ["field", "meaning"],
        Object.entries(type.fields).map(([field, spec]) => [`\`${field}\``, meaning(spec, accessTypes, where)]),
      ),
    );
  return tables;
}

/** `page` with the first table under each heading of `tables` replaced by that heading's table. */
export function withTables(page: string, tables: ReadonlyMap<string, readonly string[]>): string {
  const lines = page.split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    out.push(line);
    const generated = tables.get(line.trim());
    if (!generated) continue;
    // Copy the prose up to the table, then skip the old table's lines and put the new one.
    let j = i + 1;
    while (j < lines.length && !lines[j]!.startsWith("|") && !lines[j]!.startsWith("#")) out.push(lines[j++]!);
    if (j >= lines.length || !lines[j]!.startsWith("|")) throw new Error(`reference: no table under "${line.trim()}"`);
    while (j < lines.length && lines[j]!.startsWith("|")) j++;
    out.push(...generated);
    i = j - 1;
  }
  return out.join("\n");
}

/** Each reference page, with its generated tables, from `read` (a page's current text). */
export function referencePages(read: (path: string) => string): Record<string, string> {
  const pages = new Map(
    RESOURCES.map((declaration) => [`${declaration.module}.md`, read(`docs/reference/${declaration.module}.md`)]),
  );
  const typePages = new Map(
    [...pages].flatMap(([file, page]) => [...typesOn(page)].map((type) => [type, file] as const)),
  );
  return Object.fromEntries(
    [...pages].map(([file, page]) => {
      const declaration = RESOURCES.find((candidate) => `${candidate.module}.md` === file)!;
      return [
        `docs/reference/${file}`,
        withTables(page, tablesOf(declaration, { pages: typePages, here: typesOn(page) })),
      ];
    }),
  );
}
