import { capacityEventFilters } from "../../../agent/offer-answering.js";

const node = (name: string, cpu: string, heartbeat: string) => ({
  metadata: { name },
  status: { allocatable: { cpu }, conditions: [{ type: "Ready", lastHeartbeatTime: heartbeat }] },
});
const pod = (uid: string, nodeName: string | undefined, phase: string, restarts = 0) => ({
  metadata: { uid },
  spec: { nodeName },
  status: { phase, containerStatuses: [{ restartCount: restarts }] },
});

describe("the watch events that move free capacity", () => {
  test("GIVEN a node seen once WHEN only its heartbeat moves THEN no wake; WHEN its allocatable changes or it goes THEN a wake", () => {
    const { nodes } = capacityEventFilters();
    expect(nodes("ADDED", node("n1", "4", "t1"))).toBe(true);
    expect(nodes("MODIFIED", node("n1", "4", "t2"))).toBe(false);
    expect(nodes("MODIFIED", node("n1", "8", "t3"))).toBe(true);
    expect(nodes("DELETED", node("n1", "8", "t3"))).toBe(true);
    expect(nodes("ADDED", node("n1", "8", "t4"))).toBe(true);
  });

  test("GIVEN a pod WHEN it is placed, runs, restarts a container and finishes THEN only placement and phase changes wake", () => {
    const { pods } = capacityEventFilters();
    expect(pods("ADDED", pod("p1", undefined, "Pending"))).toBe(true);
    expect(pods("MODIFIED", pod("p1", "n1", "Pending"))).toBe(true);
    expect(pods("MODIFIED", pod("p1", "n1", "Running"))).toBe(true);
    expect(pods("MODIFIED", pod("p1", "n1", "Running", 1))).toBe(false);
    expect(pods("MODIFIED", pod("p1", "n1", "Succeeded", 1))).toBe(true);
    expect(pods("DELETED", pod("p1", "n1", "Succeeded", 1))).toBe(true);
  });
});
