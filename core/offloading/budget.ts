/**
 * Whether a consumer's new pod fits in what the provider offered it (pure, no I/O). The provider's
 * agent counts the pods it already runs for that consumer; a pod that would take the consumer
 * over the offer's CPU, memory or pod count is refused, and pods already running are never
 * evicted, also when the offer shrinks below them.
 */
import type { V1Pod, V1PodSpec } from "@kubernetes/client-node";
import type { OfferedResources } from "../api/index.js";
import { formatCpuMillis, formatMemoryBytes, parseCpuMillis, parseMemoryBytes } from "../negotiation/quantity.js";
import type { Refusal } from "./pod-policy.js";

/** Whether `pod` has finished (Succeeded or Failed): it no longer counts against its consumer's offer. */
export const hasFinished = (pod: V1Pod): boolean => pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";

/** CPU and memory a pod takes from a node. */
export interface PodRequests {
  readonly cpuMillis: number;
  readonly memoryBytes: number;
}

const NOTHING: PodRequests = { cpuMillis: 0, memoryBytes: 0 };

function containerRequests(requests: Record<string, string> | undefined): PodRequests {
  return {
    cpuMillis: requests?.["cpu"] ? parseCpuMillis(requests["cpu"]) : 0,
    memoryBytes: requests?.["memory"] ? parseMemoryBytes(requests["memory"]) : 0,
  };
}

/**
 * What a pod takes, as the scheduler counts it: its containers' requests summed, or its largest
 * init container's when that is more (init containers run one at a time, before the others).
 *
 * @throws QuantityParseError when a request is not a quantity.
 */
export function podRequests(spec: Pick<V1PodSpec, "containers" | "initContainers">): PodRequests {
  const running = (spec.containers ?? []).reduce((sum, c) => {
    const own = containerRequests(c.resources?.requests);
    return { cpuMillis: sum.cpuMillis + own.cpuMillis, memoryBytes: sum.memoryBytes + own.memoryBytes };
  }, NOTHING);
  return (spec.initContainers ?? []).reduce((max, c) => {
    const own = containerRequests(c.resources?.requests);
    return {
      cpuMillis: Math.max(max.cpuMillis, own.cpuMillis),
      memoryBytes: Math.max(max.memoryBytes, own.memoryBytes),
    };
  }, running);
}

/**
 * Why `candidate` does not fit beside `running` (the consumer's pods the provider already runs)
 * in `offer`, or undefined when it does. A pod that asks for no CPU or memory still counts as
 * one pod.
 */
export function refuseOverOffer(
  offer: OfferedResources,
  running: readonly PodRequests[],
  candidate: PodRequests,
): Refusal | undefined {
  const used = running.reduce(
    (sum, p) => ({ cpuMillis: sum.cpuMillis + p.cpuMillis, memoryBytes: sum.memoryBytes + p.memoryBytes }),
    NOTHING,
  );
  if (running.length + 1 > offer.pods) {
    return {
      reason: "ExceedsOffer",
      message: `the offer allows ${offer.pods} pod(s), and ${running.length} already run`,
    };
  }
  const resources = [
    ["cpu", parseCpuMillis(offer.cpu), used.cpuMillis, candidate.cpuMillis, formatCpuMillis],
    ["memory", parseMemoryBytes(offer.memory), used.memoryBytes, candidate.memoryBytes, formatMemoryBytes],
  ] as const;
  for (const [name, offered, inUse, asked, format] of resources) {
    if (inUse + asked <= offered) continue;
    return {
      reason: "ExceedsOffer",
      message: `the pod requests ${name} ${format(asked)}; the offer has ${format(offered)}, of which ${format(inUse)} is in use`,
    };
  }
  return undefined;
}
