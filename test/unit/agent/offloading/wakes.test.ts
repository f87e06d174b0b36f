import {
  consumerPodChanges,
  offloadedPodChanges,
  providerPodChanges,
  tunnelStateChanges,
} from "../../../../agent/offloading/wakes.js";

const consumerPod = (fields: {
  node?: string;
  generation?: number;
  deleting?: boolean;
  phase?: string;
  label?: string;
}) => ({
  metadata: {
    uid: "c1",
    generation: fields.generation ?? 1,
    labels: { app: fields.label ?? "web" },
    ...(fields.deleting ? { deletionTimestamp: "2026-11-29T20:00:00Z" } : {}),
  },
  spec: { nodeName: fields.node },
  status: { phase: fields.phase ?? "Pending" },
});

describe("the watch events that wake the offloading passes", () => {
  test("GIVEN a consumer pod WHEN bound, its status written twice, relabelled, deleted THEN the binding, the label, the delete and the removal wake", () => {
    const relevant = consumerPodChanges();
    expect(relevant("MODIFIED", consumerPod({ node: "liqo-a" }))).toBe(true);
    expect(relevant("MODIFIED", consumerPod({ node: "liqo-a", phase: "Running" }))).toBe(false);
    expect(relevant("MODIFIED", consumerPod({ node: "liqo-a", phase: "Running" }))).toBe(false);
    expect(relevant("MODIFIED", consumerPod({ node: "liqo-a", phase: "Running", label: "api" }))).toBe(true);
    expect(relevant("MODIFIED", consumerPod({ node: "liqo-a", label: "api", generation: 2 }))).toBe(true);
    expect(relevant("MODIFIED", consumerPod({ node: "liqo-a", label: "api", generation: 2, deleting: true }))).toBe(
      true,
    );
    expect(relevant("DELETED", consumerPod({ node: "liqo-a", label: "api", generation: 2, deleting: true }))).toBe(
      true,
    );
  });

  test("GIVEN an OffloadedPod WHEN the provider answers it and sets its finalizer THEN no wake; WHEN its consumer changes or withdraws it THEN a wake", () => {
    const relevant = offloadedPodChanges();
    const request = (generation: number, extra: Record<string, unknown> = {}) => ({
      metadata: { uid: "r1", generation, ...extra },
      spec: {},
    });
    expect(relevant("ADDED", request(1))).toBe(true);
    expect(relevant("MODIFIED", { ...request(1, { finalizers: ["x"] }), status: { phase: "Accepted" } })).toBe(false);
    expect(relevant("MODIFIED", request(2))).toBe(true);
    expect(relevant("MODIFIED", request(2, { deletionTimestamp: "2026-11-29T20:00:00Z" }))).toBe(true);
    expect(relevant("DELETED", request(2, { deletionTimestamp: "2026-11-29T20:00:00Z" }))).toBe(true);
  });

  test("GIVEN a pod the provider made WHEN its kubelet reports it starting and running THEN no wake; WHEN it finishes or goes THEN a wake", () => {
    const relevant = providerPodChanges();
    const pod = (phase: string, deleting = false) => ({
      metadata: { uid: "p1", ...(deleting ? { deletionTimestamp: "2026-11-29T20:00:00Z" } : {}) },
      status: { phase },
    });
    expect(relevant("ADDED", pod("Pending"))).toBe(true);
    expect(relevant("MODIFIED", pod("Running"))).toBe(false);
    expect(relevant("MODIFIED", pod("Succeeded"))).toBe(true);
    expect(relevant("MODIFIED", pod("Succeeded", true))).toBe(true);
    expect(relevant("DELETED", pod("Succeeded", true))).toBe(true);
  });

  test("GIVEN a TunnelEndpoint WHEN its handshake time moves THEN no wake; WHEN it goes down THEN a wake", () => {
    const relevant = tunnelStateChanges();
    const endpoint = (phase: string, handshake: string) => ({
      metadata: { uid: "t1" },
      status: { phase, remoteTunnelAddress: "10.70.0.1", lastHandshake: handshake },
    });
    expect(relevant("ADDED", endpoint("Connected", "t1"))).toBe(true);
    expect(relevant("MODIFIED", endpoint("Connected", "t2"))).toBe(false);
    expect(relevant("MODIFIED", endpoint("Down", "t2"))).toBe(true);
  });
});
