/**
 * Tunnel throughput and time to first packet, between two bare network namespaces joined by a
 * veth pair, over the same wire, in rounds that take turns so that the machine's noise falls on
 * all three alike:
 * - the plain veth;
 * - a WireGuard tunnel configured by hand (wireguard-go, `wg`, `ip`);
 * - the same tunnel made by the gateway's own code (agent/gateway), as a `Tunnel` makes it.
 * Throughput is one iperf3 TCP stream; first packet is from the start of the interface to the
 * first ping answered across it. Traffic stays between the namespaces made here, and everything
 * made here (namespaces, processes by recorded PID, sockets, key files) is removed at the end.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  configureWireguardPeer,
  deleteWireguardInterface,
  ensureWireguardInterface,
  forgeWireguardKeyPair,
  wireguardSocketPath,
} from "../agent/gateway/index.js";
import { run, runIn } from "../host/exec.js";
import { namespaceExists, namespacePids } from "../host/namespaces.js";
import { delay, recordOf, startInNamespace, stopProcess, type ProcessRecord } from "../host/processes.js";
import { ratio, series, target } from "./figures.js";
import type { Log, SectionResult } from "./figures.js";

const IPERF_PORT = 5201;

/** What one path measured in one round. */
interface Sample {
  readonly gbps: number;
  readonly firstPacketMs: number;
}

/** Pings `address` from `netns` until it answers; the milliseconds since `since`. */
export async function firstPacket(netns: string, address: string, since: number): Promise<number> {
  for (;;) {
    try {
      await runIn(netns, "ping", ["-c", "1", "-W", "1", address]);
      return Math.round(performance.now() - since);
    } catch {
      if (performance.now() - since > 30_000) throw new Error(`no ping reply from ${address} in ${netns} within 30 s`);
    }
  }
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

/** The two namespaces, the veth between them, and what each round starts. */
interface Bed {
  readonly a: string;
  readonly b: string;
  readonly id: string;
  readonly work: string;
  readonly started: ProcessRecord[];
}

/** A tunnel by hand: wireguard-go, then `wg set` and `ip`. */
async function handTunnel(bed: Bed, seconds: number): Promise<Sample> {
  const [ifa, ifb] = [`lqh${bed.id}a`, `lqh${bed.id}b`];
  const [ka, kb] = [forgeWireguardKeyPair(), forgeWireguardKeyPair()];
  const start = performance.now();
  const [pa, pb] = [
    startInNamespace(bed.a, `wireguard-go ${ifa}`, "wireguard-go", ["-f", ifa], join(bed.work, `${ifa}.log`)),
    startInNamespace(bed.b, `wireguard-go ${ifb}`, "wireguard-go", ["-f", ifb], join(bed.work, `${ifb}.log`)),
  ];
  bed.started.push(pa, pb);
  try {
    await untilSocket(ifa);
    await untilSocket(ifb);
    // As by hand: each key in a file of mode 600, in a directory of mode 700, removed right after.
    const wg = async (netns: string, ifname: string, key: string, args: string[]) => {
      const dir = mkdtempSync(join(bed.work, ".wg-key-"));
      try {
        writeFileSync(join(dir, "key"), `${key}\n`, { mode: 0o600 });
        await runIn(netns, "wg", ["set", ifname, "private-key", join(dir, "key"), ...args]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
    await wg(bed.a, ifa, ka.privateKey, ["listen-port", "51820", "peer", kb.publicKey, "allowed-ips", "10.202.0.2/32"]);
    await wg(bed.b, ifb, kb.privateKey, [
      "listen-port",
      "51821",
      "peer",
      ka.publicKey,
      "endpoint",
      "10.201.0.1:51820",
      "allowed-ips",
      "10.202.0.1/32",
      "persistent-keepalive",
      "5",
    ]);
    for (const [netns, ifname, address] of [
      [bed.a, ifa, "10.202.0.1/30"],
      [bed.b, ifb, "10.202.0.2/30"],
    ] as const) {
      await runIn(netns, "ip", ["addr", "add", address, "dev", ifname]);
      await runIn(netns, "ip", ["link", "set", ifname, "mtu", "1420", "up"]);
    }
    const firstPacketMs = await firstPacket(bed.b, "10.202.0.1", start);
    return { firstPacketMs, gbps: await throughput(bed.a, bed.b, "10.202.0.2", seconds, bed.work) };
  } finally {
    await stopProcess(pa, 5000);
    await stopProcess(pb, 5000);
  }
}

/** The same tunnel through the gateway's functions, which a `Tunnel`'s gateways run. */
async function gatewayTunnel(bed: Bed, seconds: number): Promise<Sample> {
  const [ifa, ifb] = [`lqg${bed.id}a`, `lqg${bed.id}b`];
  const [ka, kb] = [forgeWireguardKeyPair(), forgeWireguardKeyPair()];
  const start = performance.now();
  const ends: { netns?: string; ifname: string; process?: ProcessRecord }[] = [];
  try {
    const wa = await ensureWireguardInterface({
      netns: bed.a,
      ifname: ifa,
      privateKey: ka.privateKey,
      listenPort: 51830,
      address: "10.203.0.1/30",
      logFile: join(bed.work, `${ifa}.log`),
    });
    ends.push(wa);
    const wb = await ensureWireguardInterface({
      netns: bed.b,
      ifname: ifb,
      privateKey: kb.privateKey,
      listenPort: 0,
      address: "10.203.0.2/30",
      logFile: join(bed.work, `${ifb}.log`),
    });
    ends.push(wb);
    await configureWireguardPeer({
      netns: bed.a,
      ifname: ifa,
      peerPublicKey: kb.publicKey,
      allowedIps: ["10.203.0.2/32"],
    });
    await configureWireguardPeer({
      netns: bed.b,
      ifname: ifb,
      peerPublicKey: ka.publicKey,
      endpoint: "10.201.0.1:51830",
      allowedIps: ["10.203.0.1/32"],
      keepaliveSeconds: 5,
    });
    const firstPacketMs = await firstPacket(bed.b, "10.203.0.1", start);
    return { firstPacketMs, gbps: await throughput(bed.a, bed.b, "10.203.0.2", seconds, bed.work) };
  } finally {
    for (const end of ends) await deleteWireguardInterface(end);
  }
}

/** The namespaces this benchmark process makes: named after its PID, so an interrupt can find them. */
export function benchNamespaces(): { id: string; a: string; b: string } {
  const id = process.pid.toString(36).slice(-4);
  return { id, a: `lqbench-${id}-a`, b: `lqbench-${id}-b` };
}

/** Ends what lives in the benchmark's namespaces (only what this process started there) and deletes them. */
export async function removeBenchNamespaces(): Promise<void> {
  const { a, b } = benchNamespaces();
  for (const netns of [a, b]) {
    for (const pid of await namespacePids(netns)) {
      const record = recordOf(pid, `process in ${netns}`, "");
      if (record) await stopProcess(record, 2000);
    }
    if (namespaceExists(netns)) await run("ip", ["netns", "delete", netns]);
  }
}

/** `rounds` rounds of veth, hand-made and gateway-made tunnel, `seconds` of iperf3 each. */
export async function benchTunnel(rounds: number, seconds: number, log: Log): Promise<SectionResult> {
  const bed: Bed = { ...benchNamespaces(), work: mkdtempSync(join(tmpdir(), "pulumi-liqo-bench-")), started: [] };
  try {
    for (const netns of [bed.a, bed.b]) {
      await run("ip", ["netns", "add", netns]);
      await runIn(netns, "ip", ["link", "set", "lo", "up"]);
    }
    const start = performance.now();
    await runIn(bed.a, "ip", ["link", "add", "veth0", "type", "veth", "peer", "name", "veth0", "netns", bed.b]);
    for (const [netns, address] of [
      [bed.a, "10.201.0.1/24"],
      [bed.b, "10.201.0.2/24"],
    ] as const) {
      await runIn(netns, "ip", ["addr", "add", address, "dev", "veth0"]);
      await runIn(netns, "ip", ["link", "set", "veth0", "up"]);
    }
    const vethFirst = await firstPacket(bed.a, "10.201.0.2", start);
    const samples = { veth: [] as Sample[], hand: [] as Sample[], gateway: [] as Sample[] };
    for (let round = 1; round <= rounds; round++) {
      samples.veth.push({
        firstPacketMs: vethFirst,
        gbps: await throughput(bed.a, bed.b, "10.201.0.2", seconds, bed.work),
      });
      samples.hand.push(await handTunnel(bed, seconds));
      samples.gateway.push(await gatewayTunnel(bed, seconds));
      log(
        `tunnel: round ${round}/${rounds}: veth ${samples.veth.at(-1)!.gbps}, by hand ${samples.hand.at(-1)!.gbps}, gateway ` +
          `${samples.gateway.at(-1)!.gbps} Gbit/s`,
      );
    }
    const veth = series(
      "iperf3 through the plain veth",
      "Gbit/s",
      samples.veth.map((s) => s.gbps),
    );
    const hand = series(
      "iperf3 through WireGuard configured by hand",
      "Gbit/s",
      samples.hand.map((s) => s.gbps),
    );
    const gateway = series(
      "iperf3 through WireGuard made by the gateway",
      "Gbit/s",
      samples.gateway.map((s) => s.gbps),
    );
    return {
      series: [
        veth,
        hand,
        gateway,
        series("first packet: plain veth", "ms", [vethFirst]),
        series(
          "first packet: WireGuard configured by hand",
          "ms",
          samples.hand.map((s) => s.firstPacketMs),
        ),
        series(
          "first packet: WireGuard made by the gateway",
          "ms",
          samples.gateway.map((s) => s.firstPacketMs),
        ),
      ],
      targets: [
        target("gateway tunnel / hand-made tunnel (throughput)", ratio(gateway, hand), "min", 0.95),
        target("gateway tunnel / plain veth (throughput)", ratio(gateway, veth), "min", 0.15),
      ],
      details: {
        wireguardGo: (await run("wireguard-go", ["--version"])).split("\n")[0],
        iperf3: `one TCP stream, ${seconds} s`,
        mtu: 1420,
      },
    };
  } finally {
    for (const record of bed.started) await stopProcess(record, 5000);
    await removeBenchNamespaces();
    rmSync(bed.work, { recursive: true, force: true });
  }
}
