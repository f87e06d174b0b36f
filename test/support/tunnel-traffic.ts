/** Pod addresses on both sides of a tunnel, the proof that traffic between them went through it, and the wait for it to be up. */
import { Cidr } from "../../core/net/cidr.js";
import { translateAddress } from "../../core/network-fabric/remap.js";
import { readTunnel, type TunnelRecord } from "../../core/network-fabric/tunnel.js";
import type { TunnelSettings } from "../../core/network-fabric/tunnel-plan.js";
import { poll } from "../../core/wait/poll.js";
import { addPodAddress, type LabState } from "../../local-cluster/lab.js";
import { wireguardOf } from "./project-pods.js";
import { pingReplies, tcpTransfer } from "./probes.js";
import type { Pair } from "./tunnel-pair.js";

const TRANSFER_BYTES = 256 * 1024;

/** Pod addresses in both clusters, each also as the other cluster sees it. */
export function podsOf(
  pair: Pair,
  tunnel: TunnelRecord,
  host: number,
): { a: { real: string; fromB: string }; b: { real: string; fromA: string } } {
  const aReal = Cidr.parse(pair.a.podCidr).nth(host);
  const bReal = Cidr.parse(pair.b.podCidr).nth(host + 1);
  return {
    a: {
      real: aReal,
      fromB: translateAddress(aReal, Cidr.parse(pair.a.podCidr), Cidr.parse(tunnel.consumer.remotePodCidrAsSeen)),
    },
    b: {
      real: bReal,
      fromA: translateAddress(bReal, Cidr.parse(pair.b.podCidr), Cidr.parse(tunnel.provider.remotePodCidrAsSeen)),
    },
  };
}

/** Pings and TCP both ways between the two pod addresses, and checks the bytes went through the tunnels. */
export async function expectTrafficThroughTunnel(pair: Pair, tunnel: TunnelRecord, host: number): Promise<void> {
  const pods = podsOf(pair, tunnel, host);
  await addPodAddress({ clusters: [pair.a, pair.b] } as LabState, "a", pods.a.real);
  await addPodAddress({ clusters: [pair.a, pair.b] } as LabState, "b", pods.b.real);
  const counters = async (): Promise<number[]> => [
    ...(await wireguardOf(pair.b, tunnel.consumer.interfaceName)).peers.map((p) => p.txBytes),
    ...(await wireguardOf(pair.a, tunnel.provider.interfaceName)).peers.map((p) => p.rxBytes),
  ];
  const before = await counters();
  expect(await pingReplies(pair.b.netns, pods.b.real, pods.a.fromB)).toMatch(/3 received/);
  expect(await pingReplies(pair.a.netns, pods.a.real, pods.b.fromA)).toMatch(/3 received/);
  const ends = {
    a: { netns: pair.a.netns, address: pods.a.real },
    b: { netns: pair.b.netns, address: pods.b.real },
  };
  // Both ways: b to a's pod as b sees it, then a to b's pod as a sees it.
  for (const [from, to, seenAs] of [
    [ends.b, ends.a, pods.a.fromB],
    [ends.a, ends.b, pods.b.fromA],
  ] as const) {
    expect(await tcpTransfer(from, { ...to, seenAs }, TRANSFER_BYTES)).toBe(TRANSFER_BYTES);
  }
  const after = await counters();
  // The consumer sent and the provider received at least the transfer through the tunnel.
  expect(after[0]! - before[0]!).toBeGreaterThanOrEqual(TRANSFER_BYTES);
  expect(after[1]! - before[1]!).toBeGreaterThanOrEqual(TRANSFER_BYTES);
}

/** Waits until both gateways report the tunnel of `settings` up. */
export async function waitForTunnelUp(pair: Pair, settings: TunnelSettings, timeoutMs: number): Promise<void> {
  await poll(
    { step: "test", object: "both gateways reporting the tunnel up", endpoint: pair.a.netns },
    { timeoutMs, intervalMs: 500 },
    async () => {
      const problems = (await readTunnel(pair.sides, settings)).problems;
      return problems.length === 0 ? { done: true, value: undefined } : { done: false, state: problems.join("; ") };
    },
  );
}
