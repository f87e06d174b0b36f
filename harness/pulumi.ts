/**
 * Runs the real `pulumi` CLI on a program, offline: a file backend and a passphrase in a fresh
 * temporary directory, removed by `dispose` (call it in `finally`). The program is copied there
 * with links to the repository's packages and to this package, so runs never write into the
 * repository.
 */
import { execa } from "execa";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { clusterOf, type ClusterState, type LabState } from "../local-cluster/lab.js";
import { runsHostAgent } from "../local-cluster/state.js";
import { DEFAULT_AGENT_IMAGE } from "../core/cluster/agent-image.js";

/** The repository root, whether this runs from sources (tests) or from dist/ (the benchmark). */
export const REPO = dirname(require.resolve("pulumi-liqo/package.json"));

/** Copies program directory `source` to `programDir`: the program alone, not a node_modules, lock or stack config a demo may have left beside it. */
export function copyProgram(source: string, programDir: string): void {
  cpSync(source, programDir, {
    recursive: true,
    filter: (path) => !/\/(node_modules|package-lock\.json|Pulumi\.[^/]+\.yaml)$/.test(path),
  });
}

/**
 * Gives the program a node_modules of links: every package of `packages` (by default the
 * repository's node_modules), and `pulumi-liqo` itself (`release`: by default the repository,
 * built; another release's built package for the upgrade test), so the program imports this
 * package by its name as a user's program would. A node_modules the program had is replaced, as
 * a user's `npm install` of another release replaces it.
 */
export function linkPackages(programDir: string, packages = join(REPO, "node_modules"), release = REPO): void {
  const modules = join(programDir, "node_modules");
  rmSync(modules, { recursive: true, force: true });
  mkdirSync(modules);
  for (const entry of readdirSync(packages)) {
    if (!entry.startsWith(".")) symlinkSync(join(packages, entry), join(modules, entry));
  }
  symlinkSync(release, join(modules, "pulumi-liqo"));
}

/** Points the program's `pulumi-liqo` dependency at `tarball` and runs `npm install` there, as a user outside this repository would. */
async function installFromTarball(programDir: string, tarball: string): Promise<void> {
  const manifestPath = join(programDir, "package.json");
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { dependencies: Record<string, string> };
  manifest.dependencies["pulumi-liqo"] = `file:${tarball}`;
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  const result = await execa("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: programDir,
    reject: false,
    stdin: "ignore",
    timeout: 10 * 60_000,
  });
  if (result.exitCode !== 0)
    throw new Error(
      `npm install of ${tarball} in ${programDir} exited ${result.exitCode}: ${String(result.stderr).slice(-2000)}`,
    );
}

/**
 * The deadline of one `pulumi` command in the tests: an `up` of the largest program (three
 * clusters, a mesh of peerings) takes under two minutes on a loaded two-core machine; five is
 * generous, and well inside Jest's own timeout, so a run that hangs fails naming its command.
 */
export const PULUMI_COMMAND_TIMEOUT_MS = 5 * 60_000;

/** What one `pulumi` command printed. */
export interface PulumiResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The errors of a failed run first, then the last lines of its output. */
export function failureSummary(result: PulumiResult): string {
  const diagnostics = /\nDiagnostics:\n([\s\S]*?)(?:\n(?:Outputs|Resources|Duration):|$)/
    .exec(result.stdout)?.[1]
    ?.trim();
  const errors = result.stdout
    .split("\n")
    .filter((line) => /\berror:/.test(line))
    .map((line) => line.trim());
  return [
    diagnostics
      ? `diagnostics:\n${diagnostics}`
      : errors.length
        ? `errors:\n${errors.join("\n")}`
        : "no diagnostics printed",
    result.stderr.trim() ? `stderr:\n${result.stderr.trim()}` : "",
    `stdout (last 30 lines):\n${result.stdout.trim().split("\n").slice(-30).join("\n")}`,
  ]
    .filter(Boolean)
    .join("\n");
}

/** A program in a temporary workspace with its own backend and stack. */
export class PulumiWorkspace {
  private constructor(
    readonly dir: string,
    readonly programDir: string,
    readonly env: Record<string, string>,
  ) {}

  /**
   * Copies program directory `source` into a fresh workspace and creates stack `stack`. With
   * `backendOf`, the stack lives in that workspace's backend, as two teams' stacks of one
   * organization do (so one can read the other's outputs through a StackReference). With
   * `tarball`, the program gets its packages as a user's would: `npm install` from the registry,
   * with `pulumi-liqo` from that packed tarball instead of this repository, and its runs
   * type-check the program as a user's do. Otherwise they start it without a type check, unless
   * `typeCheck`: `npm run lint` has checked these programs once (tsconfig.programs.json), and
   * the check costs each run 2 to 4 s of CPU.
   */
  static async create(
    source: string,
    stack = "test",
    backendOf?: PulumiWorkspace,
    {
      tarball,
      release,
      typeCheck = tarball !== undefined,
    }: {
      readonly tarball?: string;
      /** Another release's built package (its root, with its node_modules) to link instead of this repository. */
      readonly release?: string;
      readonly typeCheck?: boolean;
    } = {},
  ): Promise<PulumiWorkspace> {
    const dir = mkdtempSync(join(tmpdir(), "pulumi-liqo-e2e-"));
    const programDir = join(dir, "program");
    mkdirSync(join(dir, "state"));
    copyProgram(source, programDir);
    if (tarball) {
      await installFromTarball(programDir, tarball).catch((error: unknown) => {
        rmSync(dir, { recursive: true, force: true });
        throw error;
      });
    } else if (release) {
      linkPackages(programDir, join(release, "node_modules"), release);
    } else {
      linkPackages(programDir);
    }
    const env = {
      PULUMI_BACKEND_URL: backendOf?.env["PULUMI_BACKEND_URL"] ?? `file://${join(dir, "state")}`,
      PULUMI_CONFIG_PASSPHRASE: "e2e-test-passphrase",
      PULUMI_HOME: join(dir, "home"),
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      PULUMI_NODEJS_TRANSPILE_ONLY: String(!typeCheck),
    };
    const workspace = new PulumiWorkspace(dir, programDir, env);
    const init = await workspace.pulumi(["stack", "init", stack]);
    if (init.exitCode !== 0) {
      workspace.dispose();
      throw new Error(`pulumi stack init failed: ${init.stderr || init.stdout}`);
    }
    return workspace;
  }

  /**
   * Runs `pulumi args…` in the program directory; never throws on a non-zero exit. A run longer
   * than `timeoutMs` is stopped, and its result says which command ran out of its deadline (a
   * test then fails naming it, not on Jest's own timeout).
   */
  async pulumi(args: readonly string[], timeoutMs = PULUMI_COMMAND_TIMEOUT_MS): Promise<PulumiResult> {
    const result = await execa("pulumi", [...args, "--non-interactive"], {
      cwd: this.programDir,
      env: this.env,
      reject: false,
      stdin: "ignore",
      timeout: timeoutMs,
    });
    const stderr = String(result.stderr);
    return {
      exitCode: result.exitCode ?? -1,
      stdout: String(result.stdout),
      stderr: result.timedOut
        ? `pulumi ${args.join(" ")} ran out of its deadline of ${timeoutMs / 1000} s and was stopped\n${stderr}`
        : stderr,
    };
  }

  /**
   * Runs `pulumi args…` and throws unless it exits 0. The message leads with the errors (the
   * diagnostics and stderr), then the end of stdout: CI logs are often cut after a few dozen
   * lines, and the progress lines that come first say least.
   */
  async ok(args: readonly string[], timeoutMs = PULUMI_COMMAND_TIMEOUT_MS): Promise<PulumiResult> {
    const result = await this.pulumi(args, timeoutMs);
    if (result.exitCode !== 0)
      throw new Error(`pulumi ${args.join(" ")} exited ${result.exitCode}:\n${failureSummary(result)}`);
    return result;
  }

  /**
   * Runs `pulumi args…` (as {@link pulumi}) with `--json`, the engine's events as lines, and says
   * how long the engine's own step on the resource named `name` took, from its start to its end or
   * failure, by the events' timestamps (whole seconds): what the resource's provider spent, without
   * the engine's and the program's own start. `stepSeconds` is undefined when no step on it
   * started. Its `stdout` is what the events said (their diagnostics' messages), one per line.
   */
  async timedStep(
    args: readonly string[],
    name: string,
    timeoutMs = PULUMI_COMMAND_TIMEOUT_MS,
  ): Promise<PulumiResult & { readonly stepSeconds?: number }> {
    const result = await this.pulumi([...args, "--json"], timeoutMs);
    const events = result.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as EngineEvent);
    const on = (urn: string | undefined): boolean => urn?.endsWith(`::${name}`) === true;
    const started = events.find((e) => on(e.resourcePreEvent?.metadata.urn))?.timestamp;
    const ended = events.find(
      (e) => on(e.resOutputsEvent?.metadata.urn) || on(e.resOpFailedEvent?.metadata.urn),
    )?.timestamp;
    return {
      ...result,
      stdout: events.flatMap((e) => (e.diagnosticEvent ? [e.diagnosticEvent.message] : [])).join("\n"),
      ...(started !== undefined && ended !== undefined ? { stepSeconds: ended - started } : {}),
    };
  }

  /** Removes the workspace: program copy, state and Pulumi home. */
  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The parts of an engine event (a line of `pulumi … --json`) that {@link PulumiWorkspace.timedStep} reads. */
interface EngineEvent {
  /** Unix time, in seconds. */
  readonly timestamp: number;
  readonly resourcePreEvent?: { readonly metadata: { readonly urn: string } };
  readonly resOutputsEvent?: { readonly metadata: { readonly urn: string } };
  readonly resOpFailedEvent?: { readonly metadata: { readonly urn: string } };
  readonly diagnosticEvent?: { readonly message: string };
}

/** A row of a `--non-interactive` run: an operation's sign, the resource's type (`pkg:module:Name`) and name, then its status and info. */
const ROW = /^\s*(?:[-+~<>=*!]{1,2}\s+)?(\S+:\S*:\S+) (\S+)(?: (.*))?$/;
/** The engine's progress line at a line's start: `@ updating....`, `@ destroying..`. */
const PROGRESS_DOTS = /^@ [a-z]+\.*/;
/** A progress step, by its count(s) and task: `[1/4] network fabric`, `[1/4] (2/4) network fabric`. */
const STEP = /\[\d+\/\d+\](?: \(\d+\/\d+\))? [^:]+/;

/**
 * The progress steps a `--non-interactive` run printed, by the row each showed on, in order (a
 * row printed again with the same step counts it once), and `""` where the row's status was
 * cleared (a line of it with an empty Info column after a step; without the clear, the engine
 * would go on showing the last step there, on the `created` line too):
 * `{ "liqo:Peering::b-to-a": ["[1/3] authentication", …, ""] }`, the stack's row being
 * `pulumi:pulumi:Stack::<name>`. Any other line with a step (a message under Diagnostics) counts
 * whole under `""`, so a test sees it and what printed it.
 */
export function stepsByRow(output: string): Record<string, string[]> {
  const rows: Record<string, string[]> = {};
  // The engine's progress dots (`@ updating....`) end without a line break when a row comes
  // before the next dot: the row then follows them on the same line.
  for (const line of output.split("\n").map((printed) => printed.replace(PROGRESS_DOTS, ""))) {
    const step = STEP.exec(line)?.[0];
    const row = ROW.exec(line);
    const key = row ? `${row[1]!.replace(/^pulumi-nodejs:dynamic\//, "")}::${row[2]}` : "";
    const steps = rows[key];
    if (step) {
      // Off a row, the whole line: what printed it is the question when a test meets one.
      const seen = row ? step : line.trim();
      if (steps?.at(-1) !== seen) (rows[key] ??= []).push(seen);
    } else if (row && steps && steps.at(-1) !== "" && /\)\s*$/.test(row[3] ?? "")) {
      // The status column ends with its duration, `creating (2s)`: nothing follows it.
      steps.push("");
    }
  }
  return rows;
}

/**
 * The outputs the stack's state holds for resource `name` of type `<type>`: a dynamic resource's
 * (`liqo:<type>`) or the provider plugin's (`liqo:index:<type>`).
 */
export async function outputsOf(
  workspace: PulumiWorkspace,
  type: string,
  name: string,
): Promise<Record<string, unknown>> {
  const state = JSON.parse((await workspace.ok(["stack", "export"])).stdout) as {
    deployment: { resources?: { urn: string; outputs?: Record<string, unknown> }[] };
  };
  const resource = state.deployment.resources?.find(
    (r) => r.urn.endsWith(`dynamic/liqo:${type}::${name}`) || r.urn.endsWith(`::liqo:index:${type}::${name}`),
  );
  if (!resource) throw new Error(`test: no ${type} ${name} in the stack's state`);
  return resource.outputs ?? {};
}

/** What `pulumi preview --json` says: the steps it proposes and what the providers told the engine. */
export interface Preview {
  /** The steps, as `op name` (e.g. `create b-to-a`), without the stack itself. */
  readonly steps: string[];
  /** Information the providers logged about a resource (why it changes), as `{ urn, message }`. */
  readonly explanations: { urn: string; message: string }[];
  /** Everything the preview printed. */
  readonly output: string;
}

/** Runs `pulumi preview --json` and reads its steps and explanations. */
export async function previewOf(workspace: PulumiWorkspace): Promise<Preview> {
  const { stdout } = await workspace.ok(["preview", "--json"]);
  const preview = JSON.parse(stdout) as {
    steps: { op: string; urn: string }[];
    diagnostics?: { urn?: string; message: string; severity: string }[];
  };
  return {
    steps: preview.steps
      .filter((s) => !s.urn.includes("pulumi:pulumi:Stack"))
      .map((s) => `${s.op} ${s.urn.split("::").pop()}`),
    explanations: (preview.diagnostics ?? [])
      .filter((d) => d.severity === "info" && d.urn)
      .map((d) => ({ urn: d.urn!, message: d.message.trim() })),
    output: stdout,
  };
}

/** The steps a preview proposes, as `op name` (e.g. `create b-to-a`), without the stack itself. */
export async function plannedSteps(workspace: PulumiWorkspace): Promise<string[]> {
  return (await previewOf(workspace)).steps;
}

/**
 * Sets the config the one-stack examples read from a lab: `<name>Kubeconfig`, `<name>PodCidr`,
 * `<name>ServiceCidr` of every cluster, and, if `gatewayAddress`, `aGatewayAddress` (cluster a's
 * node address, for a program that must type where a's gateway serves); without it, as users
 * write it, a Tunnel dials where a's Cluster says its gateway is reached.
 */
export async function configureForLab(
  workspace: PulumiWorkspace,
  lab: LabState,
  { gatewayAddress = false }: { readonly gatewayAddress?: boolean } = {},
): Promise<void> {
  const settings: [string, string][] = lab.clusters.flatMap((cluster): [string, string][] => [
    [`${cluster.name}Kubeconfig`, cluster.kubeconfig],
    [`${cluster.name}PodCidr`, cluster.podCidr],
    [`${cluster.name}ServiceCidr`, cluster.serviceCidr],
  ]);
  await setConfig(workspace, [
    ...settings,
    ...(gatewayAddress ? [["aGatewayAddress", clusterOf(lab, "a").publicAddress] as [string, string]] : []),
    ...agentImageConfig(lab.clusters),
  ]);
}

/** Sets the config a one-cluster program reads of `cluster` (its kubeconfig and ranges), and `extra`. */
export async function configureForCluster(
  workspace: PulumiWorkspace,
  cluster: ClusterState,
  extra: Record<string, string> = {},
): Promise<void> {
  await setConfig(workspace, [
    ["kubeconfig", cluster.kubeconfig],
    ["podCidr", cluster.podCidr],
    ["serviceCidr", cluster.serviceCidr],
    ...Object.entries(extra),
    ...agentImageConfig([cluster]),
  ]);
}

/** The programs' Clusters deploy the agent from the image the nodes hold, unless the lab runs it itself. */
function agentImageConfig(clusters: readonly ClusterState[]): [string, string][] {
  return clusters.some(runsHostAgent) ? [] : [["agentImage", DEFAULT_AGENT_IMAGE]];
}

/**
 * Sets plain config values in one `pulumi config set-all`: each pulumi process costs a few tenths
 * of a second of CPU before it does anything, and a stack's set-up set them one by one.
 */
export async function setConfig(workspace: PulumiWorkspace, settings: readonly [string, string][]): Promise<void> {
  if (settings.length === 0) return;
  await workspace.ok(["config", "set-all", ...settings.flatMap(([key, value]) => ["--plaintext", `${key}=${value}`])]);
}

/** Sets the mesh example's `clusters` config: every cluster of `lab`, with where its gateway serves. */
export async function configureMeshForLab(workspace: PulumiWorkspace, lab: LabState): Promise<void> {
  const members = lab.clusters.map((c) => ({
    name: c.name,
    kubeconfig: c.kubeconfig,
    podCidr: c.podCidr,
    serviceCidr: c.serviceCidr,
    gatewayAddress: c.publicAddress,
  }));
  await setConfig(workspace, [["clusters", JSON.stringify(members)], ...agentImageConfig(lab.clusters)]);
}

/** The processes below `pid` (children, their children, …), as /proc tells it now: a killed engine's plugins and program. */
export function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Ended while listed.
    }
  }
  const found: number[] = [];
  const walk = (parent: number): void => {
    for (const [child, ppid] of parents) {
      if (ppid !== parent) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

/** Whether process `pid` still runs (a zombie counts as ended). */
export function isAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
