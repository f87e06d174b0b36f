/**
 * Tunnel throughput, the gateway as it runs in any cluster: two local clusters (one node each),
 * installed with the agent as pods, b peered with a and a `Tunnel` made between their gateways
 * (the gateway pods run on their nodes' network, wireguard-go inside them). Against it, between the
 * same two nodes' network namespaces and over the same wire (the lab's bridge), in rounds that take
 * turns so that the machine's noise falls on all three alike:
 * - the plain path: node to node, no tunnel;
 * - a WireGuard tunnel configured by hand (the same wireguard-go, `wg`, `ip`, the same MTU);
 * - the gateway pods' tunnel, to the provider's tunnel address.
 * Throughput is one iperf3 TCP stream from b to a. Beside it, what bounds it: how busy the machine's
 * cores were during each run and how much of a core each wireguard-go took (one at 100% is the
 * bound on a machine with cores to spare; all cores busy means the machine is). First packet is
 * from the start of the hand-made interfaces, and from the `Tunnel`'s create, to the first ping
 * answered across. Everything made here (hand-made processes by recorded PID, their interfaces and
 * key files, the tunnel, the peering, the installs) is removed at the end.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findWireguardProcess, forgeWireguardKeyPair, wireguardSocketPath } from "../agent/gateway/index.js";
import { run, runIn } from "../host/exec.js";
import { delay, isRunning, logTail, startInNamespace, stopProcess, type ProcessRecord } from "../host/processes.js";
import { ensureTunnel } from "../core/network-fabric/tunnel.js";
import { deleteTunnel } from "../core/network-fabric/tunnel-delete.js";
import { TUNNEL_DEFAULTS, type TunnelSettings } from "../core/network-fabric/tunnel-plan.js";
import { createPeering, deletePeering, type PeeringRecord } from "../core/peering/peering.js";
import { progressTo } from "../core/operation/progress.js";
import { clusterOf, type ClusterState } from "../local-cluster/lab.js";
import { preparePeering, tunnelSidesOf } from "../harness/peering-pair.js";
import { cpuTicks, rssMiB } from "./agent-usage.js";
import { ratio, series, target } from "./figures.js";
import type { Log, SectionResult } from "./figures.js";
import { privateLabs, type LabRunner } from "./labs.js";
import { firstPacket, tunnelSides } from "./tunnel-sides.js";

const IPERF_PORT = 5201;
/** The hand-made tunnel's link: outside every range a lab uses (pods 10.100+, services 10.200+, nodes 192.168.101). */
const HAND_LINK = { server: "192.168.250.1", client: "192.168.250.2", prefix: 30, port: 51870 } as const;
const quiet = progressTo(() => undefined);

/** Busy and total ticks of all the machine's cores so far (/proc/stat; idle and iowait count as not busy). */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, n) => sum + n, 0);
  return { busy: total - fields[3]! - fields[4]!, total };
}

/** Where the CPU went during one run: the machine's cores, and each watched process. */
interface CpuShare {
  /** Busy share of all the machine's cores, percent. */
  readonly machinePercent: number;
  /** CPU of each watched process, percent of one core. */
  readonly processes: Readonly<Record<string, number>>;
}

/**
 * CPU ticks of a watched process so far; one that is gone is named, with its log's last lines,
 * since the run it was watched for measured a tunnel that broke under it.
 */
function ticksOf(name: string, record: ProcessRecord): number {
  if (!isRunning(record))
    throw new Error(
      `tunnel: ${name} (pid ${record.pid}) is no longer running; its log ends: ${logTail(record.logFile)}`,
    );
  return cpuTicks(record.pid);
}

/** Runs `body` and measures the machine's CPU and that of the `watched` processes meanwhile. */
async function cpuDuring<T>(
  watched: Readonly<Record<string, ProcessRecord>>,
  body: () => Promise<T>,
): Promise<{ result: T; cpu: CpuShare }> {
  const ticksPerSecond = Number(await run("getconf", ["CLK_TCK"]));
  const processes = Object.entries(watched).map(([name, record]) => ticksOf(name, record));
  const before = { machine: machineTicks(), processes, at: performance.now() };
  const result = await body();
  const seconds = (performance.now() - before.at) / 1000;
  const machine = machineTicks();
  const percent = (ticks: number): number => Math.round((ticks / ticksPerSecond / seconds) * 1000) / 10;
  return {
    result,
    cpu: {
      machinePercent:
        Math.round(((machine.busy - before.machine.busy) / (machine.total - before.machine.total)) * 1000) / 10,
      processes: Object.fromEntries(
        Object.entries(watched).map(([name, record], i) => [
          name,
          percent(ticksOf(name, record) - before.processes[i]!),
        ]),
      ),
    },
  };
}

/** Gbit/s of one iperf3 TCP stream of `seconds` from `from` to a one-off server on `address` in `to`. */
async function throughput(from: string, to: string, address: string, seconds: number, work: string): Promise<number> {
  const server = startInNamespace(
    to,
    "iperf3 server",
    "iperf3",
    ["-s", "-1", "-B", address, "-p", String(IPERF_PORT)],
    join(work, "iperf3-server.log"),
  );
  try {
    const deadline = performance.now() + 5000;
    while (!(await runIn(to, "ss", ["-Hltn", `sport = :${IPERF_PORT}`])).trim()) {
      if (performance.now() > deadline)
        throw new Error(`iperf3 server on ${address} in ${to} did not listen within 5 s`);
      await delay(50);
    }
    const report = JSON.parse(
      await runIn(from, "iperf3", ["-c", address, "-p", String(IPERF_PORT), "-t", String(seconds), "-J"]),
    ) as { error?: string; end: { sum_received: { bits_per_second: number } } };
    if (report.error) throw new Error(`iperf3 to ${address}: ${report.error}`);
    return Math.round((report.end.sum_received.bits_per_second / 1e9) * 100) / 100;
  } finally {
    await stopProcess(server, 2000);
  }
}

/** Waits for wireguard-go's control socket of `ifname`. */
async function untilSocket(ifname: string): Promise<void> {
  const deadline = performance.now() + 5000;
  while (!existsSync(wireguardSocketPath(ifname))) {
    if (performance.now() > deadline) throw new Error(`wireguard-go made no socket for ${ifname} within 5 s`);
    await delay(20);
  }
}

/** Hand-made wireguard-go processes of this run that are still up: an interrupted run stops them ({@link stopHandTunnels}). */
const handProcesses = new Set<ProcessRecord>();

/** Stops what a hand-made tunnel of this run left running (its interfaces go with their processes). */
export async function stopHandTunnels(): Promise<void> {
  for (const record of handProcesses) await stopProcess(record, 5000);
  handProcesses.clear();
}

/** What one path measured in one round. */
interface Sample {
  readonly gbps: number;
  readonly cpu: CpuShare;
  readonly firstPacketMs?: number;
  /** The larger of the two wireguard-go's peak resident memory (VmHWM) at the end of the run, MiB. */
  readonly peakMiB: number;
}

/** The two nodes: a serves, b dials; `work` holds logs and key files. */
interface Bed {
  readonly a: ClusterState;
  readonly b: ClusterState;
  readonly work: string;
}

/** A tunnel by hand between the two nodes' namespaces: wireguard-go, then `wg set` and `ip`; measured, then removed. */
async function handTunnel(bed: Bed, seconds: number): Promise<Sample> {
  const id = process.pid.toString(36).slice(-4);
  const ends = [
    { cluster: bed.a, ifname: `lqh${id}a`, address: HAND_LINK.server, peer: HAND_LINK.client },
    { cluster: bed.b, ifname: `lqh${id}b`, address: HAND_LINK.client, peer: HAND_LINK.server },
  ] as const;
  const keys = [forgeWireguardKeyPair(), forgeWireguardKeyPair()] as const;
  const start = performance.now();
  const records = ends.map(({ cluster, ifname }) =>
    startInNamespace(
      cluster.netns,
      `wireguard-go ${ifname}`,
      "wireguard-go",
      ["-f", ifname],
      join(bed.work, `${ifname}.log`),
    ),
  );
  records.forEach((record) => handProcesses.add(record));
  try {
    for (const end of ends) await untilSocket(end.ifname);
    // As by hand: each key in a file of mode 600, in a directory of mode 700, removed right after.
    const wg = async (netns: string, ifname: string, key: string, args: string[]): Promise<void> => {
      const dir = mkdtempSync(join(bed.work, ".wg-key-"));
      try {
        writeFileSync(join(dir, "key"), `${key}\n`, { mode: 0o600 });
        await runIn(netns, "wg", ["set", ifname, "private-key", join(dir, "key"), ...args]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
    await wg(bed.a.netns, ends[0].ifname, keys[0].privateKey, [
      ...["listen-port", String(HAND_LINK.port), "peer", keys[1].publicKey],
      ...["allowed-ips", `${HAND_LINK.client}/32`],
    ]);
    await wg(bed.b.netns, ends[1].ifname, keys[1].privateKey, [
      ...["peer", keys[0].publicKey, "endpoint", `${bed.a.publicAddress}:${HAND_LINK.port}`],
      ...["allowed-ips", `${HAND_LINK.server}/32`, "persistent-keepalive", "5"],
    ]);
    for (const end of ends) {
      await runIn(end.cluster.netns, "ip", ["addr", "add", `${end.address}/${HAND_LINK.prefix}`, "dev", end.ifname]);
      await runIn(end.cluster.netns, "ip", ["link", "set", end.ifname, "mtu", String(TUNNEL_DEFAULTS.mtu), "up"]);
    }
    const firstPacketMs = await firstPacket(bed.b.netns, HAND_LINK.server, start);
    const { result: gbps, cpu } = await cpuDuring(
      { "wireguard-go a": records[0]!, "wireguard-go b": records[1]! },
      () => throughput(bed.b.netns, bed.a.netns, HAND_LINK.server, seconds, bed.work),
    );
    return { gbps, cpu, firstPacketMs, peakMiB: peakMemory(records) };
  } finally {
    for (const record of records) {
      await stopProcess(record, 5000);
      handProcesses.delete(record);
    }
  }
}

/** A CPU figure of every sample of a path. */
const cpuSeries = (label: string, samples: readonly Sample[], pick: (cpu: CpuShare) => number) =>
  series(
    label,
    "%",
    samples.map((s) => pick(s.cpu)),
  );

/**
 * The larger peak resident memory of `records` (wireguard-go processes that still run), MiB: the
 * figure the gateway pod's memory limit must hold under a saturating flow.
 */
const peakMemory = (records: readonly ProcessRecord[]): number =>
  Math.max(...records.map((r) => rssMiB(r.pid, "VmHWM")));

/** The busiest wireguard-go of a sample, percent of one core. */
const busiestWireguard = (cpu: CpuShare): number => Math.max(...Object.values(cpu.processes));

/**
 * What bounds the gateway's throughput, as the CPU figures of its runs tell: one wireguard-go at
 * a whole core, or the machine's cores all busy (iperf3 and both wireguard-go share them).
 */
export function tunnelLimit(
  gateway: { machinePercent: number; busiestWireguardPercent: number },
  cores: number,
): string {
  if (gateway.machinePercent >= 90)
    return `the machine: its ${cores} cores were ${gateway.machinePercent}% busy (iperf3 and both wireguard-go share them)`;
  if (gateway.busiestWireguardPercent >= 90)
    return `one wireguard-go at ${gateway.busiestWireguardPercent}% of a core (its encryption is single-flow bound)`;
  return (
    `neither CPU bound shows (cores ${gateway.machinePercent}% busy, busiest wireguard-go ${gateway.busiestWireguardPercent}% of a core): ` +
    "latency of the userspace path (TUN reads and writes, UDP through the bridge)"
  );
}

/** `rounds` rounds of the plain path, the hand-made tunnel and the gateway pods' tunnel, `seconds` of iperf3 each. */
export async function benchTunnel(
  rounds: number,
  seconds: number,
  log: Log,
  labs: LabRunner = privateLabs,
): Promise<SectionResult> {
  log("tunnel: two local clusters, installed with the agent as pods");
  return labs([{ name: "a" }, { name: "b" }], {}, async (lab) => {
    const bed: Bed = {
      a: clusterOf(lab, "a"),
      b: clusterOf(lab, "b"),
      work: mkdtempSync(join(tmpdir(), "pulumi-liqo-bench-")),
    };
    const pair = await preparePeering(bed.a, bed.b, { pods: 10 });
    let record: PeeringRecord | undefined;
    let sides: Awaited<ReturnType<typeof tunnelSidesOf>> | undefined;
    try {
      record = await createPeering(pair.request, quiet);
      sides = await tunnelSidesOf({ ...pair.consumer, name: "b" }, { ...pair.provider, name: "a" }, record);
      const settings: TunnelSettings = {
        server: "provider",
        serverAddress: bed.a.publicAddress,
        ...TUNNEL_DEFAULTS,
        behindNat: [],
      };
      const created = performance.now();
      const tunnel = await ensureTunnel(sides, settings, 120_000, quiet);
      const [provider] = await tunnelSides(lab);
      const gatewayFirstMs = await firstPacket(bed.b.netns, provider.address, created);
      const gatewayProcesses = async (): Promise<Record<string, ProcessRecord>> => {
        const [wa, wb] = [
          await findWireguardProcess(bed.a.netns, tunnel.provider.interfaceName),
          await findWireguardProcess(bed.b.netns, tunnel.consumer.interfaceName),
        ];
        if (!wa || !wb) throw new Error("tunnel: no wireguard-go of the gateway pods found on the nodes");
        return { "wireguard-go a (gateway pod)": wa, "wireguard-go b (gateway pod)": wb };
      };
      log(`tunnel: gateway pods' tunnel up (${tunnel.provider.interfaceName} on a at ${provider.address})`);
      const samples = { plain: [] as Sample[], hand: [] as Sample[], gateway: [] as Sample[] };
      for (let round = 1; round <= rounds; round++) {
        const plain = await cpuDuring({}, () =>
          throughput(bed.b.netns, bed.a.netns, bed.a.publicAddress, seconds, bed.work),
        );
        samples.plain.push({ gbps: plain.result, cpu: plain.cpu, peakMiB: 0 });
        samples.hand.push(await handTunnel(bed, seconds));
        const watched = await gatewayProcesses();
        const gateway = await cpuDuring(watched, () =>
          throughput(bed.b.netns, bed.a.netns, provider.address, seconds, bed.work),
        );
        samples.gateway.push({ gbps: gateway.result, cpu: gateway.cpu, peakMiB: peakMemory(Object.values(watched)) });
        log(
          `tunnel: round ${round}/${rounds}: plain ${plain.result}, by hand ${samples.hand.at(-1)!.gbps}, gateway pods ` +
            `${gateway.result} Gbit/s; cores busy during the gateway's run ${gateway.cpu.machinePercent}%, ` +
            `its wireguard-go ${Object.values(gateway.cpu.processes).join("% and ")}% of a core`,
        );
      }
      const gbps = (label: string, of: readonly Sample[]) =>
        series(
          label,
          "Gbit/s",
          of.map((s) => s.gbps),
        );
      const plain = gbps("iperf3 node to node, plain path", samples.plain);
      const hand = gbps("iperf3 node to node, WireGuard by hand", samples.hand);
      const gateway = gbps("iperf3 node to node, the gateway pods' tunnel", samples.gateway);
      const machine = {
        plain: cpuSeries("cores busy during iperf3: plain path", samples.plain, (c) => c.machinePercent),
        hand: cpuSeries("cores busy during iperf3: WireGuard by hand", samples.hand, (c) => c.machinePercent),
        gateway: cpuSeries("cores busy during iperf3: gateway pods' tunnel", samples.gateway, (c) => c.machinePercent),
      };
      const wireguardHand = cpuSeries("busiest wireguard-go, by hand (% of a core)", samples.hand, busiestWireguard);
      const wireguardGateway = cpuSeries(
        "busiest wireguard-go, gateway pod (% of a core)",
        samples.gateway,
        busiestWireguard,
      );
      const cores = Number((await run("nproc", [])).trim());
      const limit = tunnelLimit(
        { machinePercent: machine.gateway.median, busiestWireguardPercent: wireguardGateway.median },
        cores,
      );
      log(`tunnel: what limits the gateway's throughput here: ${limit}`);
      return {
        series: [
          plain,
          hand,
          gateway,
          machine.plain,
          machine.hand,
          machine.gateway,
          wireguardHand,
          wireguardGateway,
          series(
            "first packet: WireGuard by hand (interface start)",
            "ms",
            samples.hand.map((s) => s.firstPacketMs!),
          ),
          series("first packet: gateway pods' tunnel (Tunnel create)", "ms", [gatewayFirstMs]),
          series(
            "busiest wireguard-go's peak memory, by hand",
            "MiB",
            samples.hand.map((s) => s.peakMiB),
          ),
          series(
            "busiest wireguard-go's peak memory, gateway pod",
            "MiB",
            samples.gateway.map((s) => s.peakMiB),
          ),
        ],
        targets: [
          target("gateway pods' tunnel / hand-made tunnel (throughput)", ratio(gateway, hand), "min", 0.95),
          target("gateway pods' tunnel / plain path (throughput)", ratio(gateway, plain), "min", 0.2),
        ],
        details: {
          limit,
          wireguardGo: (await run("wireguard-go", ["--version"])).split("\n")[0],
          iperf3: `one TCP stream, ${seconds} s, b to a`,
          mtu: TUNNEL_DEFAULTS.mtu,
          cpu: samples,
        },
      };
    } finally {
      await stopHandTunnels();
      if (sides) await deleteTunnel(sides, { force: true, timeoutMs: 60_000 }, quiet);
      if (record)
        await deletePeering(pair.consumerKubeconfig, record, pair.auth, { force: true, timeoutMs: 120_000 }, quiet);
      await pair.cleanup();
      rmSync(bed.work, { recursive: true, force: true });
    }
  });
}
