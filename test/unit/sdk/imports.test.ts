/**
 * The SDK's modules import one another one way only: a cycle (even of types alone) means two
 * modules that cannot be read, or changed, one without the other. And the SDK's declarations, as
 * a user's program type-checks them, reach none of the provider's implementation: a user with
 * `skipLibCheck` off would check those too, with the Kubernetes client's types they pull in.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as ts from "typescript";

const REPO = join(__dirname, "..", "..", "..");
const SDK = join(REPO, "sdk");
/** The package as built (`npm test` builds it first). */
const DIST = join(REPO, "dist");

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

/** The declaration files a program that imports the built SDK reads, as a user's TypeScript would. */
function declarationsReachedBySdk(): string[] {
  const program = ts.createProgram([join(DIST, "sdk", "index.d.ts")], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
    noEmit: true,
  });
  return program.getSourceFiles().map((file) => file.fileName);
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

  test("GIVEN the built SDK's declarations WHEN a program type-checks them THEN what they reach outside sdk/ imports nothing (no Kubernetes types)", () => {
    const reached = declarationsReachedBySdk();
    const own = reached.filter((file) => file.startsWith(`${DIST}/`) && !file.startsWith(join(DIST, "sdk")));
    // The reading is real: TunnelEnd and ProviderHandover are declared outside sdk/.
    expect(own.length).toBeGreaterThan(0);
    const importing = own.filter(
      (file) => ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles.length,
    );
    expect(importing.map((file) => file.slice(DIST.length + 1))).toEqual([]);
    expect(reached.filter((file) => file.includes("/@kubernetes/"))).toEqual([]);
  });
});
