import { AGENT_BACKOFF, Backoff, backoffDelayMs, backoffStepMs } from "../../../agent/backoff.js";

describe("backoff", () => {
  test("GIVEN the agent's policy WHEN failures pile up THEN the pause doubles from 1 s and is capped at 30 s", () => {
    expect([1, 2, 3, 4, 5, 6, 20].map((n) => backoffStepMs(AGENT_BACKOFF, n))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ]);
  });

  test("GIVEN jitter WHEN the random source is at its ends THEN the pause lies within [0.8 d, d] and never above the cap", () => {
    expect(backoffDelayMs(AGENT_BACKOFF, 3, () => 0)).toBe(4000);
    expect(backoffDelayMs(AGENT_BACKOFF, 3, () => 0.999_999)).toBe(3200);
    expect(backoffDelayMs(AGENT_BACKOFF, 50, () => 0)).toBe(30_000);
    expect(backoffDelayMs({ initialMs: 500, maxMs: 4000, factor: 3, jitter: 0 }, 3, () => 0.5)).toBe(4000);
  });

  test("GIVEN one reason repeating WHEN it fails past the cap THEN it reports each growing step once, then stays silent", () => {
    const backoff = new Backoff("gateway: wireguard-go lqw1", AGENT_BACKOFF, () => 0);
    const reports = Array.from({ length: 9 }, (_, i) => backoff.failed("wireguard-go exited: no TUN", i * 1000).report);
    expect(reports.filter((r) => r !== undefined)).toEqual([
      "gateway: wireguard-go lqw1: wireguard-go exited: no TUN (attempt 1, retry in 1 s)",
      "gateway: wireguard-go lqw1: wireguard-go exited: no TUN (attempt 2, retry in 2 s)",
      "gateway: wireguard-go lqw1: wireguard-go exited: no TUN (attempt 3, retry in 4 s)",
      "gateway: wireguard-go lqw1: wireguard-go exited: no TUN (attempt 4, retry in 8 s)",
      "gateway: wireguard-go lqw1: wireguard-go exited: no TUN (attempt 5, retry in 16 s)",
      "gateway: wireguard-go lqw1: wireguard-go exited: no TUN (attempt 6, retry in 30 s)",
    ]);
    expect(backoff.failureCount).toBe(9);
  });

  test("GIVEN a failure at the cap WHEN its reason changes THEN the new reason is reported", () => {
    const backoff = new Backoff("x", { initialMs: 1000, maxMs: 1000 }, () => 0);
    expect(backoff.failed("a", 0).report).toBe("x: a (attempt 1, retry in 1 s)");
    expect(backoff.failed("a", 1000).report).toBeUndefined();
    expect(backoff.failed("b", 2000).report).toBe("x: b (attempt 3, retry in 1 s)");
  });

  test("GIVEN failures WHEN it succeeds THEN it says it recovered, is due at once, and starts again from the first step", () => {
    const backoff = new Backoff("x", AGENT_BACKOFF, () => 0);
    expect(backoff.succeeded()).toBeUndefined();
    backoff.failed("a", 10_000);
    backoff.failed("a", 11_000);
    expect(backoff.dueAt).toBe(13_000);
    expect(backoff.succeeded()).toBe("x: recovered after 2 failed attempts");
    expect(backoff.dueAt).toBe(Number.NEGATIVE_INFINITY);
    expect(backoff.failed("a", 20_000)).toEqual({
      delayMs: 1000,
      failures: 1,
      report: "x: a (attempt 1, retry in 1 s)",
    });
  });
});
