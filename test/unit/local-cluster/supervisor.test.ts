import { decideRestarts, restartGate, type Component } from "../../../local-cluster/supervisor.js";

const running = (down: readonly Component[]): Map<Component, boolean> =>
  new Map(
    (["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "agent"] as const).map((c) => [
      c,
      !down.includes(c),
    ]),
  );

describe("supervisor decisions", () => {
  test("GIVEN etcd, the controller manager and the scheduler exited WHEN the API server is not ready THEN only etcd starts again", () => {
    expect(
      decideRestarts({
        running: running(["etcd", "kube-controller-manager", "kube-scheduler"]),
        apiReady: () => false,
        dueAt: new Map(),
        now: 0,
      }),
    ).toEqual(["etcd"]);
  });

  test("GIVEN the controller manager and the scheduler exited WHEN the API server answers THEN both start again, in start order", () => {
    expect(
      decideRestarts({
        running: running(["kube-scheduler", "kube-controller-manager"]),
        apiReady: () => true,
        dueAt: new Map(),
        now: 0,
      }),
    ).toEqual(["kube-controller-manager", "kube-scheduler"]);
  });

  test("GIVEN etcd down WHEN the API server exited too THEN the API server waits for etcd", () => {
    expect(
      decideRestarts({ running: running(["etcd", "kube-apiserver"]), apiReady: () => true, dueAt: new Map(), now: 0 }),
    ).toEqual(["etcd"]);
    expect(
      decideRestarts({ running: running(["kube-apiserver"]), apiReady: () => false, dueAt: new Map(), now: 0 }),
    ).toEqual(["kube-apiserver"]);
  });

  test("GIVEN an exited component in its backoff WHEN due later THEN it waits, and starts once due", () => {
    const dueAt = new Map<Component, number>([["agent", 5000]]);
    expect(decideRestarts({ running: running(["agent"]), apiReady: () => true, dueAt, now: 4999 })).toEqual([]);
    expect(decideRestarts({ running: running(["agent"]), apiReady: () => true, dueAt, now: 5000 })).toEqual(["agent"]);
  });

  test("GIVEN everything runs WHEN looked at THEN nothing starts and the API server is not even asked", () => {
    const asked: boolean[] = [];
    expect(
      decideRestarts({ running: running([]), apiReady: () => asked.push(true) > 0, dueAt: new Map(), now: 0 }),
    ).toEqual([]);
    expect(asked).toEqual([]);
    expect(restartGate("etcd")).toBe("nothing");
    expect(restartGate("kube-apiserver")).toBe("etcd running");
    expect(restartGate("agent")).toBe("API server ready");
  });

  test("GIVEN a node's kubelet and containerd exited WHEN the API server is not ready THEN both start again at once, after the control plane's", () => {
    const view = new Map<Component, boolean>([
      ...running(["etcd"]),
      ["containerd-n2", false],
      ["kubelet-n2", false],
      ["kube-proxy-n2", true],
    ]);
    expect(decideRestarts({ running: view, apiReady: () => false, dueAt: new Map(), now: 0 })).toEqual([
      "etcd",
      "containerd-n2",
      "kubelet-n2",
    ]);
    expect(restartGate("kubelet-n2")).toBe("nothing");
  });
});
