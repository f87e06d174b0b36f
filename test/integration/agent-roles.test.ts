/**
 * The agent's gateway and route roles as the pods run them: each a process entered into a
 * cluster's network namespace with `nsenter --net` (what hostNetwork gives a pod), working in the
 * namespace it is in, against real local clusters whose host-process agents run no gateway. The
 * gateways build the Tunnel's fabric and pods talk through it (the WireGuard counters show it);
 * the route role on a second "node" (its own namespace, linked to cluster a's, where a's gateway
 * is) routes the remote range via the gateway node's InternalIP, and a pod address there reaches
 * the other cluster; SIGTERM to either role leaves nothing of it; a restarted gateway has the
 * same key and the tunnel carries traffic again.
 */
import * as k8s from "@kubernetes/client-node";
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, copyFileSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { runIn } from "../../host/exec.js";
import { Cidr } from "../../core/net/cidr.js";
import { SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { AGENT_NODE_FLAGS } from "../../core/cluster/agent-deployment.js";
import { componentLabels, GATEWAY_NAME } from "../../core/cluster/agent-components.js";
import { getTunnelEndpoint } from "../../core/network-fabric/endpoints.js";
import { endpointRefOf, ensureTunnel, readTunnel, type TunnelRecord } from "../../core/network-fabric/tunnel.js";
import { TUNNEL_DEFAULTS, type TunnelSettings } from "../../core/network-fabric/tunnel-plan.js";
import { poll } from "../../core/wait/poll.js";
import { agentEntryPoint } from "../../local-cluster/control-plane.js";
import { createNamespace, deleteNamespace, linkNamespaces } from "../../local-cluster/netns.js";
import type { ClusterState } from "../../local-cluster/state.js";
import { readWireguardStatus } from "../../agent/gateway/index.js";
import { ROUTE_PROTO } from "../../agent/route/plan.js";
import { TEST_LAB_ROOT, withLab } from "../../harness/labs.js";
import { tunnelTraces } from "../../harness/leaks.js";
import { pingReplies } from "../support/probes.js";
import { peerPair, quietProgress as progress, unpeerPair, type Pair } from "../support/tunnel-pair.js";
import { expectTrafficThroughTunnel, podsOf, waitForTunnelUp } from "../support/tunnel-traffic.js";

/** Each test's bound: a private lab's start, the gateway and route roles' installs, and a tunnel built through them. */
const TEST_BOUND_MS = 8 * 60_000;

/** Where a failed run's role logs are kept after the lab is gone. */
const LOG_DIR = join(TEST_LAB_ROOT, "agent-roles-logs");

/** How long a role may take to clean up and exit after SIGTERM (the gateway stops each wireguard-go with a 5 s grace). */
const STOP_BOUND_MS = 10_000;

/** The second node's link to cluster a's namespace (a's end is the gateway node's InternalIP). */
const NODE_LINK = { gatewayNodeIp: "192.168.250.1", nodeIp: "192.168.250.2", prefix: 24 };

/** A role of the agent, running as a process in a cluster's network namespace. */
interface RunningRole {
  readonly name: string;
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  readonly logFile: string;
}

/**
 * Starts `role` of the agent inside `netns`, entered as a hostNetwork pod is: its network namespace
 * only. In the cluster's own namespace it uses the agent's kubeconfig (the API server on
 * loopback), elsewhere the admin one (its public address).
 */
function startRole(
  netns: string,
  role: "gateway" | "route",
  cluster: ClusterState,
  dir: string,
  env: Record<string, string> = {},
): RunningRole {
  mkdirSync(dir, { recursive: true });
  const logFile = join(dir, `${role}.log`);
  const log = openSync(logFile, "a");
  try {
    const child = spawn(
      "nsenter",
      [
        `--net=/run/netns/${netns}`,
        process.execPath,
        ...AGENT_NODE_FLAGS,
        agentEntryPoint(),
        role,
        "--kubeconfig",
        netns === cluster.netns ? join(cluster.dir, "agent.kubeconfig") : cluster.kubeconfig,
        ...(role === "gateway" ? ["--work-dir", join(dir, "work")] : []),
      ],
      { stdio: ["ignore", log, log], env: { ...process.env, ...env } },
    );
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    return { name: `${role} in ${netns}`, child, exited, logFile };
  } finally {
    closeSync(log);
  }
}

/** Sends SIGTERM and resolves the exit code and how long the role took to exit; throws past {@link STOP_BOUND_MS}. */
async function terminate(role: RunningRole): Promise<{ code: number | null; ms: number }> {
  const started = performance.now();
  role.child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    role.exited,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${role.name} still running ${STOP_BOUND_MS} ms after SIGTERM; see ${role.logFile}`)),
        STOP_BOUND_MS,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  return { code, ms: performance.now() - started };
}

/** Ends a role that is still running (a failed test's), by its own process. */
async function kill(role: RunningRole | undefined): Promise<void> {
  if (!role || role.child.exitCode !== null || role.child.signalCode !== null) return;
  role.child.kill("SIGKILL");
  await role.exited;
}

/** The routes of the route role's `proto` in `netns`. */
const routesOfOurs = (netns: string): Promise<string> =>
  runIn(netns, "ip", ["-4", "-o", "route", "show", "table", "main", "proto", String(ROUTE_PROTO)]);

/** Waits until the routes of ours in `netns` are `expected` (by `ip route` text, destination and next hop). */
async function waitForRoutes(netns: string, expected: readonly string[], why: string): Promise<void> {
  await poll(
    { step: "test", object: `route role's routes ${why}`, endpoint: netns },
    { timeoutMs: 15_000, intervalMs: 200 },
    async () => {
      const routes = (await routesOfOurs(netns))
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(/\s+/).slice(0, 3).join(" "))
        .sort();
      return JSON.stringify(routes) === JSON.stringify([...expected].sort())
        ? { done: true, value: undefined }
        : { done: false, state: routes.join("; ") || "none" };
    },
  );
}

/** A Node standing for the gateway's node (no kubelet: only its InternalIP matters here). */
async function createGatewayNode(core: k8s.CoreV1Api, name: string, internalIp: string): Promise<void> {
  await core.createNode({ body: { metadata: { name } } });
  // The node controllers write it too (taints): read and replace again on a conflict.
  await poll(
    { step: "test", object: `Node ${name} with InternalIP ${internalIp}`, endpoint: "cluster a" },
    { timeoutMs: 10_000, intervalMs: 100 },
    async () => {
      const node = await core.readNode({ name });
      node.status = { ...node.status, addresses: [{ type: "InternalIP", address: internalIp }] };
      return core.replaceNodeStatus({ name, body: node }).then(
        () => ({ done: true, value: undefined }),
        (error: { code?: number }) => {
          if (error.code !== 409) throw error;
          return { done: false, state: "conflict" };
        },
      );
    },
  );
}

/** A gateway pod bound to `nodeName`, as the gateway Deployment's would be (it never runs: no kubelet). */
async function createGatewayPod(core: k8s.CoreV1Api, name: string, nodeName: string): Promise<void> {
  await core.createNamespacedPod({
    namespace: SYSTEM_NAMESPACE,
    body: {
      metadata: { name, labels: componentLabels(GATEWAY_NAME) },
      spec: {
        nodeName,
        automountServiceAccountToken: false,
        containers: [{ name: "gateway", image: "registry.invalid/none" }],
      },
    },
  });
}

/** Deletes the pod at once (no kubelet would ever confirm a graceful delete). */
const deletePod = (core: k8s.CoreV1Api, name: string): Promise<unknown> =>
  core.deleteNamespacedPod({ name, namespace: SYSTEM_NAMESPACE, gracePeriodSeconds: 0 }).catch(() => undefined);

describe("agent roles in their network namespaces", () => {
  test(
    "GIVEN gateway roles in both clusters' namespaces and a route role on a second node of a WHEN a Tunnel is built " +
      "THEN pods talk through it from both nodes; SIGTERM leaves no fabric, and a restarted gateway keeps its key",
    async () => {
      await withLab(
        [
          { name: "a", podCidr: "10.150.0.0/16" },
          { name: "b", podCidr: "10.150.0.0/16" },
        ],
        // The host agent serves only the control plane here: the gateway and route roles under test are
        // run by the test itself as processes in namespaces, where it can signal them and read their output.
        { hostAgent: true, hostGateway: false },
        async (lab) => {
          const [a, b] = [lab.clusters[0]!, lab.clusters[1]!];
          const roles: (RunningRole | undefined)[] = [];
          const nodeNetns = `liqo-${lab.name}-a-rt`;
          const gatewayNode = `${lab.name}-gw`;
          const gatewayPod = `${lab.name}-gateway`;
          const admin = new k8s.KubeConfig();
          admin.loadFromFile(a.kubeconfig);
          const core = admin.makeApiClient(k8s.CoreV1Api);
          let pair: Pair | undefined;
          let passed = false;
          try {
            roles.push(startRole(a.netns, "gateway", a, join(lab.dir, "roles-a")));
            roles.push(startRole(b.netns, "gateway", b, join(lab.dir, "roles-b")));
            pair = await peerPair(lab);
            const settings: TunnelSettings = {
              server: "provider",
              serverAddress: pair.a.publicAddress,
              ...TUNNEL_DEFAULTS,
              behindNat: [],
            };
            const tunnel: TunnelRecord = await ensureTunnel(pair.sides, settings, 90_000, progress);
            // Same pod CIDR on both sides: each sees the other remapped, through NAT rules of the gateways.
            expect(tunnel.consumer.remotePodCidrAsSeen).not.toBe(a.podCidr);
            await expectTrafficThroughTunnel(pair, tunnel, 20);

            // A second node of a: its own namespace, linked to a's (the gateway's node), with a pod address.
            await createNamespace(nodeNetns);
            const { gatewayNodeIp, nodeIp, prefix } = NODE_LINK;
            await linkNamespaces(
              { netns: a.netns, address: `${gatewayNodeIp}/${prefix}` },
              { netns: nodeNetns, address: `${nodeIp}/${prefix}` },
              "rtn",
            );
            await runIn(nodeNetns, "ip", ["route", "add", "default", "via", gatewayNodeIp]);
            const nodePod = Cidr.parse(a.podCidr).nth(60);
            await runIn(nodeNetns, "ip", ["addr", "add", `${nodePod}/32`, "dev", "rtn"]);
            await runIn(a.netns, "ip", ["route", "add", `${nodePod}/32`, "via", nodeIp]);
            await createGatewayNode(core, gatewayNode, gatewayNodeIp);
            await createGatewayPod(core, gatewayPod, gatewayNode);
            const route = startRole(nodeNetns, "route", a, join(lab.dir, "roles-a-rt"), {
              NODE_NAME: `${lab.name}-n2`,
            });
            roles.push(route);
            // b's pods as a sees them, and b's tunnel address (where an in-band peer's control plane would answer).
            const endpoint = await getTunnelEndpoint(pair.provider.kc, endpointRefOf(pair.sides, "provider"), "test");
            const expected = [
              `${tunnel.provider.remotePodCidrAsSeen} via ${gatewayNodeIp}`,
              `${endpoint!.status!.remoteTunnelAddress} via ${gatewayNodeIp}`,
            ];
            await waitForRoutes(nodeNetns, expected, "via the gateway's node");
            // The pod on the second node reaches b's pod through a's gateway and the tunnel.
            const pods = podsOf(pair, tunnel, 20);
            const before = (await readWireguardStatus(a.netns, tunnel.provider.interfaceName)).peers[0]!.txBytes;
            expect(await pingReplies(nodeNetns, nodePod, pods.b.fromA)).toMatch(/3 received/);
            const after = (await readWireguardStatus(a.netns, tunnel.provider.interfaceName)).peers[0]!.txBytes;
            expect(after).toBeGreaterThan(before);

            // The gateway's pod goes: no route leads to its node any more; it comes back: they return.
            await deletePod(core, gatewayPod);
            await waitForRoutes(nodeNetns, [], "removed with the gateway's pod");
            await createGatewayPod(core, gatewayPod, gatewayNode);
            await waitForRoutes(nodeNetns, expected, "back with the gateway's pod");
            const routeStop = await terminate(route);
            expect(routeStop.code).toBe(0);
            expect(await routesOfOurs(nodeNetns)).toBe("");

            // SIGTERM to a's gateway: it exits by itself, leaving no link, process, rule, route or NAT rule; the key stays.
            const fabric = (): Promise<string[]> =>
              tunnelTraces(a, [tunnel.provider.interfaceName]).then((t) => t.filter((x) => !x.startsWith("secret ")));
            expect((await fabric()).length).toBeGreaterThan(0);
            const gatewayStop = await terminate(roles[0]!);
            expect(gatewayStop.code).toBe(0);
            expect(gatewayStop.ms).toBeLessThan(STOP_BOUND_MS);
            expect(await fabric()).toEqual([]);
            // Its endpoint's status says the tunnel is down, rather than its last Connected.
            expect((await readTunnel(pair.sides, settings)).problems.join("; ")).toMatch(
              /Pending: the gateway stopped/,
            );
            expect(readFileSync(roles[0]!.logFile, "utf8")).toMatch(/gateway: stopped; removed .*wireguard-go/);

            // Restarted, it brings the tunnel back with the same key, and pods talk again.
            roles.push(startRole(a.netns, "gateway", a, join(lab.dir, "roles-a")));
            const restartedKey = await poll(
              { step: "test", object: "a's restarted gateway answering across the tunnel", endpoint: a.netns },
              { timeoutMs: 30_000, intervalMs: 200 },
              async () => {
                const status = await readWireguardStatus(a.netns, tunnel.provider.interfaceName).catch(() => undefined);
                const answered =
                  status !== undefined &&
                  (await runIn(b.netns, "ping", ["-I", pods.b.real, "-c", "1", "-W", "1", pods.a.fromB]).then(
                    () => true,
                    () => false,
                  ));
                return answered
                  ? { done: true, value: status.publicKey }
                  : { done: false, state: `interface ${status ? "up" : "absent"}, ping lost` };
              },
            );
            expect(restartedKey).toBe(tunnel.provider.publicKey);
            await waitForTunnelUp(pair, settings, 30_000);
            await expectTrafficThroughTunnel(pair, tunnel, 30);
            passed = true;
          } finally {
            // The tunnel goes while the gateways run (they hold its finalizers), then the roles.
            if (pair) await unpeerPair(pair);
            await deletePod(core, gatewayPod);
            await core.deleteNode({ name: gatewayNode }).catch(() => undefined);
            for (const role of roles) await kill(role);
            // A failure's roles' logs outlive the lab, for its reader.
            if (!passed) mkdirSync(LOG_DIR, { recursive: true });
            if (!passed)
              for (const role of roles)
                if (role) copyFileSync(role.logFile, join(LOG_DIR, basename(dirname(role.logFile)) + ".log"));
            await deleteNamespace(nodeNetns);
            await runIn(a.netns, "ip", ["link", "del", "rtn"]).catch(() => undefined);
          }
          expect(await tunnelTraces(a)).toEqual([]);
          expect(await tunnelTraces(b)).toEqual([]);
        },
      );
    },
    TEST_BOUND_MS,
  );
});
