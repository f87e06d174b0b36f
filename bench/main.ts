/**
 * `npm run bench`: the project's figures, printed as a table and written as JSON. Not a test:
 * it asserts nothing, it measures; the targets it shows are met or missed by the figures of
 * this run, taken side by side on this (shared, noisy) machine.
 *
 * `renewal` (an identity of 600 s renewed while calls go on, about 11 minutes) runs only when named.
 * So does `upgrade` (a stack of the previous release upgraded to this build, per round about 5 minutes),
 * and `scale` (500 pods on one virtual node, then 10 consumers of one provider: `--scale-pods`, `--consumers`).
 *
 * Every section runs on the product as users deploy it: each cluster's agent, gateway and route
 * agents are pods that its install (a `Cluster`, or the same steps) deploys from the agent image the
 * lab's nodes hold.
 *
 * Usage: node dist/bench/main.js [tunnel] [gateway-move] [stacks] [mesh] [auth] [offloading] [renewal] [upgrade] [scale]
 *          [--runs N] [--rounds N] [--seconds N] [--idle N] [--refusals N] [--pods N] [--scale-pods N] [--consumers N] [--mesh N,N…]
 *          [--shared-lab | --lab NAME] [--no-type-check] [--out FILE] [--record]
 * `--shared-lab`: sections that need plain clusters a and b run on the test run's shared lab (the
 * suite's smoke run, test/integration/bench-smoke.test.ts) instead of a lab of their own.
 * `--lab NAME`: the sections run on test lab NAME, which a test holds up with the clusters they ask for.
 * Every run compares its figures with the figures of record in docs/performance.md (bench/record.ts)
 * and prints, beside the targets, those that slipped; `--record` writes this run's figures there.
 * `--no-type-check`: `stacks` and `mesh` start their programs without type-checking them (the smoke
 * run, whose figures are checked for presence only); their times are then not a user's.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { downLab, listLabs } from "../local-cluster/lab.js";
import { labOwner, releaseSharedLab, TEST_LAB_ROOT } from "../harness/labs.js";
import { benchAuth } from "./auth.js";
import { benchGatewayMove } from "./gateway-move.js";
import { heldLab, privateLabs, sharedLabs, type LabRunner } from "./labs.js";
import { benchOffloading } from "./offloading.js";
import { benchRenewal } from "./renewal.js";
import { formatSeries, formatTarget, machine, timed, type SectionResult } from "./figures.js";
import { AS_USERS_RUN, benchMeshes, benchStacks, DEFAULT_MESH_SIZES, type StackRuns } from "./stacks.js";
import { benchTunnel, stopHandTunnels } from "./tunnel.js";
import { benchUpgrade } from "./upgrade.js";
import { benchScale } from "./scale.js";
import { formatSlip, parseRecord, slips, withRecorded } from "./record.js";
import { REPO } from "../harness/pulumi.js";

/** The page whose figures of record each run is compared with (bench/record.ts). */
const PERFORMANCE_PAGE = join(REPO, "docs", "performance.md");

const SECTIONS = [
  "tunnel",
  "gateway-move",
  "stacks",
  "mesh",
  "auth",
  "offloading",
  "renewal",
  "upgrade",
  "scale",
] as const;
type Section = (typeof SECTIONS)[number];
/** What runs when no section is named: all but the long `renewal`, `upgrade` and `scale`. */
const DEFAULT_SECTIONS: readonly Section[] = ["tunnel", "gateway-move", "stacks", "mesh", "auth", "offloading"];

/** What the command line asked for. */
interface Options {
  readonly sections: readonly Section[];
  /** Peering ups, previews and refreshes per figure. */
  readonly runs: number;
  /** Tunnel rounds (veth, by hand, gateway each); gateway-move rounds (the client's gateway pod deleted, then the server's). */
  readonly rounds: number;
  /** Seconds of each iperf3 run. */
  readonly seconds: number;
  /** Seconds the agents are watched idle. */
  readonly idle: number;
  /** Auth service refusals timed of each kind. */
  readonly refusals: number;
  /** Pods of the offloading figure. */
  readonly pods: number;
  /** Pods on one virtual node of the scale figures. */
  readonly scalePods: number;
  /** Consumers of one provider of the scale figures. */
  readonly consumers: number;
  /** Cluster counts of the mesh figures. */
  readonly mesh: readonly number[];
  /** Where sections get their labs. */
  readonly labs: LabRunner;
  /** How `stacks` and `mesh` start their programs. */
  readonly stackRuns: StackRuns;
  readonly out: string;
  /** Write this run's figures into the page's figures of record. */
  readonly record: boolean;
}

const USAGE =
  "usage: npm run bench -- [tunnel] [gateway-move] [stacks] [mesh] [auth] [offloading] [renewal] [upgrade] [scale] " +
  "[--runs N] [--rounds N] [--seconds N] [--idle N] [--refusals N] [--pods N] [--scale-pods N] [--consumers N] [--mesh N,N…] " +
  "[--shared-lab | --lab NAME] [--no-type-check] [--out FILE] [--record]";

/** Reads the command line; a wrong argument ends the run with the usage. */
function parseOptions(args: readonly string[]): Options {
  const numbers: Record<string, number> = {
    runs: 5,
    rounds: 3,
    seconds: 10,
    idle: 60,
    refusals: 200,
    pods: 100,
    "scale-pods": 500,
    consumers: 10,
  };
  const sections: Section[] = [];
  let mesh = DEFAULT_MESH_SIZES;
  let labs = privateLabs;
  let stackRuns = AS_USERS_RUN;
  let record = false;
  let out = join(".bench-output", `bench-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const flag = /^--(runs|rounds|seconds|idle|refusals|pods|scale-pods|consumers|out)$/.exec(arg)?.[1];
    if ((SECTIONS as readonly string[]).includes(arg)) sections.push(arg as Section);
    else if (flag === "out" && args[i + 1]) out = args[++i]!;
    else if (arg === "--shared-lab") labs = sharedLabs;
    else if (arg === "--record") record = true;
    else if (arg === "--no-type-check") stackRuns = { typeCheck: false };
    else if (arg === "--lab" && /^[a-z0-9]{1,8}$/.test(args[i + 1] ?? "")) labs = heldLab(args[++i]!);
    else if (arg === "--mesh" && /^[2-6](,[2-6])*$/.test(args[i + 1] ?? "")) mesh = args[++i]!.split(",").map(Number);
    else if (flag && /^[1-9]\d*$/.test(args[i + 1] ?? "")) numbers[flag] = Number(args[++i]);
    else throw new Error(`${arg}: not understood, or its value is not a positive whole number\n${USAGE}`);
  }
  return {
    sections: sections.length ? sections : DEFAULT_SECTIONS,
    runs: numbers["runs"]!,
    rounds: numbers["rounds"]!,
    seconds: numbers["seconds"]!,
    idle: numbers["idle"]!,
    refusals: numbers["refusals"]!,
    pods: numbers["pods"]!,
    scalePods: numbers["scale-pods"]!,
    consumers: numbers["consumers"]!,
    mesh,
    labs,
    stackRuns,
    out,
    record,
  };
}

/** Removes what an interrupted run made: its hand-made tunnels and its own labs (not a shared one). */
async function removeLeftovers(): Promise<void> {
  await stopHandTunnels();
  for (const lab of listLabs(TEST_LAB_ROOT)) {
    if (labOwner(lab) === process.pid) await downLab(lab, TEST_LAB_ROOT);
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: removing what this run made…`);
      void removeLeftovers().finally(() => process.exit(130));
    });
  }
  const log = (line: string): void => console.error(`[bench] ${line}`);
  const host = machine();
  const results: Partial<Record<Section, SectionResult & { seconds: number }>> = {};
  for (const section of options.sections) {
    const { seconds, result } = await timed(() =>
      section === "tunnel"
        ? benchTunnel(options.rounds, options.seconds, log, options.labs)
        : section === "gateway-move"
          ? benchGatewayMove(options.rounds, log, options.labs)
          : section === "stacks"
            ? benchStacks(options.runs, log, options.labs, options.stackRuns)
            : section === "mesh"
              ? benchMeshes(options.idle, log, options.mesh, options.labs, options.stackRuns)
              : section === "auth"
                ? benchAuth(options.refusals, log, options.labs)
                : section === "offloading"
                  ? benchOffloading(options.pods, options.rounds, options.idle, log, options.labs)
                  : section === "upgrade"
                    ? benchUpgrade(options.rounds, log, options.labs)
                    : section === "scale"
                      ? benchScale(options.scalePods, options.consumers, options.idle, log, options.labs)
                      : benchRenewal(log, options.labs),
    );
    results[section] = { ...result, seconds: Math.round(seconds) };
  }
  const all = Object.values(results);
  console.log(
    `\nmachine: ${host.cpu}, ${host.cores} cores, ${host.memoryGiB} GiB, Linux ${host.kernel}, Node ${host.node}; load at start ${host.loadAtStart.join(" ")}`,
  );
  console.log(`figure${" ".repeat(53)}median   [min–max] n`);
  for (const s of all.flatMap((r) => r.series)) console.log(formatSeries(s));
  console.log("\ntargets");
  for (const t of all.flatMap((r) => r.targets)) console.log(formatTarget(t));
  const page = readFileSync(PERFORMANCE_PAGE, "utf8");
  const slipped = slips(
    all.flatMap((r) => r.series),
    parseRecord(page),
  );
  console.log(`\nslipped since the figures of record (${PERFORMANCE_PAGE}): ${slipped.length || "none"}`);
  for (const slip of slipped) console.log(formatSlip(slip));
  if (options.record) {
    const measured = Object.fromEntries(Object.entries(results).map(([section, r]) => [section, r.series]));
    const command = `npm run bench -- ${process.argv
      .slice(2)
      .filter((arg) => arg !== "--record")
      .join(" ")}`.trim();
    writeFileSync(PERFORMANCE_PAGE, withRecorded(page, measured, new Date().toISOString().slice(0, 10), command));
    console.log(`recorded: ${Object.keys(measured).join(", ")} in ${PERFORMANCE_PAGE}`);
  }
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(
    options.out,
    `${JSON.stringify({ date: new Date().toISOString(), machine: host, options, results }, null, 2)}\n`,
  );
  console.log(`\nJSON: ${options.out}`);
  // With --shared-lab, the lock on the shared lab is held by a child process: let it go, or this one never ends.
  await releaseSharedLab();
}

main().catch((error: unknown) => {
  console.error(`bench: ${(error as Error).message}`);
  void removeLeftovers().finally(() => process.exit(1));
});
