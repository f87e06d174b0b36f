/**
 * The SDK's modules import one another one way only: a cycle (even of types alone) means two
 * modules that cannot be read, or changed, one without the other.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as ts from "typescript";

const SDK = join(__dirname, "..", "..", "..", "sdk");

/** Each module of `dir` (by file name) and the modules of `dir` it imports, types included. */
function importsIn(dir: string): Map<string, string[]> {
  const modules = readdirSync(dir).filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts"));
  return new Map(
    modules.map((name) => [
      name,
      ts
        .preProcessFile(readFileSync(join(dir, name), "utf8"), true, true)
        .importedFiles.map((f) => f.fileName)
        .filter((path) => path.startsWith("./"))
        .map((path) => path.slice(2).replace(/\.js$/, ".ts")),
    ]),
  );
}

/** Every cycle of `graph`, each as the path that closes it (`a -> b -> a`), each found once. */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  const visit = (node: string, path: string[]): void => {
    const at = path.indexOf(node);
    if (at >= 0) return void cycles.push([...path.slice(at), node].join(" -> "));
    if (done.has(node)) return;
    for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
    done.add(node);
  };
  for (const node of graph.keys()) visit(node, []);
  return cycles;
}

describe("the SDK's imports", () => {
  test("GIVEN a graph with a cycle WHEN its cycles are sought THEN that cycle is found, and none in a graph without", () => {
    const cyclic = new Map([
      ["peering.ts", ["cluster.ts", "tunnel.ts"]],
      ["tunnel.ts", ["peering.ts"]],
      ["cluster.ts", []],
    ]);
    expect(cyclesOf(cyclic)).toEqual(["peering.ts -> tunnel.ts -> peering.ts"]);
    cyclic.set("tunnel.ts", ["tunnel-types.ts"]);
    expect(cyclesOf(cyclic)).toEqual([]);
  });

  test("GIVEN the SDK's modules WHEN their imports (types included) are followed THEN none leads back to itself", () => {
    const graph = importsIn(SDK);
    // The reading is real: the Tunnel module imports the Peering's for its `peering` input.
    expect(graph.get("tunnel.ts")).toEqual(expect.arrayContaining(["peering.ts", "tunnel-types.ts"]));
    expect(cyclesOf(graph)).toEqual([]);
  });
});
