/**
 * Labs started side by side, as Jest's workers start them: two `up`s of different labs at once (two
 * processes) choose distinct subnets and both work; two processes asking for the same run's shared
 * lab at once start it once, and both get that one lab.
 */
import * as k8s from "@kubernetes/client-node";
import { execa } from "execa";
import { join } from "node:path";
import { downLab, readLab, upLab, type LabState } from "../../local-cluster/lab.js";
import { adminConfig } from "../../harness/install.js";
import { TEST_LAB_ROOT, forgetLab, sharedLabName, uniqueLabName } from "../../harness/labs.js";
import type { ProcessRecord } from "../../host/processes.js";
import { labTraces } from "../../harness/leaks.js";

/** Each test's bound: two labs started at once, and their teardown. */
const TEST_BOUND_MS = 6 * 60_000;

const DIST = join(__dirname, "..", "..", "dist");

/** Whether every cluster of `lab` answers: its API server lists the namespaces. */
async function answers(lab: LabState): Promise<boolean> {
  for (const cluster of lab.clusters) {
    const namespaces = await adminConfig(cluster).makeApiClient(k8s.CoreV1Api).listNamespace();
    if (!namespaces.items.some((n) => n.metadata?.name === "default")) return false;
  }
  return true;
}

const recordsOf = (lab: LabState): ProcessRecord[] =>
  lab.clusters.flatMap((c) => [...c.processes, ...(c.supervisor ? [c.supervisor] : [])]);

/**
 * Starts two labs at once with `up`, then checks that they chose distinct subnets and that both
 * answer; down leaves nothing of either.
 */
async function twoLabsAtOnce(up: (name: string) => Promise<LabState>): Promise<void> {
  const names = [uniqueLabName(), uniqueLabName()];
  const seen: ProcessRecord[] = [];
  try {
    const labs = await Promise.all(names.map(up));
    for (const lab of labs) seen.push(...recordsOf(lab));
    expect(labs[0]!.subnetIndex).not.toBe(labs[1]!.subnetIndex);
    expect(labs[0]!.hostAddress).not.toBe(labs[1]!.hostAddress);
    for (const lab of labs) expect(await answers(lab)).toBe(true);
  } finally {
    for (const name of names) await downLab(name, TEST_LAB_ROOT);
  }
  for (const name of names) expect(await labTraces(name, TEST_LAB_ROOT, seen)).toEqual([]);
}

describe("labs started at once", () => {
  test(
    "GIVEN two `clusters up` of different labs started at the same moment THEN they get distinct subnets and both work",
    async () => {
      await twoLabsAtOnce(async (name) => {
        const up = await execa(
          process.execPath,
          [join(DIST, "local-cluster", "cli.js"), "up", "solo", "--lab", name, "--load-balancer", "none"],
          {
            env: { ...process.env, LIQO_LAB_ROOT: TEST_LAB_ROOT },
            reject: false,
            stdin: "ignore",
          },
        );
        expect({ lab: name, exitCode: up.exitCode }).toEqual({ lab: name, exitCode: 0 });
        return readLab(name, TEST_LAB_ROOT)!;
      });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN two upLab calls of different labs at once in one process THEN they get distinct subnets and both work",
    async () => {
      // In one event loop the two calls interleave at every await, so both choose a subnet before
      // either has recorded one, unless the choice is locked: a race the two processes above hit
      // only when their start-up times happen to line up. (Without the lock both took 172.29.1.0/24
      // and timed out on "certificate signature failure".)
      await twoLabsAtOnce((name) =>
        upLab([{ name: "solo" }], { name, root: TEST_LAB_ROOT, log: () => undefined, loadBalancer: "none" }),
      );
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN two processes asking for a run's shared lab at the same moment THEN one lab starts, and both get it",
    async () => {
      // A run of its own (its id names the shared lab), so that this lab is started here and not found.
      const run = process.pid * 1000 + Math.floor(Math.random() * 1000);
      const name = sharedLabName(run);
      const script = `
      const labs = require(${JSON.stringify(join(DIST, "harness", "labs.js"))});
      labs.sharedLab().then(async (lab) => {
        process.stdout.write(JSON.stringify({ name: lab.name, pids: lab.clusters.flatMap((c) => c.processes.map((p) => p.pid)) }));
        await labs.releaseSharedLab();
      });`;
      const seen: ProcessRecord[] = [];
      try {
        const askers = [0, 1].map(() =>
          execa(process.execPath, ["-e", script], {
            env: { ...process.env, LIQO_TEST_RUN: String(run), LIQO_TEST_LAB_ROOT: TEST_LAB_ROOT },
            reject: false,
            stdin: "ignore",
          }),
        );
        const results = await Promise.all(askers);
        expect(results.map((r) => [r.exitCode, r.stderr])).toEqual([
          [0, ""],
          [0, ""],
        ]);
        const [first, second] = results.map((r) => JSON.parse(String(r.stdout)) as { name: string; pids: number[] });
        const lab = readLab(name, TEST_LAB_ROOT)!;
        seen.push(...recordsOf(lab));
        expect([first!.name, second!.name]).toEqual([name, name]);
        // One start: both saw the same processes, those the lab still records, four per cluster.
        expect(second!.pids).toEqual(first!.pids);
        expect(lab.clusters.flatMap((c) => c.processes.map((p) => p.pid))).toEqual(first!.pids);
        // Per cluster: etcd, the API server, the controller manager, the scheduler; and its node: containerd, kubelet, kube-proxy.
        expect(first!.pids).toHaveLength(2 * (4 + 3));
        expect(lab.clusters.map((c) => c.name)).toEqual(["a", "b"]);
        expect(await answers(lab)).toBe(true);
      } finally {
        await downLab(name, TEST_LAB_ROOT);
        forgetLab(name);
      }
      expect(await labTraces(name, TEST_LAB_ROOT, seen)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
