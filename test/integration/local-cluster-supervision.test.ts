/**
 * Local clusters behave like hosts: a control-plane process that exits is started again by the
 * cluster's supervisor, and `clusters restart` restarts a component and waits until the cluster is
 * ready. A private one-cluster lab (killing the shared lab's etcd would disturb other suites).
 */
import { execa } from "execa";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { controlPlaneSpec, readLab, type ClusterState, type LabState } from "../../local-cluster/lab.js";
import { waitForApiServer, waitForControllers } from "../../local-cluster/control-plane.js";
import { isRunning, type ProcessRecord } from "../../host/processes.js";
import { poll } from "../../core/wait/poll.js";
import { TEST_LAB_ROOT, uniqueLabName, withLab } from "../../harness/labs.js";
import { labTraces } from "../../harness/leaks.js";

/** Each test's bound: a private lab's start and its supervisor restarting killed components. */
const TEST_BOUND_MS = 6 * 60_000;

/** How long the cluster may take to be whole again after etcd, the controller manager and the scheduler died. */
const RECOVERY_BOUND_MS = 60_000;

const recordOf = (cluster: ClusterState, name: string): ProcessRecord =>
  cluster.processes.find((p) => p.name === name)!;

/** The cluster as the lab's state has it now (the supervisor records what it restarts). */
const current = (lab: LabState): ClusterState => readLab(lab.name, TEST_LAB_ROOT)!.clusters[0]!;

describe("local cluster supervision", () => {
  test(
    "GIVEN a running cluster WHEN etcd, the controller manager and the scheduler are killed THEN the supervisor brings " +
      "each back and the cluster is ready within 60 s; `clusters restart solo kube-apiserver` restarts it and waits; down leaves nothing",
    async () => {
      const name = uniqueLabName();
      const seen: ProcessRecord[] = [];
      await withLab([{ name: "solo" }], { name }, async (lab) => {
        const before = lab.clusters[0]!;
        seen.push(...before.processes, before.supervisor!);
        expect(isRunning(before.supervisor!)).toBe(true);
        const spec = controlPlaneSpec(lab, before);

        // WHEN: the fault seen on a host whose etcd restarted, made at once and by recorded PID.
        const killed = ["etcd", "kube-controller-manager", "kube-scheduler"].map((n) => recordOf(before, n));
        const killedAt = Date.now();
        for (const record of killed) process.kill(record.pid, "SIGKILL");

        // THEN: each comes back under a new PID, everything runs, and the cluster answers.
        const back = await poll(
          { step: "test", object: "etcd, controller manager and scheduler restarted", endpoint: before.netns },
          { timeoutMs: RECOVERY_BOUND_MS, intervalMs: 250 },
          async () => {
            const now = current(lab);
            const waiting = killed
              .filter((k) => recordOf(now, k.name).pid === k.pid || !isRunning(recordOf(now, k.name)))
              .map((k) => k.name);
            const down = now.processes.filter((p) => !isRunning(p)).map((p) => p.name);
            return waiting.length === 0 && down.length === 0
              ? { done: true, value: now }
              : { done: false, state: `waiting for ${[...waiting, ...down].join(", ")}` };
          },
        );
        seen.push(...back.processes);
        const left = (): number => Math.max(1, RECOVERY_BOUND_MS - (Date.now() - killedAt));
        const noExitCheck = (): undefined => undefined;
        await waitForApiServer(spec, noExitCheck, left());
        await waitForControllers(spec, noExitCheck, left());
        expect(Date.now() - killedAt).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
        const log = readFileSync(join(before.dir, "logs", "supervisor.log"), "utf8");
        for (const k of killed)
          expect(log).toContain(`restarted ${k.name}: pid ${k.pid} exited, now pid ${recordOf(back, k.name).pid}`);

        // WHEN `clusters restart solo kube-apiserver` THEN it says what it did, once the cluster is ready again.
        const apiserver = recordOf(back, "kube-apiserver");
        const cli = join(__dirname, "..", "..", "dist", "local-cluster", "cli.js");
        const restart = await execa(process.execPath, [cli, "restart", "solo", "kube-apiserver", "--lab", name], {
          env: { LIQO_LAB_ROOT: TEST_LAB_ROOT },
          timeout: 180_000,
        });
        const after = current(lab);
        seen.push(...after.processes);
        expect(recordOf(after, "kube-apiserver").pid).not.toBe(apiserver.pid);
        expect(restart.stdout).toContain(
          `cluster solo: restarted kube-apiserver (pid ${apiserver.pid} → ${recordOf(after, "kube-apiserver").pid})`,
        );
        expect(restart.stdout).toMatch(/cluster solo: ready again after [\d.]+ s/);
        expect(after.processes.every(isRunning)).toBe(true);
        await waitForApiServer(spec, noExitCheck, 10_000);

        // An unknown component is refused, naming the ones there are.
        const wrong = await execa(process.execPath, [cli, "restart", "solo", "kubelet", "--lab", name], {
          env: { LIQO_LAB_ROOT: TEST_LAB_ROOT },
          reject: false,
        });
        expect(wrong.exitCode).toBe(1);
        expect(wrong.stderr).toContain(
          'restart: no component "kubelet" (components: etcd, kube-apiserver, kube-controller-manager, kube-scheduler)',
        );
      });
      expect(await labTraces(name, TEST_LAB_ROOT, seen)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
