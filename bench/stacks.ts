/**
 * The benchmark's `pulumi` figures, each taken side by side with the same command on an empty
 * program in the same run, since the machine is shared and noisy:
 * - one out-of-band peering's `pulumi up` (its two Clusters already in place) against an empty up;
 * - no-change `pulumi preview` and `pulumi refresh` of the demo stack against an empty stack's;
 *   then, on its tunnel, the time a killed wireguard-go takes to carry traffic again (recovery.ts);
 * - `pulumi up` of an all-to-all mesh of 2, 4 and 6 clusters, and the agents' idle usage after it.
 */
import { dirname, join } from "node:path";
import type { LabState } from "../local-cluster/lab.js";
import { withLab } from "../harness/labs.js";
import { configureForLab, configureMeshForLab, PulumiWorkspace } from "../harness/pulumi.js";
import { agentUsage, type AgentUsage } from "./agent-usage.js";
import { benchRecovery } from "./recovery.js";
import { ratio, series, target, timed, type Log, type SectionResult, type Series } from "./figures.js";

const REPO = dirname(require.resolve("pulumi-liqo/package.json"));
const PROGRAMS = join(REPO, "bench", "programs");

/** Seconds one `pulumi args…` took in `workspace`; throws with pulumi's diagnostics on failure. */
async function secondsOf(workspace: PulumiWorkspace, args: readonly string[]): Promise<number> {
  return (await timed(() => workspace.ok(args))).seconds;
}

/** Runs `body` with an empty program's stack, brought up once, and removes it afterwards. */
async function withEmptyStack<T>(body: (empty: PulumiWorkspace) => Promise<T>): Promise<T> {
  const empty = await PulumiWorkspace.create(join(PROGRAMS, "empty"));
  try {
    await empty.ok(["up", "--yes"]);
    return await body(empty);
  } finally {
    empty.dispose();
  }
}

/** Runs `body` with a stack of `program` configured for `lab`; destroys the stack and removes the workspace afterwards. */
async function withStack<T>(
  program: string,
  lab: LabState,
  body: (workspace: PulumiWorkspace) => Promise<T>,
): Promise<T> {
  const workspace = await PulumiWorkspace.create(program);
  try {
    await configureForLab(workspace, lab);
    return await body(workspace);
  } finally {
    await workspace.pulumi(["destroy", "--yes"]);
    workspace.dispose();
  }
}

/** `runs` out-of-band peering ups and as many empty ups, interleaved. */
async function benchPeeringUp(lab: LabState, empty: PulumiWorkspace, runs: number, log: Log): Promise<SectionResult> {
  return withStack(join(PROGRAMS, "peering"), lab, async (stack) => {
    log("peering: the two Clusters first (not measured)");
    await stack.ok(["up", "--yes"]);
    const peeringUps: number[] = [];
    const emptyUps: number[] = [];
    for (let run = 1; run <= runs; run++) {
      emptyUps.push(await secondsOf(empty, ["up", "--yes"]));
      await stack.ok(["config", "set", "peer", "true"]);
      peeringUps.push(await secondsOf(stack, ["up", "--yes"]));
      await stack.ok(["config", "set", "peer", "false"]);
      await stack.ok(["up", "--yes"]);
      log(
        `peering: run ${run}/${runs}: peering up ${peeringUps.at(-1)!.toFixed(1)} s, empty up ${emptyUps.at(-1)!.toFixed(1)} s`,
      );
    }
    const peering = series("pulumi up: one out-of-band peering (Clusters in place)", "s", peeringUps);
    const baseline = series("pulumi up: empty program", "s", emptyUps);
    return {
      series: [peering, baseline],
      targets: [target("peering up / empty up", ratio(peering, baseline), "max", 1.5)],
    };
  });
}

/** No-change previews and refreshes of the demo stack and of the empty stack, interleaved; then its tunnel's recovery. */
async function benchNoChange(lab: LabState, empty: PulumiWorkspace, runs: number, log: Log): Promise<SectionResult> {
  return withStack(join(REPO, "examples", "local-peering"), lab, async (demo) => {
    log("no-change: the demo stack up (not measured)");
    await demo.ok(["up", "--yes"]);
    const samples = {
      demoPreview: [] as number[],
      emptyPreview: [] as number[],
      demoRefresh: [] as number[],
      emptyRefresh: [] as number[],
    };
    for (let run = 1; run <= runs; run++) {
      samples.emptyPreview.push(await secondsOf(empty, ["preview", "--expect-no-changes"]));
      samples.demoPreview.push(await secondsOf(demo, ["preview", "--expect-no-changes"]));
      samples.emptyRefresh.push(await secondsOf(empty, ["refresh", "--yes", "--expect-no-changes"]));
      samples.demoRefresh.push(await secondsOf(demo, ["refresh", "--yes", "--expect-no-changes"]));
      log(
        `no-change: run ${run}/${runs}: preview ${samples.demoPreview.at(-1)!.toFixed(1)} s (empty ${samples.emptyPreview.at(-1)!.toFixed(1)} s), refresh ${samples.demoRefresh.at(-1)!.toFixed(1)} s (empty ${samples.emptyRefresh.at(-1)!.toFixed(1)} s)`,
      );
    }
    const demoPreview = series("pulumi preview, no change: demo stack (6 resources)", "s", samples.demoPreview);
    const emptyPreview = series("pulumi preview, no change: empty stack", "s", samples.emptyPreview);
    const demoRefresh = series("pulumi refresh, no change: demo stack (6 resources)", "s", samples.demoRefresh);
    const emptyRefresh = series("pulumi refresh, no change: empty stack", "s", samples.emptyRefresh);
    // Last: the kills leave the tunnel as it was, but its status catches up only on the next resync.
    const recovery = await benchRecovery(lab, runs, log);
    return {
      series: [demoPreview, emptyPreview, demoRefresh, emptyRefresh, ...recovery.series],
      targets: [
        target("demo preview / empty preview", ratio(demoPreview, emptyPreview), "max", 1.5),
        target("demo refresh / empty refresh", ratio(demoRefresh, emptyRefresh), "max", 1.5),
        ...recovery.targets,
      ],
    };
  });
}

/** The peering and no-change figures, on one lab of two clusters. */
export async function benchStacks(runs: number, log: Log): Promise<SectionResult> {
  log("stacks: starting two local clusters");
  return withLab([{ name: "a" }, { name: "b" }], {}, (lab) =>
    withEmptyStack(async (empty) => {
      const peering = await benchPeeringUp(lab, empty, runs, log);
      const noChange = await benchNoChange(lab, empty, runs, log);
      return { series: [...peering.series, ...noChange.series], targets: [...peering.targets, ...noChange.targets] };
    }),
  );
}

const CLUSTER_NAMES = ["a", "b", "c", "d", "e", "f"];

/**
 * `pulumi up` of the mesh example all-to-all on `size` fresh clusters; with `idleSeconds`, then
 * the agents' resident memory and CPU while idle, each agent serving `size - 1` peerings each way.
 */
async function benchMesh(
  size: number,
  idleSeconds: number | undefined,
  log: Log,
): Promise<{ up: number; agents?: AgentUsage[] }> {
  log(`mesh: starting ${size} local clusters`);
  return withLab(
    CLUSTER_NAMES.slice(0, size).map((name) => ({ name })),
    {},
    async (lab) => {
      const workspace = await PulumiWorkspace.create(join(REPO, "examples", "mesh"));
      try {
        await configureMeshForLab(workspace, lab);
        const up = await secondsOf(workspace, ["up", "--yes"]);
        log(`mesh: ${size} clusters all-to-all up in ${up.toFixed(1)} s`);
        if (idleSeconds === undefined) return { up };
        log(`mesh: sampling the ${size} agents for ${idleSeconds} s of idle`);
        const agents = await agentUsage(lab, idleSeconds);
        return { up, agents };
      } finally {
        await workspace.pulumi(["destroy", "--yes"]);
        workspace.dispose();
      }
    },
  );
}

/** Mesh ups of 2, 4 and 6 clusters; the agents' idle usage with 1 and with 5 peerings each way. */
export async function benchMeshes(idleSeconds: number, log: Log): Promise<SectionResult> {
  const two = await benchMesh(2, idleSeconds, log);
  const four = await benchMesh(4, undefined, log);
  const six = await benchMesh(6, idleSeconds, log);
  const usage = (label: string, agents: readonly AgentUsage[]): Series[] => [
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
  const [rssOne, cpuOne] = usage("1 peering each way (2-cluster mesh)", two.agents!);
  const [rssFive, cpuFive] = usage("5 peerings each way (6-cluster mesh)", six.agents!);
  return {
    series: [
      series("pulumi up: mesh of 2 clusters, all-to-all", "s", [two.up]),
      series("pulumi up: mesh of 4 clusters, all-to-all", "s", [four.up]),
      series("pulumi up: mesh of 6 clusters, all-to-all", "s", [six.up]),
      rssOne!,
      cpuOne!,
      rssFive!,
      cpuFive!,
    ],
    targets: [
      target("6-cluster mesh up (s)", six.up, "max", 60),
      target("agent memory with 5 peerings, worst (MB)", rssFive!.max, "max", 80),
      target("agent CPU with 5 peerings, worst (%)", cpuFive!.max, "max", 1),
    ],
    details: { agentsWithOnePeering: two.agents, agentsWithFivePeerings: six.agents },
  };
}
