/**
 * Recovery of a tunnel whose wireguard-go was killed, on a stack whose `Tunnel` is up (the demo
 * stack): each run kills one side's wireguard-go by PID (SIGKILL, as a crash), the two sides in
 * turn, and times from its death to the first ping answered across the tunnel from the other side
 * (to the killed side's tunnel address). docs/operations.md promises {@link RECOVERY_PROMISE_S}.
 */
import { findWireguardProcess } from "../agent/gateway/index.js";
import { isRunning } from "../host/processes.js";
import type { LabState } from "../local-cluster/lab.js";
import { series, target } from "./figures.js";
import type { Log, SectionResult } from "./figures.js";
import { firstPacket, tunnelSides, type TunnelSide } from "./tunnel-sides.js";

/** The bound of docs/operations.md on a killed wireguard-go's tunnel carrying traffic again. */
export const RECOVERY_PROMISE_S = 5;

/** Kills `side`'s wireguard-go; resolves the seconds until `from` pings across the tunnel again. */
async function killAndTime(side: TunnelSide, from: TunnelSide): Promise<number> {
  const record = await findWireguardProcess(side.netns, side.ifname);
  if (!record) throw new Error(`recovery: no wireguard-go serving ${side.ifname} in ${side.netns}`);
  process.kill(record.pid, "SIGKILL");
  const killedAt = performance.now();
  // A reply from the dying process must not count.
  while (isRunning(record)) await new Promise((resolve) => setTimeout(resolve, 5));
  return Math.round(await firstPacket(from.netns, side.address, killedAt)) / 1000;
}

/** `runs` kills of each side's wireguard-go, taking turns. */
export async function benchRecovery(lab: LabState, runs: number, log: Log): Promise<SectionResult> {
  const [a, b] = await tunnelSides(lab);
  const samples: number[] = [];
  for (let run = 1; run <= runs; run++) {
    for (const [killed, from] of [
      [a, b],
      [b, a],
    ] as const) {
      // Each run starts from a tunnel that carries traffic.
      await firstPacket(from.netns, killed.address, performance.now());
      samples.push(await killAndTime(killed, from));
      log(
        `recovery: run ${run}/${runs}: wireguard-go of ${killed.netns} killed, ping across again after ${samples.at(-1)!.toFixed(2)} s`,
      );
    }
  }
  const recovery = series("killed wireguard-go: ping across the tunnel again", "s", samples);
  return {
    series: [recovery],
    targets: [
      target(
        `killed wireguard-go back within ${RECOVERY_PROMISE_S} s (worst)`,
        recovery.max,
        "max",
        RECOVERY_PROMISE_S,
      ),
    ],
  };
}
