/**
 * `clusters restart CLUSTER [COMPONENT]`: restarts one component of a local cluster, or its whole
 * control plane and agent, as `systemctl restart` would on a host. The processes are stopped (by
 * recorded PID, in reverse start order) and the cluster's supervisor starts them again, in order,
 * with the command lines they had; the command returns once each runs under a new PID and the
 * cluster is ready again (API server, controller manager and scheduler at work), and says what it did.
 */
import { dirname } from "node:path";
import { isRunning, stopProcess } from "../host/processes.js";
import { poll } from "../core/wait/poll.js";
import { waitForApiServer, waitForControllers } from "./control-plane.js";
import { clusterOf, controlPlaneSpec, ensureSupervisors, readLab, type ClusterState, type LabState } from "./lab.js";
import { COMPONENTS, type Component } from "./supervisor.js";

/** How long a restarted cluster may take to be ready again. */
const RESTART_TIMEOUT_MS = 120_000;

/** The components `cluster` runs, in start order: the agent only where the lab runs it as a host process. */
export function componentsOf(cluster: Pick<ClusterState, "processes">): Component[] {
  return COMPONENTS.filter((c) => cluster.processes.some((p) => p.name === c));
}

/** Checks a component name against those `cluster` runs, naming them. */
export function parseComponent(name: string, cluster: Pick<ClusterState, "processes">): Component {
  const components = componentsOf(cluster);
  if (!(components as readonly string[]).includes(name))
    throw new Error(`restart: no component "${name}" (components: ${components.join(", ")})`);
  return name as Component;
}

/**
 * Restarts `components` of cluster `clusterName` (default: every one) and waits until the cluster
 * is ready again. Resolves one line per component: its old and new PID.
 */
export async function restartComponents(
  state: LabState,
  clusterName: string,
  components: readonly Component[] | undefined,
  log: (line: string) => void = () => undefined,
): Promise<string[]> {
  const started = Date.now();
  const fresh = ensureSupervisors(state, log);
  const cluster = clusterOf(fresh, clusterName);
  components ??= componentsOf(cluster);
  const old = new Map(components.map((c) => [c, cluster.processes.find((p) => p.name === c)] as const));
  for (const component of [...components].reverse()) {
    const record = old.get(component);
    if (!record) throw new Error(`restart: cluster ${clusterName} has no ${component} recorded (lab ${state.name})`);
    log(`cluster ${clusterName}: stopping ${component} (pid ${record.pid})`);
    await stopProcess(record);
  }
  const context = {
    step: `restart of cluster ${clusterName}`,
    object: components.join(", "),
    endpoint: `lab ${state.name}`,
  };
  const now = await poll(context, { timeoutMs: RESTART_TIMEOUT_MS, intervalMs: 250 }, async () => {
    const current = readLab(state.name, dirname(state.dir));
    const mine = current && clusterOf(current, clusterName);
    const waiting = components.filter((c) => {
      const record = mine?.processes.find((p) => p.name === c);
      return !record || record.pid === old.get(c)!.pid || !isRunning(record);
    });
    return waiting.length === 0
      ? { done: true, value: mine! }
      : { done: false, state: `waiting for the supervisor to start ${waiting.join(", ")} again` };
  });
  const spec = controlPlaneSpec(fresh, now);
  // The supervisor restarts what exits meanwhile: these waits only look at the cluster's answers.
  const noExitCheck = (): undefined => undefined;
  await waitForApiServer(spec, noExitCheck, RESTART_TIMEOUT_MS);
  await waitForControllers(spec, noExitCheck, RESTART_TIMEOUT_MS);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  return [
    ...components.map(
      (c) =>
        `cluster ${clusterName}: restarted ${c} (pid ${old.get(c)!.pid} → ${now.processes.find((p) => p.name === c)!.pid})`,
    ),
    `cluster ${clusterName}: ready again after ${seconds} s (API server ready, controller manager and scheduler at work)`,
  ];
}
