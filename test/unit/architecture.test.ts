/**
 * Which way the imports run (STYLE.md, "Which way the imports run"): the product (`sdk/`,
 * `core/`, `agent/`, and `host/` below them) never imports the test bed (`local-cluster/`,
 * `harness/`), the benchmark or the tests; the steps and the agent never import the Pulumi SDK;
 * `bench/` never imports `test/`; inside `core/`, its folders import in one order too
 * ({@link CORE_ORDER}); and no module imports itself through others. Read from the
 * sources' import specifiers (TypeScript's own scanner, so `import type`, `export … from` and
 * `require` count too), no build needed. The package's surface is held here as well: it exports
 * and ships only the product.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import ts from "typescript";

const REPO = join(__dirname, "..", "..");

/** The top-level folders compiled by tsconfig.json, each a module of the layering. */
const FOLDERS = [
  "sdk",
  "plugin",
  "codegen",
  "core",
  "declarations",
  "host",
  "agent",
  "local-cluster",
  "harness",
  "test",
  "bench",
  "image",
] as const;
type Folder = (typeof FOLDERS)[number];

/** File (repository-relative, `/`-separated) to the specifiers it imports. */
type Sources = ReadonlyMap<string, readonly string[]>;

/** One import that breaks a rule. */
interface Violation {
  readonly file: string;
  readonly specifier: string;
  readonly rule: string;
}

/** A folder may not import the folders listed for it: the arrows point down only. */
const FORBIDDEN: Readonly<Record<Folder, readonly Folder[]>> = {
  // Each resource declared once, as data: everything reads it, it reads nothing of the product.
  declarations: [
    "sdk",
    "plugin",
    "codegen",
    "core",
    "host",
    "agent",
    "local-cluster",
    "harness",
    "test",
    "bench",
    "image",
  ],
  host: [
    "sdk",
    "plugin",
    "codegen",
    "core",
    "declarations",
    "agent",
    "local-cluster",
    "harness",
    "test",
    "bench",
    "image",
  ],
  // The shims read the declarations (what each change does, and why); nothing above them.
  core: ["sdk", "plugin", "codegen", "host", "agent", "local-cluster", "harness", "test", "bench", "image"],
  // The SDK loads core/resources (its dynamic providers), nothing that runs in a cluster or a test.
  sdk: ["plugin", "codegen", "host", "agent", "local-cluster", "harness", "test", "bench", "image"],
  // The provider plugin: the other front door on core/resources, beside the SDK's.
  plugin: ["sdk", "codegen", "host", "agent", "local-cluster", "harness", "test", "bench", "image"],
  // The generator writes the doors from the declarations; it runs none of them.
  codegen: ["sdk", "plugin", "core", "host", "agent", "local-cluster", "harness", "test", "bench", "image"],
  agent: ["sdk", "plugin", "codegen", "local-cluster", "harness", "test", "bench", "image"],
  // The image build bundles the agent by its path (esbuild), importing nothing of the product.
  image: [
    "sdk",
    "plugin",
    "codegen",
    "core",
    "declarations",
    "host",
    "agent",
    "local-cluster",
    "harness",
    "test",
    "bench",
  ],
  "local-cluster": ["sdk", "plugin", "codegen", "harness", "test", "bench"],
  harness: ["test", "bench"],
  bench: ["test"],
  test: [],
};

/**
 * core/'s folders, lowest first: a file imports from its own folder and from those before it, never
 * from one after it. The helpers come first, then the tasks, each after what it reads, then the
 * protocol that strings them together, then what runs on peerings, and the shims on top.
 */
const CORE_ORDER = [
  "api", // the project's API group, CRDs and names: types and pure values, importing nothing
  "net", // CIDR values, pure
  "pki", // x509 CAs and certificates, on node:crypto alone
  "wait", // the one polling wait and the one deadline of an operation
  "kube", // clients, kubeconfigs, API errors, quotas: the Kubernetes helpers, which wait with wait/
  "operation", // what every task's operation says in the same words: its progress, a provider out of reach
  "authentication", // tokens, CSR policy, the identities issued and the one a consumer stores: helpers only
  "negotiation", // requests, offers, quantities: helpers only
  "virtual-node", // the virtual node and the OutgoingPeering recorded with it, which every later task reads
  "cluster", // the install (agent, quota, guard, uninstall): every task after it reads its identity and roles
  "network-fabric", // tunnels between installed clusters, through the identity a consumer stores
  "peering", // the protocol, stringing authentication, negotiation, virtual node and (in-band) tunnel in order
  "offloading", // pods through the virtual nodes that peerings made; no peering step needs it
  "resources", // the Pulumi shims over the steps: the top, which nothing in core/ imports
] as const;
type CoreFolder = (typeof CORE_ORDER)[number];

/** The folder of core/ a file is in (`core/kube/client.ts`: `kube`), if it is one of {@link CORE_ORDER}. */
function coreFolderOf(file: string): CoreFolder | undefined {
  const [top, folder, ...inside] = file.split("/");
  return top === "core" && inside.length > 0 && (CORE_ORDER as readonly string[]).includes(folder ?? "")
    ? (folder as CoreFolder)
    : undefined;
}

/** The Pulumi SDK, which only the SDK, the plugin and the per-resource shims (the Pulumi layer) may load. */
const PULUMI_SDK = /^@pulumi\/pulumi(\/|$)/;
const mayNotLoadPulumi = (file: string, folder: Folder | undefined): boolean =>
  folder === "agent" ||
  folder === "host" ||
  folder === "declarations" ||
  folder === "codegen" ||
  (folder === "core" && !file.startsWith("core/resources/"));

/** The top-level folder of a repository-relative path, if it is one of {@link FOLDERS}. */
function folderOf(file: string): Folder | undefined {
  const top = file.split("/")[0];
  return (FOLDERS as readonly string[]).includes(top ?? "") ? (top as Folder) : undefined;
}

/**
 * The repository file a specifier of `from` names, or undefined for a package or a file outside
 * the sources (e.g. `../dist/…`). `./x.js` names `./x.ts`; `pulumi-liqo/core/x` names this
 * package's own `core/x.ts`, and `pulumi-liqo` its SDK.
 */
function resolveSpecifier(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  const self = /^pulumi-liqo(?:\/(.*))?$/.exec(specifier);
  const target = self
    ? self[1] === undefined
      ? "sdk/nodejs/index.ts"
      : `${self[1].replace(/\.js$/, "")}.ts`
    : specifier.startsWith(".")
      ? posix.resolve("/", posix.dirname(from), specifier).slice(1).replace(/\.js$/, ".ts")
      : undefined;
  return target !== undefined && files.has(target) ? target : undefined;
}

/** Every import that breaks {@link FORBIDDEN} or the Pulumi SDK rule. Pure. */
function findViolations(sources: Sources): Violation[] {
  const files = new Set(sources.keys());
  const found: Violation[] = [];
  for (const [file, specifiers] of sources) {
    const from = folderOf(file);
    for (const specifier of specifiers) {
      if (PULUMI_SDK.test(specifier) && mayNotLoadPulumi(file, from))
        found.push({ file, specifier, rule: `${from}/ (outside core/resources/) must not load the Pulumi SDK` });
      const target = resolveSpecifier(file, specifier, files);
      const to = target && folderOf(target);
      if (from && to && FORBIDDEN[from].includes(to))
        found.push({ file, specifier, rule: `${from}/ must not import ${to}/` });
    }
  }
  return found;
}

/** Every import from one folder of core/ into a folder after it in {@link CORE_ORDER}. Pure. */
function findUpwardCoreImports(sources: Sources): Violation[] {
  const files = new Set(sources.keys());
  const found: Violation[] = [];
  for (const [file, specifiers] of sources) {
    const from = coreFolderOf(file);
    if (!from) continue;
    for (const specifier of specifiers) {
      const target = resolveSpecifier(file, specifier, files);
      const to = target && coreFolderOf(target);
      if (to && CORE_ORDER.indexOf(to) > CORE_ORDER.indexOf(from))
        found.push({ file, specifier, rule: `core/${from}/ must not import core/${to}/` });
    }
  }
  return found;
}

/**
 * The import cycles among `sources`, each as the files in import order with the first repeated at
 * the end (`a.ts -> b.ts -> a.ts`), one per strongly connected group (Tarjan). Edges in
 * `ignoredEdges` are left out. Pure.
 */
function findCycles(sources: Sources, ignoredEdges: ReadonlySet<string> = new Set()): string[][] {
  const files = new Set(sources.keys());
  const edges = new Map<string, string[]>();
  for (const [file, specifiers] of sources) {
    const targets = specifiers
      .map((s) => resolveSpecifier(file, s, files))
      .filter((t): t is string => t !== undefined && !ignoredEdges.has(`${file} -> ${t}`));
    edges.set(file, [...new Set(targets)]);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of edges.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || edges.get(file)!.includes(file)) groups.push(group);
  };
  for (const file of [...files].sort()) if (!index.has(file)) visit(file);
  return groups.map((group) => cycleThrough(group, edges));
}

/** One cycle inside a strongly connected `group`, from its first file (by name) back to it. */
function cycleThrough(group: readonly string[], edges: ReadonlyMap<string, readonly string[]>): string[] {
  const members = new Set(group);
  const start = [...group].sort()[0]!;
  // Breadth-first from `start` to any file that imports `start`: the shortest way round.
  const cameFrom = new Map<string, string>([[start, start]]);
  const queue = [start];
  while (queue.length) {
    const file = queue.shift()!;
    for (const next of edges.get(file) ?? []) {
      if (next === start) {
        const path = [file];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
        return [...path, start];
      }
      if (members.has(next) && !cameFrom.has(next)) {
        cameFrom.set(next, file);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

/** The .ts files of `folder` that tsconfig.json compiles (not the Pulumi programs the tests run). */
function sourcesOf(folder: string): string[] {
  return readdirSync(join(REPO, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === "programs" ? [] : sourcesOf(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Every compiled source of the repository and what it imports. */
function repositorySources(): Sources {
  const sources = new Map<string, string[]>();
  for (const folder of FOLDERS) {
    for (const file of sourcesOf(folder)) {
      const scanned = ts.preProcessFile(readFileSync(join(REPO, file), "utf8"), true, true);
      sources.set(
        file,
        scanned.importedFiles.map((i) => i.fileName),
      );
    }
  }
  return sources;
}

const describeViolation = (v: Violation): string => `${v.file} imports "${v.specifier}": ${v.rule}`;

describe("the checks themselves", () => {
  test("GIVEN core/ importing local-cluster/ and a step loading the Pulumi SDK WHEN checked THEN both are reported, naming file, import and rule", () => {
    const sources = new Map([
      ["core/cluster/install.ts", ["../../local-cluster/pki.js", "../kube/client.js"]],
      ["core/peering/peering.ts", ["@pulumi/pulumi"]],
      ["core/resources/cluster.ts", ["@pulumi/pulumi", "../cluster/install.js"]],
      ["core/kube/client.ts", []],
      ["local-cluster/pki.ts", []],
    ]);

    expect(findViolations(sources).map(describeViolation)).toEqual([
      'core/cluster/install.ts imports "../../local-cluster/pki.js": core/ must not import local-cluster/',
      'core/peering/peering.ts imports "@pulumi/pulumi": core/ (outside core/resources/) must not load the Pulumi SDK',
    ]);
  });

  test("GIVEN bench/ importing test/ and the package by name WHEN checked THEN only the test import is reported (the name reads as sdk/)", () => {
    const sources = new Map([
      ["bench/main.ts", ["../test/support/labs.js", "pulumi-liqo"]],
      ["test/support/labs.ts", []],
      ["sdk/nodejs/index.ts", []],
    ]);

    expect(findViolations(sources).map((v) => v.rule)).toEqual(["bench/ must not import test/"]);
  });

  test("GIVEN a core/ folder importing one after it and one before it WHEN checked THEN only the upward import is reported, naming both folders", () => {
    const sources = new Map([
      ["core/network-fabric/tunnel.ts", ["../peering/peering-plan.js", "../kube/client.js", "./tunnel-plan.js"]],
      ["core/network-fabric/tunnel-plan.ts", []],
      ["core/peering/in-band.ts", ["../network-fabric/tunnel.js", "./peering-plan.js"]],
      ["core/peering/peering-plan.ts", []],
      ["core/kube/client.ts", []],
    ]);

    expect(findUpwardCoreImports(sources).map(describeViolation)).toEqual([
      'core/network-fabric/tunnel.ts imports "../peering/peering-plan.js": core/network-fabric/ must not import core/peering/',
    ]);
  });

  test("GIVEN three files in an import ring WHEN checked THEN the ring is reported in import order; a known edge breaks it", () => {
    const sources = new Map([
      ["agent/a.ts", ["./b.js"]],
      ["agent/b.ts", ["../core/c.js"]],
      ["core/c.ts", ["../agent/a.js", "./d.js"]],
      ["core/d.ts", []],
    ]);

    expect(findCycles(sources)).toEqual([["agent/a.ts", "agent/b.ts", "core/c.ts", "agent/a.ts"]]);
    expect(findCycles(sources, new Set(["agent/b.ts -> core/c.ts"]))).toEqual([]);
  });
});

describe("the repository", () => {
  const sources = repositorySources();

  test("GIVEN every compiled source WHEN read THEN the product, the test bed, the benchmark and the tests import only downward", () => {
    expect(sources.size).toBeGreaterThan(100);
    expect(findViolations(sources).map(describeViolation)).toEqual([]);
  });

  test("GIVEN core/'s folders WHEN listed THEN each has its place in the order, and the order names no other", () => {
    const folders = readdirSync(join(REPO, "core"));

    expect(folders.sort()).toEqual([...CORE_ORDER].sort());
  });

  test("GIVEN core/'s sources WHEN read THEN every import between two of its folders points down the order", () => {
    expect(findUpwardCoreImports(sources).map(describeViolation)).toEqual([]);
  });

  test("GIVEN every compiled source WHEN read THEN no file imports itself through others", () => {
    expect(findCycles(sources).map((cycle) => cycle.join(" -> "))).toEqual([]);
  });

  test("GIVEN the product's sources WHEN read THEN only core/wait/deadline.ts reckons an operation's time left or declares its default timeout", () => {
    const reckoning = /\w+\s*-\s*Date\.now\(\)|\bDEFAULT_TIMEOUT_SECONDS\s*=/;
    const own = [...sources.keys()].filter(
      (file) =>
        ["sdk", "plugin", "core", "host", "agent"].includes(folderOf(file) ?? "") &&
        file !== "core/wait/deadline.ts" &&
        reckoning.test(readFileSync(join(REPO, file), "utf8")),
    );

    expect(own).toEqual([]);
  });

  test("GIVEN package.json WHEN read THEN the package exports and ships the product only", () => {
    const manifest = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
      exports: Record<string, string>;
      files: string[];
    };
    const exported = Object.values(manifest.exports).map((target) => target.split("/")[2]);

    expect(exported.filter((top) => top !== undefined && !["sdk", "core", "agent"].includes(top))).toEqual([]);
    expect(manifest.files).toEqual(
      expect.arrayContaining(["!dist/test/", "!dist/bench/", "!dist/harness/", "!dist/local-cluster/", "!dist/image/"]),
    );
  });
});
