/**
 * The front door stays short: the README is at most 250 lines and holds the two commands, a first
 * program and the resources' table, one row per resource of schema.json; each example's README says
 * what it shows and how to run it in under 20 lines (eks: before its inputs and costs).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { headingsOf, tableUnder } from "./markdown.js";
import { imageReference } from "../../../local-cluster/node-images.js";

const REPO = join(__dirname, "..", "..", "..");
const read = (path: string): string => readFileSync(join(REPO, path), "utf8");
const lineCount = (text: string): number => text.replace(/\n$/, "").split("\n").length;

describe("the front door", () => {
  test("GIVEN README.md WHEN read THEN it is at most 250 lines with the two commands, a first program and one row per resource", () => {
    const readme = read("README.md");
    expect(lineCount(readme)).toBeLessThanOrEqual(250);
    expect(headingsOf(readme).map((h) => h.text)).toEqual(
      expect.arrayContaining(["The two commands", "A first program", "The resources"]),
    );
    expect(readme).toContain("scripts/demo.sh");
    expect(readme).toContain("scripts/test.sh");
    const schema = JSON.parse(read("schema.json")) as { resources: Record<string, unknown> };
    const resources = Object.keys(schema.resources).map((token) => `\`${token.split(":").pop()}\``);
    expect((tableUnder(readme, "The resources") ?? []).map((row) => row[0])).toEqual(resources);
  });

  test("GIVEN each example's README WHEN read THEN what it shows and how to run it take under 20 lines", () => {
    const examples = readdirSync(join(REPO, "examples"), { withFileTypes: true }).filter((e) => e.isDirectory());
    expect(examples.length).toBeGreaterThanOrEqual(5);
    const tooLong = examples
      .map((e) => {
        const text = read(join("examples", e.name, "README.md"));
        // The part before the first second-level heading: eks lists its inputs and costs after it.
        const front = text.split(/\n(?=## )/)[0]!;
        return { name: e.name, lines: lineCount(front) };
      })
      .filter(({ lines }) => lines >= 20);
    expect(tooLong).toEqual([]);
  });

  test("GIVEN examples/eks WHEN its README is read THEN it names every config key the program requires and what it costs", () => {
    const readme = read("examples/eks/README.md");
    const program = read("examples/eks/index.ts");
    const required = [...program.matchAll(/config\.require(?:Secret)?\("([^"]+)"\)/g)].map((m) => m[1]!);
    expect(required.length).toBeGreaterThan(0);
    const documented = (tableUnder(readme, "Inputs you must set") ?? []).flatMap((row) =>
      [...row[0]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!),
    );
    expect(required.filter((key) => !documented.includes(key))).toEqual([]);
    expect(headingsOf(readme).map((h) => h.text)).toContain("What it costs");
    expect(readme).toMatch(/USD an hour/);
  });

  test("GIVEN the demo's app (examples/local-peering/app.yaml) THEN its image is the podtool image the nodes hold", () => {
    const images = [...read("examples/local-peering/app.yaml").matchAll(/image: (\S+)/g)].map((m) => m[1]);
    expect(images).toEqual([imageReference("podtool")]);
  });
});
