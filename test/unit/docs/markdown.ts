/**
 * The little of Markdown the docs tests read: headings and their GitHub anchors, the tables under
 * a heading, and the links of a page. Code blocks and inline code are no Markdown to it, as to a
 * renderer: a `[x](y)` inside them is no link and a `# x` inside them is no heading.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";

/** One heading: its level, its text as written, and the anchor GitHub gives it. */
export interface Heading {
  readonly level: number;
  readonly text: string;
  readonly anchor: string;
  /** Index of its line in the page. */
  readonly line: number;
}

/** One link of a page: its target as written, and the line it is on (1-based, for messages). */
export interface Link {
  readonly target: string;
  readonly line: number;
}

/** The page's lines, each with whether it lies inside a fenced code block. */
function linesOf(page: string): { text: string; code: boolean }[] {
  let fenced = false;
  return page.split("\n").map((text) => {
    const fence = /^\s*(```|~~~)/.test(text);
    if (fence) fenced = !fenced;
    return { text, code: fenced || fence };
  });
}

/**
 * The anchor GitHub makes of a heading: lower case, punctuation other than `-` and `_` dropped,
 * spaces to `-`; a repeated anchor gets `-1`, `-2`… in page order.
 */
export function slugOf(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/\s/g, "-");
}

/** Every heading of a page, with its anchor as GitHub renders it (repeats numbered). */
export function headingsOf(page: string): Heading[] {
  const seen = new Map<string, number>();
  const headings: Heading[] = [];
  linesOf(page).forEach(({ text, code }, line) => {
    const match = code ? null : /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(text);
    if (!match) return;
    const base = slugOf(match[2]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    headings.push({ level: match[1]!.length, text: match[2]!, anchor: count === 0 ? base : `${base}-${count}`, line });
  });
  return headings;
}

/** The text of a line with inline code spans removed (links inside them are not links). */
const withoutInlineCode = (text: string): string => text.replace(/(`+)[\s\S]*?\1/g, "");

/** Every inline link and image of a page (`[text](target)`), outside code. */
export function linksOf(page: string): Link[] {
  const links: Link[] = [];
  linesOf(page).forEach(({ text, code }, index) => {
    if (code) return;
    for (const match of withoutInlineCode(text).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      links.push({ target: match[1]!, line: index + 1 });
  });
  return links;
}

/**
 * The rows of the first table under the heading whose text is `heading` (up to the next heading of
 * the same or a higher level), each as its cells, header and separator left out. Undefined if
 * there is no such heading or it has no table.
 */
export function tableUnder(page: string, heading: string): string[][] | undefined {
  const headings = headingsOf(page);
  const at = headings.findIndex((h) => h.text === heading);
  if (at < 0) return undefined;
  const start = headings[at]!;
  const end = headings.slice(at + 1).find((h) => h.level <= start.level)?.line ?? Infinity;
  const lines = page.split("\n");
  const rows: string[][] = [];
  for (let i = start.line + 1; i < Math.min(end, lines.length); i++) {
    const line = lines[i]!.trim();
    if (!line.startsWith("|")) {
      if (rows.length > 0) break;
      continue;
    }
    rows.push(splitRow(line));
  }
  if (rows.length < 2) return undefined;
  return rows.slice(2);
}

/** A table row's cells, `|` inside inline code kept in its cell. */
function splitRow(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let inCode = false;
  for (const char of line.slice(1, line.endsWith("|") ? -1 : undefined)) {
    if (char === "`") inCode = !inCode;
    if (char === "|" && !inCode) {
      cells.push(cell.trim());
      cell = "";
    } else cell += char;
  }
  cells.push(cell.trim());
  return cells;
}

/**
 * Every Markdown file below `dir` (repository-relative paths), `node_modules` left out: not entered
 * at all, since an example's installed packages link back to the repository (a walk into them
 * never ends).
 */
export function markdownFilesUnder(repo: string, dir: string): string[] {
  const found: string[] = [];
  const walk = (relative: string): void => {
    for (const entry of readdirSync(join(repo, relative), { withFileTypes: true })) {
      const path = join(relative, entry.name);
      if (entry.isDirectory() && entry.name !== "node_modules") walk(path);
      else if (entry.isFile() && entry.name.endsWith(".md")) found.push(path);
    }
  };
  walk(dir);
  return found.sort();
}
