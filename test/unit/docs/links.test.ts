/**
 * Every link of the README, the docs and the examples' READMEs points at a file of the repository
 * or a heading that exists (by the anchor GitHub gives it). Links to the web are left alone: the
 * tests run offline.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { headingsOf, linksOf, markdownFilesUnder } from "./markdown.js";

const REPO = join(__dirname, "..", "..", "..");

/** The pages held to it: the README, every page of docs/, and the examples' READMEs. */
const PAGES = [
  "README.md",
  ...markdownFilesUnder(REPO, "docs"),
  ...markdownFilesUnder(REPO, "examples").filter((p) => p.endsWith("README.md")),
];

/** Why a link of `from` (repository-relative) does not resolve, or undefined if it does. */
function brokenBecause(from: string, target: string, read: (path: string) => string | undefined): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const [path, anchor] = target.split("#", 2) as [string, string | undefined];
  const file = path === "" ? from : normalize(join(dirname(from), decodeURIComponent(path)));
  if (file.startsWith("..")) return `${target}: leaves the repository`;
  const text = read(file);
  if (text === undefined) return `${target}: no file ${file}`;
  if (anchor === undefined || anchor === "") return undefined;
  if (!file.endsWith(".md")) return `${target}: an anchor into ${file}, which is no Markdown page`;
  const anchors = headingsOf(text).map((h) => h.anchor);
  return anchors.includes(anchor) ? undefined : `${target}: ${file} has no heading #${anchor}`;
}

/** A repository file's text ("" for a directory), or undefined if there is none. */
function readRepoFile(path: string): string | undefined {
  const full = join(REPO, path);
  if (relative(REPO, full).startsWith("..") || !existsSync(full)) return undefined;
  return statSync(full).isDirectory() ? "" : readFileSync(full, "utf8");
}

describe("links of the README and docs", () => {
  test("GIVEN the README, docs/ and the examples' READMEs WHEN every link is followed THEN each reaches a file or heading that exists", () => {
    expect(PAGES).toEqual(expect.arrayContaining(["README.md", "docs/concepts.md", "docs/reference/cluster.md"]));
    const broken = PAGES.flatMap((page) =>
      linksOf(readFileSync(join(REPO, page), "utf8"))
        .map((link) => ({ link, why: brokenBecause(page, link.target, readRepoFile) }))
        .filter(({ why }) => why !== undefined)
        .map(({ link, why }) => `${page}:${link.line}: ${why}`),
    );
    expect(broken).toEqual([]);
  });

  test("GIVEN the README WHEN its links are read THEN there are links into docs/ to check (the check reads real links)", () => {
    const targets = linksOf(readFileSync(join(REPO, "README.md"), "utf8")).map((l) => l.target);
    expect(targets).toEqual(expect.arrayContaining(["docs/concepts.md", "docs/reference/cluster.md"]));
  });

  test("GIVEN links to a missing file, a missing heading, outside the repository and a good heading WHEN checked THEN only the bad ones are named", () => {
    const pages: Record<string, string> = {
      "docs/a.md": "# A page\n\n## What `pulumi up` shows\n\n```\n# not a heading\n```\n",
      "docs/b.md": "[x](a.md#what-pulumi-up-shows)",
    };
    const read = (path: string): string | undefined => pages[path];
    expect(brokenBecause("docs/b.md", "a.md#what-pulumi-up-shows", read)).toBeUndefined();
    expect(brokenBecause("docs/b.md", "a.md#not-a-heading", read)).toBe(
      "a.md#not-a-heading: docs/a.md has no heading #not-a-heading",
    );
    expect(brokenBecause("docs/b.md", "gone.md", read)).toBe("gone.md: no file docs/gone.md");
    expect(brokenBecause("docs/b.md", "../../etc/passwd", read)).toBe("../../etc/passwd: leaves the repository");
    expect(brokenBecause("docs/a.md", "#a-page", read)).toBeUndefined();
    expect(brokenBecause("docs/a.md", "https://example.com/x", read)).toBeUndefined();
  });

  test("GIVEN headings repeated and links inside code WHEN read THEN anchors are numbered as GitHub does and code holds no link", () => {
    const page = "## Inputs\n## Inputs\n`[no](link.md)` and [yes](yes.md)\n```\n[no](fenced.md)\n```\n";
    expect(headingsOf(page).map((h) => h.anchor)).toEqual(["inputs", "inputs-1"]);
    expect(linksOf(page).map((l) => l.target)).toEqual(["yes.md"]);
  });
});
