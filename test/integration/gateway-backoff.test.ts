/**
 * A gateway whose wireguard-go cannot start backs off instead of retrying in a tight loop: a
 * private one-cluster lab whose agent runs a wireguard-go that fails (a script standing in its
 * path, counting its starts), a TunnelEndpoint for it, and the real agent's gateway. Within 10 s
 * it makes a handful of attempts, and says why in its log and in the endpoint's status; once the
 * binary works again it recovers within the backoff's cap; deleting the endpoint leaves nothing.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run } from "../../host/exec.js";
import { SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { deleteTunnelEndpoint, applyTunnelEndpoint, getTunnelEndpoint } from "../../core/network-fabric/endpoints.js";
import { tunnelLinkCidr } from "../../core/network-fabric/tunnel-plan.js";
import { poll } from "../../core/wait/poll.js";
import { findWireguardProcess } from "../../agent/gateway/index.js";
import { AGENT_BACKOFF } from "../../agent/backoff.js";
import { TEST_LAB_ROOT, withLab } from "../../harness/labs.js";
import { installForPeering } from "../../harness/install.js";
import { tunnelTraces } from "../../harness/leaks.js";

/** Each test's bound: a private lab's start and the gateway's capped backoff over several failed starts. */
const TEST_BOUND_MS = 5 * 60_000;

/** The fault's own words, as the failing wireguard-go prints them. */
const FAULT = "cannot open /dev/net/tun (test fault)";

/** Writes the stand-in wireguard-go: it appends a line to `attempts` per start, then fails or runs the real one. */
function writeWireguardGo(file: string, attempts: string, real: string | undefined): void {
  const body = real ? `exec ${real} "$@"` : `echo "${FAULT}" >&2\nexit 1`;
  writeFileSync(file, `#!/bin/sh\necho start >> ${attempts}\n${body}\n`);
  chmodSync(file, 0o755);
}

const countLines = (file: string): number =>
  existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;

describe("gateway backoff", () => {
  test(
    "GIVEN a gateway whose wireguard-go cannot start WHEN a tunnel asks for it THEN it retries with capped backoff, says " +
      "why, recovers once fixed, and deleting leaves nothing",
    async () => {
      mkdirSync(TEST_LAB_ROOT, { recursive: true });
      const dir = mkdtempSync(join(TEST_LAB_ROOT, ".wg-fault-"));
      const fake = join(dir, "wireguard-go");
      const attempts = join(dir, "attempts");
      const real = (await run("sh", ["-c", "command -v wireguard-go"])).trim();
      writeWireguardGo(fake, attempts, undefined);
      try {
        // A host agent: its gateway runs the failing wireguard-go this test writes, which the image cannot hold.
        await withLab([{ name: "solo" }], { hostAgent: true, wireguardGo: fake }, async (lab) => {
          const cluster = lab.clusters[0]!;
          const installed = await installForPeering(cluster);
          const ref = { namespace: SYSTEM_NAMESPACE, name: "to-nowhere" };
          const remoteId = "00000000-0000-4000-8000-00000000beef";
          await applyTunnelEndpoint(
            installed.kc,
            ref,
            {
              remoteClusterId: remoteId,
              remoteClusterName: "nowhere",
              role: "server",
              listenPort: 51830,
              mtu: 1420,
              keepaliveSeconds: 0,
              linkCidr: tunnelLinkCidr(remoteId, installed.clusterId).toString(),
              remote: {},
            },
            "test",
          );
          let ifname: string | undefined;
          try {
            // WHEN: the first attempt comes; then a 10 s window is counted.
            await poll(
              { step: "test", object: "first start of the failing wireguard-go", endpoint: fake },
              { timeoutMs: 30_000, intervalMs: 100 },
              async () =>
                countLines(attempts) > 0 ? { done: true, value: undefined } : { done: false, state: "not started yet" },
            );
            const first = Date.now();
            await poll(
              { step: "test", object: "10 s of retries", endpoint: fake },
              { timeoutMs: 11_000, intervalMs: 250 },
              async () =>
                Date.now() - first >= 10_000
                  ? { done: true, value: undefined }
                  : { done: false, state: `${countLines(attempts)} attempts` },
            );
            // THEN: 1, 2, 4 s apart (less jitter): at most 5 starts, far from hundreds.
            const inWindow = countLines(attempts);
            expect(inWindow).toBeGreaterThanOrEqual(2);
            expect(inWindow).toBeLessThanOrEqual(8);
            const log = readFileSync(join(cluster.dir, "logs", "agent.log"), "utf8");
            expect(log).toContain(FAULT);
            expect(log).toMatch(/attempt 2, retry in \d+(\.\d)? s/);
            // Reported on each growing step only, not on every attempt.
            expect(log.split("\n").filter((l) => l.includes(FAULT)).length).toBeLessThanOrEqual(inWindow);
            const failed = await getTunnelEndpoint(installed.kc, ref, "test");
            expect(failed?.status?.phase).toBe("Error");
            expect(failed?.status?.message).toContain(FAULT);

            // WHEN the binary works again THEN the next attempt, within the cap, brings the interface up.
            writeWireguardGo(fake, attempts, real);
            const fixedAt = Date.now();
            const up = await poll(
              { step: "test", object: "interface up after the fix", endpoint: cluster.netns },
              { timeoutMs: AGENT_BACKOFF.maxMs + 10_000, intervalMs: 250 },
              async () => {
                const endpoint = await getTunnelEndpoint(installed.kc, ref, "test");
                const name = endpoint?.status?.interfaceName;
                const process = name ? await findWireguardProcess(cluster.netns, name) : undefined;
                return process && endpoint?.status?.phase === "Pending"
                  ? { done: true, value: name! }
                  : { done: false, state: `${endpoint?.status?.phase}: ${endpoint?.status?.message ?? ""}` };
              },
            );
            ifname = up;
            expect(Date.now() - fixedAt).toBeLessThanOrEqual(AGENT_BACKOFF.maxMs + 10_000);
            expect(readFileSync(join(cluster.dir, "logs", "agent.log"), "utf8")).toMatch(
              /recovered after \d+ failed attempts/,
            );
          } finally {
            await deleteTunnelEndpoint(installed.kc, ref, "test");
            await poll(
              { step: "test", object: `${ref.name} removed by the gateway`, endpoint: cluster.netns },
              { timeoutMs: 30_000, intervalMs: 250 },
              async () =>
                (await getTunnelEndpoint(installed.kc, ref, "test"))
                  ? { done: false, state: "still there" }
                  : { done: true, value: undefined },
            );
          }
          expect(await tunnelTraces(cluster, ifname ? [ifname] : [])).toEqual([]);
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    TEST_BOUND_MS,
  );
});
