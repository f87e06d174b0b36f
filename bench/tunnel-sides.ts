/**
 * A tunnel between the gateways of a lab's first two clusters, as the benchmark reaches it: each
 * gateway runs on its node's network (node 1, in the cluster's namespace), so its WireGuard
 * interface and tunnel address are there; and the first ping answered across it.
 */
import { runIn } from "../host/exec.js";
import type { LabState } from "../local-cluster/lab.js";

/** One side of the tunnel: its node's namespace, its interface and its tunnel address. */
export interface TunnelSide {
  readonly netns: string;
  readonly ifname: string;
  readonly address: string;
}

/** The tunnel's two sides: the one gateway WireGuard interface in each of the lab's first two clusters. */
export async function tunnelSides(lab: LabState): Promise<[TunnelSide, TunnelSide]> {
  const sides = await Promise.all(
    lab.clusters.slice(0, 2).map(async (cluster) => {
      const links = await runIn(cluster.netns, "ip", ["-o", "-4", "addr", "show"]);
      const match = /^\d+: (lqw[0-9a-f]+)\s+inet (\d+\.\d+\.\d+\.\d+)\//m.exec(links);
      if (!match) throw new Error(`bench: no gateway WireGuard interface with an address in ${cluster.netns}`);
      return { netns: cluster.netns, ifname: match[1]!, address: match[2]! };
    }),
  );
  return [sides[0]!, sides[1]!];
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
