/**
 * A local cluster's supervisor: what systemd is to a host's control plane. One small process per
 * cluster, in the cluster's namespace, started by `up` and recorded in the lab's state; it outlives
 * the CLI. Every {@link CHECK_MS} it reads the lab's state and starts again, with the command line
 * it was first started with, each of the cluster's processes that has exited (as `Restart=always`
 * would: a process that is not ours cannot tell us its exit code), in dependency order:
 *
 *   etcd                      at once
 *   kube-apiserver            once etcd runs
 *   controller manager,       once the API server answers `/readyz` (started before, they exit:
 *   scheduler, agent          they cannot read what they need)
 *   each node's containerd,   at once (kubelet and kube-proxy wait for what they need themselves)
 *   kubelet and kube-proxy
 *
 * A process that keeps exiting is started again with the agent's capped exponential backoff
 * (1 s up to 30 s); one that has run for {@link STABLE_MS} counts as recovered. Each restart, and
 * why, is a line of `logs/supervisor.log`. `down` stops the supervisors before anything else.
 */
import { request } from "node:https";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Backoff, type BackoffPolicy } from "../agent/backoff.js";
import { abortableDelay } from "../agent/loop.js";
import type { Reporter } from "../agent/reporter.js";
import { isRunning, startInNamespace, type ProcessRecord } from "../host/processes.js";
import { readLabFile, updateLab, type ClusterState } from "./state.js";

/** The components of a local cluster, in the order they start. */
export const COMPONENTS = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "agent"] as const;

/** The processes of each worker node, in the order they start. */
export const NODE_PROCESSES = ["containerd", "kubelet", "kube-proxy"] as const;

/** A process of worker node i: e.g. `kubelet-n2`. */
export type NodeComponent = `${(typeof NODE_PROCESSES)[number]}-n${number}`;

/** One component of a local cluster: of its control plane, or of one of its nodes. */
export type Component = (typeof COMPONENTS)[number] | NodeComponent;

/** The name of node `index`'s `process`. */
export const nodeComponent = (process: (typeof NODE_PROCESSES)[number], index: number): NodeComponent =>
  `${process}-n${index}`;

/** How often the supervisor looks at its processes. */
export const CHECK_MS = 500;

/** A restarted process that has run this long has recovered: its next exit is restarted at once. */
export const STABLE_MS = 10_000;

/** The backoff between restarts of a process that keeps exiting: 1 s, 2 s … 30 s. */
export const RESTART_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 30_000 };

/** What a component needs before it is started again. */
export function restartGate(component: Component): "nothing" | "etcd running" | "API server ready" {
  if (component === "etcd" || !(COMPONENTS as readonly string[]).includes(component)) return "nothing";
  return component === "kube-apiserver" ? "etcd running" : "API server ready";
}

/** What the supervisor sees in one look. */
export interface SupervisedView {
  /** Each recorded component and whether it runs. */
  readonly running: ReadonlyMap<Component, boolean>;
  /** Whether the API server answered `/readyz` (asked only when a dead component waits on it). */
  readonly apiReady: () => boolean;
  /** When each component's backoff lets it be started again (ms); absent: at once. */
  readonly dueAt: ReadonlyMap<Component, number>;
  /** Now (ms). */
  readonly now: number;
}

/** The exited components to start again now, in start order: their gate is open and their backoff over. */
export function decideRestarts(view: SupervisedView): Component[] {
  const open = (component: Component): boolean => {
    const gate = restartGate(component);
    if (gate === "nothing") return true;
    if (gate === "etcd running") return view.running.get("etcd") === true;
    return view.running.get("kube-apiserver") === true && view.apiReady();
  };
  const order = [
    ...COMPONENTS,
    ...[...view.running.keys()].filter((c) => !(COMPONENTS as readonly string[]).includes(c)),
  ];
  return order.filter(
    (c) => view.running.get(c) === false && view.now >= (view.dueAt.get(c) ?? Number.NEGATIVE_INFINITY) && open(c),
  );
}

/** Whether the API server in this namespace answers `/readyz` with 200 (anonymous: the default RBAC allows it). */
export function apiServerReady(caFile: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/readyz", ca: readFileSync(caFile), timeout: 2000 },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}

/** The compiled supervisor's entry point. */
export function supervisorEntryPoint(): string {
  return join(dirname(require.resolve("pulumi-liqo/package.json")), "dist", "local-cluster", "supervise.js");
}

/**
 * Starts the supervisor of `cluster` (of the lab in `labDir`) in the cluster's namespace, by
 * `nsenter`: what it starts again by `nsenter` (the nodes' processes) must see the host's mounts.
 */
export function startSupervisor(labDir: string, cluster: ClusterState): ProcessRecord {
  return startInNamespace(
    cluster.netns,
    "supervisor",
    process.execPath,
    [supervisorEntryPoint(), "--lab-dir", labDir, "--cluster", cluster.name],
    join(cluster.dir, "logs", "supervisor.log"),
    undefined,
    "nsenter",
  );
}

/** Where the supervisor of one cluster works. */
export interface SuperviseOptions {
  /** The lab's directory (its state file). */
  readonly labDir: string;
  /** The cluster supervised. */
  readonly cluster: string;
  /** Ends the supervision. */
  readonly signal: AbortSignal;
  readonly reporter: Reporter;
  /** Port of the cluster's API server. */
  readonly apiServerPort: number;
}

/**
 * Supervises one cluster until `signal` aborts or the lab's state is gone (the lab was taken down
 * without stopping the supervisor first: nothing is left to restart).
 */
export async function supervise(options: SuperviseOptions): Promise<void> {
  const { reporter } = options;
  const backoffs = new Map<Component, Backoff>();
  const backoff = (c: Component): Backoff => {
    if (!backoffs.has(c)) backoffs.set(c, new Backoff(`supervisor: ${c}`, RESTART_BACKOFF));
    return backoffs.get(c)!;
  };
  const startedAt = new Map<Component, number>();
  const missingLaunch = new Set<Component>();
  reporter.info(`supervisor of cluster ${options.cluster}: watching its recorded processes`);
  while (!options.signal.aborted) {
    const cluster = readLabFile(options.labDir)?.clusters.find((c) => c.name === options.cluster);
    if (!cluster) return reporter.info(`supervisor of cluster ${options.cluster}: the lab's state is gone; stopping`);
    const records = new Map(cluster.processes.map((p) => [p.name as Component, p]));
    const running = new Map([...records].map(([c, record]) => [c, isRunning(record)] as const));
    const now = Date.now();
    for (const [component, alive] of running) {
      if (alive && now - (startedAt.get(component) ?? 0) >= STABLE_MS) {
        const recovered = backoff(component).succeeded();
        if (recovered) reporter.info(recovered);
      }
    }
    // The API server is asked only when a dead component waits on it.
    const waiting = [...running].some(([c, alive]) => !alive && restartGate(c) === "API server ready");
    const apiReady = waiting && (await apiServerReady(join(cluster.dir, "pki", "ca.crt"), options.apiServerPort));
    const dueAt = new Map([...records.keys()].map((c) => [c, backoff(c).dueAt] as const));
    for (const component of decideRestarts({ running, apiReady: () => apiReady, dueAt, now })) {
      if (options.signal.aborted) return;
      const launch = cluster.launches?.[component];
      if (!launch) {
        if (!missingLaunch.has(component))
          reporter.warn(
            `supervisor: ${component} exited, and the lab's state has no command line for it; run \`npm run clusters -- up\` again`,
          );
        missingLaunch.add(component);
        continue;
      }
      const old = records.get(component)!;
      const decision = backoff(component).failed(`${component} (pid ${old.pid}) exited; see ${old.logFile}`, now);
      const record = startInNamespace(
        launch.netns ?? cluster.netns,
        component,
        launch.command,
        launch.args,
        old.logFile,
        launch.environment,
        launch.entry,
      );
      startedAt.set(component, now);
      updateLab(options.labDir, (state) => {
        const mine = state.clusters.find((c) => c.name === options.cluster);
        const index = mine?.processes.findIndex((p) => p.name === component) ?? -1;
        if (index >= 0) mine!.processes[index] = record;
      });
      reporter.info(
        `supervisor: restarted ${component}: pid ${old.pid} exited, now pid ${record.pid} (restart ${decision.failures} in a row)`,
      );
      if (decision.report && decision.failures > 1) reporter.warn(decision.report);
    }
    await abortableDelay(CHECK_MS, options.signal);
  }
}
