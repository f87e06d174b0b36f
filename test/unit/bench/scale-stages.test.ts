/** Where a scale-up's time went: pods' stages read from their objects, summed up per step. */
import type * as k8s from "@kubernetes/client-node";
import type { OffloadedPod } from "../../../core/api/index.js";
import { CONSUMER_POD_UID_LABEL } from "../../../core/offloading/reflection.js";
import {
  formatStepStages,
  NATIVE_STAGES,
  nativeStages,
  OFFLOADED_STAGES,
  offloadedStages,
  stepStages,
} from "../../../bench/scale-stages.js";

const at = (second: number): Date => new Date(Date.UTC(2026, 10, 29, 20, 0, second));

function pod(uid: string, made: number, ready?: number, statusWrites: [string, number][] = []): k8s.V1Pod {
  return {
    metadata: {
      uid,
      creationTimestamp: at(made),
      labels: { [CONSUMER_POD_UID_LABEL]: uid },
      managedFields: statusWrites.map(([manager, second]) => ({
        manager,
        subresource: "status",
        operation: "Update",
        time: at(second),
      })),
    },
    status: {
      conditions: [
        { type: "PodScheduled", status: "True", lastTransitionTime: at(made + 1) },
        ...(ready === undefined ? [] : [{ type: "Ready", status: "True", lastTransitionTime: at(ready) }]),
      ],
    },
  };
}

const request = (uid: string, made: number): OffloadedPod =>
  ({ metadata: { creationTimestamp: at(made).toISOString() }, spec: { consumerUid: uid } }) as unknown as OffloadedPod;

describe("where a scale-up's time went", () => {
  test("GIVEN pods made natively in two steps THEN each step counts from its first pod made to its last pod ready", () => {
    const pods = [pod("a", 0, 10), pod("b", 2, 14), pod("c", 20, 31), pod("d", 21, 40)];
    const steps = stepStages(nativeStages(pods), NATIVE_STAGES, 2);
    expect(steps).toEqual([
      { pods: 2, seconds: { made: 2, scheduled: 3, ready: 14 } },
      { pods: 2, seconds: { made: 1, scheduled: 2, ready: 20 } },
    ]);
  });

  test("GIVEN offloaded pods THEN the request, the provider's pod and the status written back each count, the scheduler's write not", () => {
    const consumer = [
      pod("a", 0, undefined, [
        ["kube-scheduler", 1],
        ["pulumi-liqo", 12],
      ]),
      pod("b", 1, undefined, [["kube-scheduler", 2]]),
    ];
    const provider = [pod("a", 5, 11), pod("b", 6)];
    const [step] = stepStages(
      offloadedStages(consumer, [request("a", 3), request("b", 4)], provider),
      OFFLOADED_STAGES,
      2,
    );
    // b is not ready there, and no status came back for it: those stages are not through yet.
    expect(step).toEqual({
      pods: 2,
      seconds: { made: 1, scheduled: 2, requested: 4, "provider pod made": 6 },
    });
    expect(formatStepStages("offloaded", [step!], OFFLOADED_STAGES)).toEqual([
      "offloaded, step 1 (2 pods): made 1 s, scheduled 2 s, requested 4 s, provider pod made 6 s, provider pod ready – s, status written – s",
    ]);
  });
});
