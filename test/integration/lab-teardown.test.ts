/**
 * Teardown leaves nothing, also after a run that was killed half-way: no process, namespace,
 * link, firewall rule or file. A second `up` after such a crash recovers by itself.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { run } from "../../host/exec.js";
import { downLab, listLabs, readLab, upLab } from "../../local-cluster/lab.js";
import { isRunning, type ProcessRecord } from "../../host/processes.js";
import { poll } from "../../core/wait/poll.js";
import { LAB_LOCK_KINDS, labLockFile, retireSharedLab, TEST_LAB_ROOT, uniqueLabName } from "../../harness/labs.js";
import { labTraces } from "../../harness/leaks.js";
import { ensureTunnel } from "../../core/network-fabric/tunnel.js";
import { TUNNEL_DEFAULTS } from "../../core/network-fabric/tunnel-plan.js";
import { peerPair, quietProgress } from "../support/tunnel-pair.js";

/** Each test's bound: labs started, killed half-way, started again and torn down. */
const TEST_BOUND_MS = 8 * 60_000;

/** The wireguard-go processes serving `interfaceName`, wherever they run. */
async function wireguardGoServing(interfaceName: string): Promise<string[]> {
  return (await run("ps", ["-eo", "pid=,args="]))
    .split("\n")
    .filter((line) => line.trim().endsWith(`wireguard-go -f ${interfaceName}`));
}

/** The host's firewall rules, without iptables-save's timestamped comments. */
async function hostRules(): Promise<string> {
  return (await run("iptables-save", [])).replace(/^#.*\n?/gm, "");
}

describe("lab teardown", () => {
  test(
    "GIVEN an `up` killed half-way WHEN up runs again THEN it recovers, and down then leaves nothing",
    async () => {
      const name = uniqueLabName();
      const hostRulesBefore = await hostRules();
      const cli = join(__dirname, "..", "..", "dist", "local-cluster", "cli.js");
      const child = spawn(process.execPath, [cli, "up", "solo", "--lab", name, "--load-balancer", "none"], {
        env: { ...process.env, LIQO_LAB_ROOT: TEST_LAB_ROOT },
        stdio: "ignore",
      });
      const seen: ProcessRecord[] = [];
      try {
        // Kill the command as soon as its API server process is recorded: a crash mid-start.
        await poll(
          { step: "test", object: `kube-apiserver of lab ${name} recorded`, endpoint: TEST_LAB_ROOT },
          { timeoutMs: 60_000, intervalMs: 50 },
          async () => {
            const processes = readLab(name, TEST_LAB_ROOT)?.clusters[0]?.processes ?? [];
            return processes.some((p) => p.name === "kube-apiserver")
              ? { done: true, value: undefined }
              : { done: false, state: `${processes.length} processes recorded` };
          },
        );
        child.kill("SIGKILL");
        seen.push(...readLab(name, TEST_LAB_ROOT)!.clusters[0]!.processes);
        expect(seen.some(isRunning)).toBe(true);

        const lines: string[] = [];
        const lab = await upLab([{ name: "solo" }], {
          name,
          root: TEST_LAB_ROOT,
          log: (l) => lines.push(l),
          loadBalancer: "none",
        });
        expect(lines.join("\n")).toMatch(/removed leftovers of a previous run: .*kube-apiserver/);
        expect(seen.some(isRunning)).toBe(false);
        seen.push(...lab.clusters[0]!.processes);
        expect(lab.clusters[0]!.processes.every(isRunning)).toBe(true);
      } finally {
        if (child.exitCode === null) child.kill("SIGKILL");
        await downLab(name, TEST_LAB_ROOT);
      }
      expect(await labTraces(name, TEST_LAB_ROOT, seen)).toEqual([]);
      expect(await hostRules()).toBe(hostRulesBefore);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a healthy lab WHEN up is asked for the same clusters THEN it is reused as is, supervisor included; " +
      "WHEN retired as a worker's shared lab is THEN it is down and its lock files are gone, and retiring it again does nothing",
    async () => {
      const name = uniqueLabName();
      const seen: ProcessRecord[] = [];
      try {
        const first = await upLab([{ name: "solo" }], {
          name,
          root: TEST_LAB_ROOT,
          log: () => undefined,
          loadBalancer: "none",
        });
        const lines: string[] = [];
        const second = await upLab([{ name: "solo" }], {
          name,
          root: TEST_LAB_ROOT,
          log: (l) => lines.push(l),
          loadBalancer: "none",
        });
        expect(second.clusters[0]!.processes.map((p) => p.pid)).toEqual(first.clusters[0]!.processes.map((p) => p.pid));
        expect(lines).toEqual([`[lab ${name}] already up: solo`]);
        expect(readFileSync(second.clusters[0]!.kubeconfig, "utf8")).toContain(second.clusters[0]!.apiServerUrl);
        // Its supervisor was started once, and runs on.
        expect(second.clusters[0]!.supervisor?.pid).toBe(first.clusters[0]!.supervisor?.pid);
        expect(isRunning(second.clusters[0]!.supervisor!)).toBe(true);
        seen.push(...second.clusters[0]!.processes, second.clusters[0]!.supervisor!);
        await retireSharedLab(name);
        expect(listLabs(TEST_LAB_ROOT)).not.toContain(name);
        expect(seen.filter(isRunning)).toEqual([]);
        const lockFiles = LAB_LOCK_KINDS.map((kind) => labLockFile(name, kind));
        expect(lockFiles.filter((file) => existsSync(file))).toEqual([]);
        await retireSharedLab(name);
      } finally {
        await downLab(name, TEST_LAB_ROOT);
      }
      expect(await labTraces(name, TEST_LAB_ROOT, seen)).toEqual([]);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a lab whose gateways run a tunnel WHEN it is torn down THEN no wireguard-go outlives it (a gateway restarts one that dies)",
    async () => {
      const name = uniqueLabName();
      const served: string[] = [];
      const seen: ProcessRecord[] = [];
      try {
        const lab = await upLab([{ name: "a" }, { name: "b" }], {
          name,
          root: TEST_LAB_ROOT,
          log: () => undefined,
          loadBalancer: "none",
        });
        seen.push(...lab.clusters.flatMap((c) => c.processes));
        const pair = await peerPair(lab);
        const settings = {
          server: "provider" as const,
          serverAddress: pair.a.publicAddress,
          ...TUNNEL_DEFAULTS,
          behindNat: [],
        };
        const tunnel = await ensureTunnel(pair.sides, settings, 60_000, quietProgress);
        served.push(tunnel.consumer.interfaceName, tunnel.provider.interfaceName);
        for (const ifname of served) expect(await wireguardGoServing(ifname)).toHaveLength(1);
      } finally {
        await downLab(name, TEST_LAB_ROOT);
      }
      for (const ifname of served) expect(await wireguardGoServing(ifname)).toEqual([]);
      expect(await labTraces(name, TEST_LAB_ROOT, seen)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
