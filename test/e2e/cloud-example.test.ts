/**
 * The cloud example, examples/eks, cannot run here (it needs an AWS account), so it is held to
 * type-checking: its own dependencies, at the versions its package.json pins, are installed once
 * into the project's cache outside the repository, and its own TypeScript checks a copy of the
 * program against them and this package, built. The same check must fail on a program with one
 * deliberate type error, so that a pass says something.
 */
import { execa } from "execa";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { copyProgram, linkPackages } from "../../harness/pulumi.js";

/** Each test's bound: the example's own TypeScript check of the package. */
const TEST_BOUND_MS = 3 * 60_000;

const EXAMPLE = join(__dirname, "..", "..", "examples", "eks");

/** Where the project keeps what it builds and installs, as scripts/lib.sh sets `LIQO_CACHE`. */
const CACHE =
  process.env["LIQO_CACHE"] ?? join(process.env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache"), "pulumi-liqo");

interface Manifest {
  readonly name: string;
  readonly dependencies: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
}

/**
 * The example's node_modules: its dependencies but `pulumi-liqo` (linked to the repository
 * instead), installed by npm into `<cache>/examples/eks-<hash of the pins>`, so a warm run installs
 * nothing and a changed pin installs afresh. The install happens in a `.partial` directory of this
 * process, renamed into place once complete: an interrupted install is never taken for a finished
 * one, and a run going on beside this one is not disturbed. Partial installs of dead runs are removed.
 */
async function exampleModules(): Promise<string> {
  const manifest = JSON.parse(readFileSync(join(EXAMPLE, "package.json"), "utf8")) as Manifest;
  const dependencies = { ...manifest.dependencies };
  delete dependencies["pulumi-liqo"];
  const pins = { dependencies, devDependencies: manifest.devDependencies ?? {} };
  const name = `eks-${createHash("sha256").update(JSON.stringify(pins)).digest("hex").slice(0, 16)}`;
  const parent = join(CACHE, "examples");
  const dir = join(parent, name);
  if (existsSync(dir)) return join(dir, "node_modules");

  mkdirSync(parent, { recursive: true });
  for (const entry of readdirSync(parent)) {
    // The project runs on Linux only: a run whose /proc entry is gone is dead.
    const pid = new RegExp(`^${name}\\.(\\d+)\\.partial$`).exec(entry)?.[1];
    if (pid && !existsSync(`/proc/${pid}`)) rmSync(join(parent, entry), { recursive: true, force: true });
  }
  const partial = join(parent, `${name}.${process.pid}.partial`);
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial);
  writeFileSync(
    join(partial, "package.json"),
    `${JSON.stringify({ name: `${manifest.name}-dependencies`, private: true, ...pins }, null, 2)}\n`,
  );
  const install = await execa("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: partial,
    reject: false,
    stdin: "ignore",
    timeout: 10 * 60_000,
  });
  if (install.exitCode !== 0) {
    rmSync(partial, { recursive: true, force: true });
    throw new Error(
      `npm install of the eks example's dependencies in ${partial} exited ${install.exitCode}: ${String(install.stderr).slice(-2000)}`,
    );
  }
  // A run beside this one may have finished first: keep its install.
  if (existsSync(dir)) rmSync(partial, { recursive: true, force: true });
  else renameSync(partial, dir);
  return join(dir, "node_modules");
}

describe("the cloud example (examples/eks)", () => {
  let modules: string;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "pulumi-liqo-eks-"));
    modules = await exampleModules();
  }, 15 * 60_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** Copies the example into `work/<name>` with `edit` applied to index.ts, links its packages, and runs its own tsc there. */
  async function typeCheck(name: string, edit: (source: string) => string = (source) => source) {
    const programDir = join(work, name);
    copyProgram(EXAMPLE, programDir);
    const index = join(programDir, "index.ts");
    writeFileSync(index, edit(readFileSync(index, "utf8")));
    linkPackages(programDir, modules);
    const tsc = join(programDir, "node_modules", "typescript", "bin", "tsc");
    const result = await execa(process.execPath, [tsc, "-p", "tsconfig.json", "--noEmit"], {
      cwd: programDir,
      reject: false,
      stdin: "ignore",
      all: true,
      timeout: 5 * 60_000,
    });
    return { exitCode: result.exitCode ?? -1, output: String(result.all) };
  }

  test(
    "GIVEN its pinned dependencies and this package WHEN its own TypeScript checks it THEN it type-checks",
    async () => {
      const result = await typeCheck("as-written");
      if (result.exitCode !== 0) throw new Error(`tsc exited ${result.exitCode} on examples/eks:\n${result.output}`);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a Cluster arg of the wrong type WHEN checked the same way THEN tsc fails, naming index.ts",
    async () => {
      const wrong = (source: string): string => {
        expect(source).toContain('exposure: "NodePort"');
        return source.replace('exposure: "NodePort"', 'exposure: "Ingress"');
      };
      const result = await typeCheck("wrong-type", wrong);
      expect(result.exitCode).not.toBe(0);
      expect(result.output).toMatch(/^index\.ts\(\d+,\d+\): error TS2322: Type '"Ingress"' is not assignable/m);
    },
    TEST_BOUND_MS,
  );
});
