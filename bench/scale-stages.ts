/**
 * Where a scale-up's time went. Each pod's way through its stages is read from the objects it
 * left (their creation times, condition transitions and status writes, to the second), and each
 * step of the scale-up is summed up as the seconds from its first pod made to the last of its
 * pods through each stage. Pure: the bench reads the objects, this sums them up.
 */
import type * as k8s from "@kubernetes/client-node";
import type { OffloadedPod } from "../core/api/index.js";
import { CONSUMER_POD_UID_LABEL } from "../core/offloading/reflection.js";

/** The stages of an offloaded pod, in the order it passes them. */
export const OFFLOADED_STAGES = [
  "made",
  "scheduled",
  "requested",
  "provider pod made",
  "provider pod ready",
  "status written",
] as const;

/** The stages of a pod made on its own cluster. */
export const NATIVE_STAGES = ["made", "scheduled", "ready"] as const;

/** When one pod reached each stage it reached, in ms since the epoch. */
export type PodStages = Readonly<Partial<Record<string, number>>>;

/** One step of a scale-up: seconds from its first pod made to the last through each stage. */
export interface StepStages {
  /** Pods in the step. */
  readonly pods: number;
  /** Seconds per stage; a stage some pod of the step has not reached is missing. */
  readonly seconds: Readonly<Record<string, number>>;
}

const time = (value: Date | string | undefined): number | undefined =>
  value === undefined ? undefined : new Date(value).getTime();

/** When `pod`'s condition `type` last became true. */
function conditionTrue(pod: k8s.V1Pod, type: string): number | undefined {
  const condition = pod.status?.conditions?.find((c) => c.type === type && c.status === "True");
  return time(condition?.lastTransitionTime);
}

/** The last write of `pod`'s status by a manager of `managers` (its managed fields keep the time). */
function lastStatusWrite(pod: k8s.V1Pod, managers: (name: string) => boolean): number | undefined {
  const writes = (pod.metadata?.managedFields ?? [])
    .filter((f) => f.subresource === "status" && managers(f.manager ?? ""))
    .map((f) => time(f.time) ?? 0);
  return writes.length > 0 ? Math.max(...writes) : undefined;
}

/** The stages of pods made on their own cluster. */
export function nativeStages(pods: readonly k8s.V1Pod[]): PodStages[] {
  return pods.map((pod) => ({
    made: time(pod.metadata?.creationTimestamp),
    scheduled: conditionTrue(pod, "PodScheduled"),
    ready: conditionTrue(pod, "Ready"),
  }));
}

/**
 * The stages of the consumer's pods `pods`, offloaded through `requests` into the provider's
 * `providerPods`. The consumer's status of a pod is the provider's (Ready's transition time
 * included), so when it came back is the last status write by anyone but the scheduler.
 */
export function offloadedStages(
  pods: readonly k8s.V1Pod[],
  requests: readonly OffloadedPod[],
  providerPods: readonly k8s.V1Pod[],
): PodStages[] {
  const requestOf = new Map(requests.map((r) => [r.spec.consumerUid, r]));
  const providerPodOf = new Map(providerPods.map((p) => [p.metadata?.labels?.[CONSUMER_POD_UID_LABEL] ?? "", p]));
  return pods.map((pod) => {
    const uid = pod.metadata?.uid ?? "";
    const there = providerPodOf.get(uid);
    return {
      made: time(pod.metadata?.creationTimestamp),
      scheduled: conditionTrue(pod, "PodScheduled"),
      requested: time(requestOf.get(uid)?.metadata.creationTimestamp),
      "provider pod made": time(there?.metadata?.creationTimestamp),
      "provider pod ready": there && conditionTrue(there, "Ready"),
      "status written": lastStatusWrite(pod, (manager) => manager !== "kube-scheduler"),
    };
  });
}

/**
 * Splits `pods` into steps of `step` in the order they were made, and sums each up over `stages`.
 */
export function stepStages(pods: readonly PodStages[], stages: readonly string[], step: number): StepStages[] {
  const ordered = [...pods].sort((x, y) => (x["made"] ?? 0) - (y["made"] ?? 0));
  const steps: StepStages[] = [];
  for (let start = 0; start < ordered.length; start += step) {
    const inStep = ordered.slice(start, start + step);
    const first = Math.min(...inStep.map((p) => p["made"] ?? Infinity));
    const seconds: Record<string, number> = {};
    for (const stage of stages) {
      const times = inStep.map((p) => p[stage]);
      if (times.some((t) => t === undefined)) continue;
      seconds[stage] = (Math.max(...(times as number[])) - first) / 1000;
    }
    steps.push({ pods: inStep.length, seconds });
  }
  return steps;
}

/** The steps as lines of a log: one per step, each stage's seconds in order. */
export function formatStepStages(label: string, steps: readonly StepStages[], stages: readonly string[]): string[] {
  return steps.map(
    (s, i) =>
      `${label}, step ${i + 1} (${s.pods} pods): ` +
      stages.map((stage) => `${stage} ${s.seconds[stage]?.toFixed(0) ?? "–"} s`).join(", "),
  );
}
