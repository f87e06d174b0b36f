/**
 * How a provider answers a resource request: pure decisions, unit-tested without a cluster.
 * The agent's offer answering feeds them the cluster's nodes and pods and applies the result.
 */
import type { OfferedResources, ResourceAsk } from "../api/crds.js";
import { formatCpuMillis, formatMemoryBytes, parseCpuMillis, parseMemoryBytes } from "./quantity.js";

/** Capacity in exact units. */
export interface Capacity {
  /** Millicores. */
  readonly cpuMillis: number;
  /** Bytes. */
  readonly memoryBytes: number;
  /** Pods. */
  readonly pods: number;
}

/** What a node may contribute to an offer. */
export interface NodeCapacity {
  /** The node's name, which bound pods refer to. */
  readonly name: string;
  /** Its allocatable capacity, as the node reports it. */
  readonly allocatable: Record<string, string> | undefined;
  /** Whether it is a virtual node (whose capacity is another cluster's, never re-offered). */
  readonly virtual: boolean;
  /** Whether it can take a new pod: Ready and not cordoned. */
  readonly schedulable: boolean;
}

/** What a scheduled pod takes from its node. */
export interface PodUsage {
  /** The node it is bound to. */
  readonly nodeName: string;
  /** Its containers' requests, summed. */
  readonly requests: { cpu?: string; memory?: string };
}

/**
 * Free allocatable capacity: the sum of the allocatable of the real nodes that can take a pod, less
 * the requests of the pods bound to them. Virtual nodes are left out, so a provider never re-offers
 * what it consumes; cordoned and NotReady nodes too, since an offloaded pod could not land there.
 */
export function computeFreeCapacity(nodes: readonly NodeCapacity[], pods: readonly PodUsage[]): Capacity {
  const real = nodes.filter((n) => !n.virtual && n.schedulable && n.allocatable);
  const counted = new Set(real.map((n) => n.name));
  const total = real.reduce(
    (acc, n) => ({
      cpuMillis: acc.cpuMillis + parseCpuMillis(n.allocatable!["cpu"] ?? "0"),
      memoryBytes: acc.memoryBytes + parseMemoryBytes(n.allocatable!["memory"] ?? "0"),
      pods: acc.pods + Number(n.allocatable!["pods"] ?? 0),
    }),
    { cpuMillis: 0, memoryBytes: 0, pods: 0 },
  );
  const used = pods
    .filter((p) => counted.has(p.nodeName))
    .reduce(
      (acc, p) => ({
        cpuMillis: acc.cpuMillis + parseCpuMillis(p.requests.cpu ?? "0"),
        memoryBytes: acc.memoryBytes + parseMemoryBytes(p.requests.memory ?? "0"),
        pods: acc.pods + 1,
      }),
      { cpuMillis: 0, memoryBytes: 0, pods: 0 },
    );
  return {
    cpuMillis: Math.max(0, total.cpuMillis - used.cpuMillis),
    memoryBytes: Math.max(0, total.memoryBytes - used.memoryBytes),
    pods: Math.max(0, total.pods - used.pods),
  };
}

/**
 * The offer for `ask`: fixed amounts are offered as asked (the provider commits to them); a share
 * is that percentage of the free capacity, rounded down to whole millicores, MiB and pods.
 */
export function computeOffer(ask: ResourceAsk, free: Capacity): OfferedResources {
  if (ask.sharePercent === undefined) {
    return {
      cpu: formatCpuMillis(parseCpuMillis(ask.cpu ?? "0")),
      memory: formatMemoryBytes(parseMemoryBytes(ask.memory ?? "0")),
      pods: ask.pods ?? 0,
    };
  }
  const share = ask.sharePercent / 100;
  const mib = 2 ** 20;
  return {
    cpu: formatCpuMillis(Math.floor(free.cpuMillis * share)),
    memory: formatMemoryBytes(Math.floor((free.memoryBytes * share) / mib) * mib),
    pods: Math.floor(free.pods * share),
  };
}

/**
 * Whether a recomputed offer differs enough from the current one to be worth re-publishing: any
 * dimension moving by more than `thresholdPercent` of its current value (or from/to zero).
 */
export function offerChanged(current: OfferedResources, next: OfferedResources, thresholdPercent: number): boolean {
  const pairs: [number, number][] = [
    [parseCpuMillis(current.cpu), parseCpuMillis(next.cpu)],
    [parseMemoryBytes(current.memory), parseMemoryBytes(next.memory)],
    [current.pods, next.pods],
  ];
  return pairs.some(([a, b]) => (a === 0 ? b !== 0 : (Math.abs(b - a) / a) * 100 > thresholdPercent));
}

/**
 * Why the virtual node of `offer` can run no pod (a dimension is zero: a share of a provider
 * with no free capacity, say), or undefined when it can run some. The peering is still made,
 * since the provider's agent raises the offer when capacity frees up; the user is told.
 */
export function emptyOfferReason(offer: OfferedResources): string | undefined {
  const empty = [
    ...(parseCpuMillis(offer.cpu) <= 0 ? ["cpu"] : []),
    ...(parseMemoryBytes(offer.memory) <= 0 ? ["memory"] : []),
    ...(offer.pods <= 0 ? ["pods"] : []),
  ];
  if (empty.length === 0) return undefined;
  return (
    `the provider offers no ${empty.join(", no ")} (cpu ${offer.cpu}, memory ${offer.memory}, pods ${offer.pods}): the ` +
    `virtual node can run no pod until the provider has free capacity or the request asks for less`
  );
}
