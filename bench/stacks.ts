/**
 * The benchmark's `pulumi` figures, each taken side by side, in the same run (the machine is
 * shared and noisy), with the same command on its floor: the same resources and dependencies on a
 * do-nothing dynamic provider (bench/programs/floor). An empty program's figure is printed beside
 * both: the floor minus the empty program is what the engine makes any dynamic provider pay, the
 * rest is this provider's.
 * - one out-of-band peering's `pulumi up` (its two Clusters already in place);
 * - no-change `pulumi preview` and `pulumi refresh` of the demo stack; then, on its tunnel, the
 *   time a killed wireguard-go takes to carry traffic again (recovery.ts);
 * - `pulumi up` of an all-to-all mesh of 2, 4 and 6 clusters, and the agents' idle usage after it.
 * The commands that set up or clean up around a measured one skip their preview (`--skip-preview`):
 * only the measured commands run as a user types them.
 */
import { dirname, join } from "node:path";
import type { LabState } from "../local-cluster/lab.js";
import { configureForLab, configureMeshForLab, PulumiWorkspace } from "../harness/pulumi.js";
import { agentUsage, type AgentUsage } from "./agent-usage.js";
import { benchRecovery } from "./recovery.js";
import { difference, ratio, series, target, timed, type Log, type SectionResult, type Series } from "./figures.js";
import { privateLabs, type LabRunner } from "./labs.js";

const REPO = dirname(require.resolve("pulumi-liqo/package.json"));
const PROGRAMS = join(REPO, "bench", "programs");

/**
 * How the stacks' `pulumi` runs start their program. By default they type-check it, as a user's
 * `pulumi up` does, so that the figures are a user's; the suite's smoke run, which checks that
 * figures come and not what they are, skips it (`--no-type-check`: `npm run typecheck` checks the
 * programs once).
 */
export interface StackRuns {
  /** Whether each `pulumi` run type-checks the program before running it, as `pulumi up` does by default. */
  readonly typeCheck: boolean;
}

/** What a user's `pulumi up` does. */
export const AS_USERS_RUN: StackRuns = { typeCheck: true };

/** Seconds one `pulumi args…` took in `workspace`; throws with pulumi's diagnostics on failure. */
async function secondsOf(workspace: PulumiWorkspace, args: readonly string[]): Promise<number> {
  return (await timed(() => workspace.ok(args))).seconds;
}

/** Runs `body` with an empty program's stack, brought up once, and removes it afterwards. */
async function withEmptyStack<T>(runs: StackRuns, body: (empty: PulumiWorkspace) => Promise<T>): Promise<T> {
  const empty = await PulumiWorkspace.create(join(PROGRAMS, "empty"), "test", undefined, runs);
  try {
    await empty.ok(["up", "--yes", "--skip-preview"]);
    return await body(empty);
  } finally {
    empty.dispose();
  }
}

/** Runs `body` with a stack of `program` configured for `lab`; destroys the stack and removes the workspace afterwards. */
async function withStack<T>(
  program: string,
  lab: LabState,
  runs: StackRuns,
  body: (workspace: PulumiWorkspace) => Promise<T>,
): Promise<T> {
  const workspace = await PulumiWorkspace.create(program, "test", undefined, runs);
  try {
    await configureForLab(workspace, lab, { gatewayAddress: true });
    return await body(workspace);
  } finally {
    await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
    workspace.dispose();
  }
}

/** Seconds of `pulumi up` of `stack` with config `peer` set (the measured step); then unpeered again, unmeasured. */
async function peeredUp(stack: PulumiWorkspace): Promise<number> {
  await stack.ok(["config", "set", "peer", "true"]);
  const seconds = await secondsOf(stack, ["up", "--yes"]);
  await stack.ok(["config", "set", "peer", "false"]);
  await stack.ok(["up", "--yes", "--skip-preview"]);
  return seconds;
}

/** Runs `body` with the floor program of `shape` (see bench/programs/floor) configured for `lab`, destroyed afterwards. */
function withFloor<T>(
  shape: "demo" | "peering",
  lab: LabState,
  runs: StackRuns,
  body: (floor: PulumiWorkspace) => Promise<T>,
): Promise<T> {
  return withStack(join(PROGRAMS, "floor"), lab, runs, async (floor) => {
    await floor.ok(["config", "set", "shape", shape]);
    return body(floor);
  });
}

/** What the stacks' figures run with: the lab, the empty program's stack, how many runs of each, how. */
interface StacksContext {
  readonly lab: LabState;
  readonly empty: PulumiWorkspace;
  readonly runs: number;
  readonly log: Log;
  readonly stackRuns: StackRuns;
}

/** `runs` out-of-band peering ups, as many of the floor's and as many empty ups, interleaved. */
async function benchPeeringUp({ lab, empty, runs, log, stackRuns }: StacksContext): Promise<SectionResult> {
  return withFloor("peering", lab, stackRuns, (floor) =>
    withStack(join(PROGRAMS, "peering"), lab, stackRuns, async (stack) => {
      log("peering: the two Clusters first, and the floor's (not measured)");
      await stack.ok(["up", "--yes", "--skip-preview"]);
      await floor.ok(["up", "--yes", "--skip-preview"]);
      const samples = { peering: [] as number[], floor: [] as number[], empty: [] as number[] };
      for (let run = 1; run <= runs; run++) {
        samples.empty.push(await secondsOf(empty, ["up", "--yes"]));
        samples.floor.push(await peeredUp(floor));
        samples.peering.push(await peeredUp(stack));
        const [ours, floors, empties] = [samples.peering, samples.floor, samples.empty].map((s) =>
          s.at(-1)!.toFixed(1),
        );
        log(`peering: run ${run}/${runs}: peering up ${ours} s, floor ${floors} s, empty ${empties} s`);
      }
      const peering = series("pulumi up: one out-of-band peering (Clusters in place)", "s", samples.peering);
      const floorUp = series("pulumi up: the same on a do-nothing provider (floor)", "s", samples.floor);
      const emptyUp = series("pulumi up: empty program", "s", samples.empty);
      return {
        series: [peering, floorUp, emptyUp],
        targets: [target("peering up − floor up (s)", difference(peering, floorUp), "max", 1.0)],
      };
    }),
  );
}

/** No-change previews and refreshes of the demo stack, of its floor and of the empty stack, interleaved; then its tunnel's recovery. */
async function benchNoChange({ lab, empty, runs, log, stackRuns }: StacksContext): Promise<SectionResult> {
  return withFloor("demo", lab, stackRuns, (floor) =>
    withStack(join(REPO, "examples", "local-peering"), lab, stackRuns, async (demo) => {
      log("no-change: the demo stack and its floor up (not measured)");
      await demo.ok(["up", "--yes", "--skip-preview"]);
      await floor.ok(["up", "--yes", "--skip-preview"]);
      const stacks = { demo, floor, empty };
      const samples = {
        preview: { demo: [] as number[], floor: [] as number[], empty: [] as number[] },
        refresh: { demo: [] as number[], floor: [] as number[], empty: [] as number[] },
      };
      const commands = {
        preview: ["preview", "--expect-no-changes"],
        refresh: ["refresh", "--yes", "--expect-no-changes"],
      };
      for (let run = 1; run <= runs; run++) {
        for (const command of ["preview", "refresh"] as const) {
          for (const name of ["empty", "floor", "demo"] as const)
            samples[command][name].push(await secondsOf(stacks[name], commands[command]));
        }
        const last = (command: "preview" | "refresh"): string => {
          const [demo, floor, empty] = (["demo", "floor", "empty"] as const).map((name) =>
            samples[command][name].at(-1)!.toFixed(1),
          );
          return `${command} ${demo} s (floor ${floor} s, empty ${empty} s)`;
        };
        log(`no-change: run ${run}/${runs}: ${last("preview")}, ${last("refresh")}`);
      }
      const of = (command: "preview" | "refresh"): [Series, Series, Series] => [
        series(`pulumi ${command}, no change: demo stack (6 resources)`, "s", samples[command].demo),
        series(`pulumi ${command}, no change: its floor (do-nothing provider)`, "s", samples[command].floor),
        series(`pulumi ${command}, no change: empty stack`, "s", samples[command].empty),
      ];
      const preview = of("preview");
      const refresh = of("refresh");
      // Last: the kills leave the tunnel as it was, but its status catches up only on the next resync.
      const recovery = await benchRecovery(lab, runs, log);
      return {
        series: [...preview, ...refresh, ...recovery.series],
        targets: [
          target("demo preview / floor preview", ratio(preview[0], preview[1]), "max", 1.15),
          target("demo refresh / floor refresh", ratio(refresh[0], refresh[1]), "max", 1.5),
          ...recovery.targets,
        ],
      };
    }),
  );
}

/** The peering and no-change figures, on one lab of two clusters. */
export async function benchStacks(
  runs: number,
  log: Log,
  labs: LabRunner = privateLabs,
  stackRuns: StackRuns = AS_USERS_RUN,
): Promise<SectionResult> {
  log("stacks: two local clusters");
  return labs([{ name: "a" }, { name: "b" }], {}, (lab) =>
    withEmptyStack(stackRuns, async (empty) => {
      const context = { lab, empty, runs, log, stackRuns };
      const peering = await benchPeeringUp(context);
      const noChange = await benchNoChange(context);
      return { series: [...peering.series, ...noChange.series], targets: [...peering.targets, ...noChange.targets] };
    }),
  );
}

const CLUSTER_NAMES = ["a", "b", "c", "d", "e", "f"];

/** The mesh sizes measured unless told others. */
export const DEFAULT_MESH_SIZES: readonly number[] = [2, 4, 6];

/**
 * `pulumi up` of the mesh example all-to-all on `size` fresh clusters; with `idleSeconds`, then
 * the agents' resident memory and CPU while idle, each agent serving `size - 1` peerings each way.
 */
async function benchMesh(
  size: number,
  idleSeconds: number | undefined,
  log: Log,
  labs: LabRunner,
  stackRuns: StackRuns,
): Promise<{ up: number; agents?: AgentUsage[] }> {
  log(`mesh: ${size} local clusters`);
  return labs(
    CLUSTER_NAMES.slice(0, size).map((name) => ({ name })),
    {},
    async (lab) => {
      const workspace = await PulumiWorkspace.create(join(REPO, "examples", "mesh"), "test", undefined, stackRuns);
      try {
        await configureMeshForLab(workspace, lab);
        const up = await secondsOf(workspace, ["up", "--yes"]);
        log(`mesh: ${size} clusters all-to-all up in ${up.toFixed(1)} s`);
        if (idleSeconds === undefined) return { up };
        log(`mesh: sampling the ${size} agents for ${idleSeconds} s of idle`);
        const agents = await agentUsage(lab, idleSeconds);
        return { up, agents };
      } finally {
        await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
        workspace.dispose();
      }
    },
  );
}

/**
 * Mesh ups of each of `sizes` (2 to 6 clusters); the agents' idle usage in the smallest mesh and
 * in the largest (`size - 1` peerings each way). The targets hold the largest.
 */
export async function benchMeshes(
  idleSeconds: number,
  log: Log,
  sizes: readonly number[] = DEFAULT_MESH_SIZES,
  labs: LabRunner = privateLabs,
  stackRuns: StackRuns = AS_USERS_RUN,
): Promise<SectionResult> {
  const sorted = [...new Set(sizes)].sort((x, y) => x - y);
  if (sorted.length === 0 || sorted.some((n) => !Number.isInteger(n) || n < 2 || n > CLUSTER_NAMES.length))
    throw new Error(`mesh sizes ${sizes.join(",")}: each must be a whole number from 2 to ${CLUSTER_NAMES.length}`);
  const [smallest, largest] = [sorted[0]!, sorted.at(-1)!];
  const ups: Series[] = [];
  const usages = new Map<number, AgentUsage[]>();
  for (const size of sorted) {
    const sampled = size === smallest || size === largest;
    const mesh = await benchMesh(size, sampled ? idleSeconds : undefined, log, labs, stackRuns);
    ups.push(series(`pulumi up: mesh of ${size} clusters, all-to-all`, "s", [mesh.up]));
    if (mesh.agents) usages.set(size, mesh.agents);
  }
  const peerings = (size: number): string => `${size - 1} peering${size > 2 ? "s" : ""} each way`;
  const usage = (size: number): [Series, Series] => {
    const label = `${peerings(size)} (${size}-cluster mesh)`;
    const agents = usages.get(size)!;
    return [
      series(
        `agent resident memory, idle, ${label}`,
        "MB",
        agents.map((a) => a.rssMiB),
      ),
      series(
        `agent CPU, idle, ${label}`,
        "%",
        agents.map((a) => a.cpuPercent),
      ),
    ];
  };
  const [rssLargest, cpuLargest] = usage(largest);
  return {
    series: [...ups, ...(largest > smallest ? usage(smallest) : []), rssLargest, cpuLargest],
    targets: [
      target(`${largest}-cluster mesh up (s)`, ups.at(-1)!.median, "max", 60),
      target(`agent memory with ${peerings(largest)}, worst (MB)`, rssLargest.max, "max", 80),
      target(`agent CPU with ${peerings(largest)}, worst (%)`, cpuLargest.max, "max", 1),
    ],
    details: Object.fromEntries([...usages].map(([size, agents]) => [`agentsInMeshOf${size}`, agents])),
  };
}
