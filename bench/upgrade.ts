/**
 * An upgrade as a user makes one (harness/upgrade.ts, as the upgrade test sets it up): on a lab of
 * clusters a and b with their load balancers, the previous release's stack of the one-stack program
 * with an app of two pods on the virtual node; then today's package, program and agent image, and
 * `pulumi up`, which rolls the agent, the gateway and the route agents of both clusters. Meanwhile a
 * pod of b pings one of the app's pods on a every 200 ms and holds an idle TCP connection to it
 * (`podtool flow`). Target: at most {@link LOSS_TARGET_S} of answers lost, and the connection
 * carries data after the upgrade. Each round makes its stack anew.
 */
import { DEFAULT_LOAD_BALANCER, clusterOf } from "../local-cluster/lab.js";
import { podtoolFlow, type FlowReport } from "../local-cluster/pods.js";
import { failureSummary } from "../harness/pulumi.js";
import { previousRelease, previousReleaseStack, toCurrentRelease } from "../harness/upgrade.js";
import { series, target, type Log, type SectionResult } from "./figures.js";
import { privateLabs, type LabRunner } from "./labs.js";

/** The bound on the answers a 200 ms ping may lose while an upgrade rolls the agents. */
export const LOSS_TARGET_S = 5;
/** Each flow's length: the upgrade's up, from the flow's start, takes about a minute on 2 cores. */
const FLOW_SECONDS = 180;
const NAMESPACE = "bench-upgrade";

/** One round: how long the upgrade's up took, and what the flow across it reported. */
interface UpgradeRun {
  readonly upSeconds: number;
  readonly report: FlowReport;
}

/** `rounds` upgrades from the previous release, each on a stack made for it. */
export async function benchUpgrade(rounds: number, log: Log, labs: LabRunner = privateLabs): Promise<SectionResult> {
  const previous = previousRelease();
  log(`upgrade: from ${previous.image} to today's build, two local clusters with load balancers, the agent as pods`);
  return labs([{ name: "a" }, { name: "b" }], { loadBalancer: DEFAULT_LOAD_BALANCER }, async (lab) => {
    const runs: UpgradeRun[] = [];
    for (let round = 1; round <= rounds; round++) {
      const stack = await previousReleaseStack(lab, previous, { namespace: NAMESPACE, app: "web", replicas: 2 });
      try {
        await toCurrentRelease(stack.workspace);
        const flow = podtoolFlow(clusterOf(lab, "b"), 1, stack.pods[0]!.status!.podIP!, FLOW_SECONDS);
        await flow.started;
        const flowStarted = Date.now();
        const up = await stack.workspace.pulumi(["up", "--yes", "--skip-preview"]);
        const upToMs = Date.now() - flowStarted;
        if (up.exitCode !== 0) throw new Error(`upgrade: round ${round}: up failed:\n${failureSummary(up)}`);
        if (upToMs > FLOW_SECONDS * 1000)
          throw new Error(
            `upgrade: round ${round}: the up outlasted the flow (${upToMs} ms): its losses are not all seen`,
          );
        const report = await flow.report;
        runs.push({ upSeconds: upToMs / 1000, report });
        log(`upgrade: round ${round}: up ${(upToMs / 1000).toFixed(1)} s; flow ${JSON.stringify(report)}`);
      } finally {
        await stack.cleanUp();
      }
    }
    const lost = runs.map((r) => r.report.longestGapMs / 1000);
    return {
      series: [
        series(
          "upgrade: pulumi up (both clusters' agents rolled)",
          "s",
          runs.map((r) => r.upSeconds),
        ),
        series("upgrade: 200 ms pings across the tunnel unanswered", "s", lost),
      ],
      targets: [
        target(
          `answers lost during an upgrade ≤ ${LOSS_TARGET_S} s (worst run)`,
          Math.max(...lost),
          "max",
          LOSS_TARGET_S,
        ),
        target(
          "idle TCP connections that carried data after the upgrade (of all runs)",
          runs.filter((r) => r.report.tcp === "echoed").length,
          "min",
          runs.length,
        ),
      ],
      details: { from: previous.image, flowSeconds: FLOW_SECONDS, runs },
    };
  });
}
