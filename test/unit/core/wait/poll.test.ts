/** poll: the one way the project waits, driven here by a fake clock (no real time passes). */
import {
  poll,
  WaitFailedError,
  WaitTimeoutError,
  type CheckResult,
  type WaitContext,
} from "../../../../core/wait/poll.js";

const context: WaitContext = {
  step: "authentication",
  object: "CertificateSigningRequest peer-b",
  endpoint: "https://172.29.1.10:6443",
};

/** A fake clock: `sleep` advances `now` and records every pause asked for. */
function fakeClock(start = 1_000_000): {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  sleeps: number[];
  elapsed: () => number;
} {
  let time = start;
  const sleeps: number[] = [];
  return {
    now: () => time,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      time += ms;
    },
    sleeps,
    elapsed: () => time - start,
  };
}

/** A check that answers from `results` in turn (the last one repeats) and counts its calls. */
function scripted<T>(results: ReadonlyArray<CheckResult<T> | Error>): {
  check: () => Promise<CheckResult<T>>;
  calls: () => number;
} {
  let calls = 0;
  return {
    check: async () => {
      const result = results[Math.min(calls, results.length - 1)]!;
      calls += 1;
      if (result instanceof Error) throw result;
      return result;
    },
    calls: () => calls,
  };
}

/** Awaits `promise`, expecting a rejection, and returns the reason. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection, got a value");
}

describe("poll", () => {
  test("GIVEN a check that is done at once WHEN polled THEN its value is returned without sleeping", async () => {
    const clock = fakeClock();
    const { check, calls } = scripted([{ done: true, value: "ready" }]);
    await expect(poll(context, { timeoutMs: 10_000, now: clock.now, sleep: clock.sleep }, check)).resolves.toBe(
      "ready",
    );
    expect(calls()).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  test("GIVEN a check that is done on the third look WHEN polled THEN its value is returned after two pauses of the interval", async () => {
    const clock = fakeClock();
    const { check, calls } = scripted<number>([
      { done: false, state: "Pending" },
      { done: false, state: "Pending" },
      { done: true, value: 42 },
    ]);
    await expect(
      poll(context, { timeoutMs: 10_000, intervalMs: 100, now: clock.now, sleep: clock.sleep }, check),
    ).resolves.toBe(42);
    expect(calls()).toBe(3);
    expect(clock.sleeps).toEqual([100, 100]);
  });

  test("GIVEN a look that asks to wait longer than the interval (a Retry-After) THEN the next look comes after it, never past the deadline", async () => {
    const clock = fakeClock();
    const { check, calls } = scripted<number>([
      { done: false, state: "throttled", retryAfterMs: 3_000 },
      { done: false, state: "Pending", retryAfterMs: 10 },
      { done: false, state: "throttled", retryAfterMs: 60_000 },
      { done: true, value: 7 },
    ]);
    const done = await poll(context, { timeoutMs: 10_000, intervalMs: 100, now: clock.now, sleep: clock.sleep }, check);
    expect(done).toBe(7);
    expect(calls()).toBe(4);
    expect(clock.sleeps).toEqual([3_000, 100, 6_900]);
  });

  test("GIVEN no interval WHEN polled THEN it pauses 250 ms between looks", async () => {
    const clock = fakeClock();
    const { check } = scripted<number>([
      { done: false, state: "Pending" },
      { done: true, value: 1 },
    ]);
    await poll(context, { timeoutMs: 10_000, now: clock.now, sleep: clock.sleep }, check);
    expect(clock.sleeps).toEqual([250]);
  });

  test("GIVEN a check that never finishes WHEN polled THEN a WaitTimeoutError is thrown once the timeout has passed, not before", async () => {
    const clock = fakeClock();
    const { check } = scripted<never>([{ done: false, state: "Pending" }]);
    const error = await rejection(
      poll(context, { timeoutMs: 5_000, intervalMs: 300, now: clock.now, sleep: clock.sleep }, check),
    );
    expect((error as WaitTimeoutError).isWaitTimeoutError).toBe(true);
    expect(clock.elapsed()).toBeGreaterThanOrEqual(5_000);
    expect(clock.elapsed()).toBeLessThan(5_000 + 300);
  });

  test("GIVEN a check that never finishes WHEN the wait times out THEN the error names step, object, endpoint, timeout in seconds and last state", async () => {
    const clock = fakeClock();
    const { check } = scripted<never>([
      { done: false, state: "Pending" },
      { done: false, state: "Approved, not yet issued" },
    ]);
    const error = (await rejection(
      poll(context, { timeoutMs: 30_000, intervalMs: 1_000, now: clock.now, sleep: clock.sleep }, check),
    )) as WaitTimeoutError;
    expect(error.name).toBe("WaitTimeoutError");
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toContain(context.step);
    expect(error.message).toContain(context.object);
    expect(error.message).toContain(context.endpoint);
    expect(error.message).toContain("30 s");
    expect(error.message).toContain("last state: Approved, not yet issued");
    expect(error.context).toEqual(context);
    expect(error.timeoutMs).toBe(30_000);
    expect(error.lastState).toBe("Approved, not yet issued");
  });

  test("GIVEN a check that throws WHEN polled THEN the throw counts as not yet and the wait goes on", async () => {
    const clock = fakeClock();
    const { check, calls } = scripted<string>([
      new Error("connect ECONNREFUSED 172.29.1.10:6443"),
      { done: true, value: "up" },
    ]);
    await expect(
      poll(context, { timeoutMs: 10_000, intervalMs: 100, now: clock.now, sleep: clock.sleep }, check),
    ).resolves.toBe("up");
    expect(calls()).toBe(2);
  });

  test("GIVEN a check that keeps throwing WHEN the wait times out THEN the thrown message is the last state", async () => {
    const clock = fakeClock();
    const { check } = scripted<never>([
      { done: false, state: "Pending" },
      new Error("connect ECONNREFUSED 172.29.1.10:6443"),
    ]);
    const error = (await rejection(
      poll(context, { timeoutMs: 2_000, intervalMs: 500, now: clock.now, sleep: clock.sleep }, check),
    )) as WaitTimeoutError;
    expect(error.isWaitTimeoutError).toBe(true);
    expect(error.lastState).toBe("connect ECONNREFUSED 172.29.1.10:6443");
    expect(error.message).toContain("last state: connect ECONNREFUSED 172.29.1.10:6443");
  });

  test("GIVEN a check that throws a non-Error value WHEN the wait times out THEN the value's text is the last state", async () => {
    const clock = fakeClock();
    const check = async (): Promise<CheckResult<never>> => {
      throw "socket hang up";
    };
    const error = (await rejection(
      poll(context, { timeoutMs: 1_000, intervalMs: 500, now: clock.now, sleep: clock.sleep }, check),
    )) as WaitTimeoutError;
    expect(error.lastState).toBe("socket hang up");
  });

  test("GIVEN a check that reports a failure WHEN polled THEN WaitFailedError is thrown at once without another look or pause", async () => {
    const clock = fakeClock();
    const { check, calls } = scripted<never>([
      { failed: true, reason: "CSR denied by admin" },
      { done: false, state: "unreachable" },
    ]);
    const error = (await rejection(
      poll(context, { timeoutMs: 10_000, now: clock.now, sleep: clock.sleep }, check),
    )) as WaitFailedError;
    expect(error.isWaitFailedError).toBe(true);
    expect(error.name).toBe("WaitFailedError");
    expect(error.reason).toBe("CSR denied by admin");
    expect(error.context).toEqual(context);
    expect(calls()).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  test("GIVEN a check that fails after some not-yet looks WHEN polled THEN WaitFailedError is thrown on that look and no later one is made", async () => {
    const clock = fakeClock();
    const { check, calls } = scripted<never>([
      { done: false, state: "Pending" },
      { failed: true, reason: "Denied" },
      { done: false, state: "never seen" },
    ]);
    const error = (await rejection(
      poll(context, { timeoutMs: 10_000, intervalMs: 100, now: clock.now, sleep: clock.sleep }, check),
    )) as WaitFailedError;
    expect(error.isWaitFailedError).toBe(true);
    expect(calls()).toBe(2);
  });

  test("GIVEN a terminal failure WHEN thrown THEN the message names step, object, endpoint and reason", async () => {
    const clock = fakeClock();
    const { check } = scripted<never>([{ failed: true, reason: "CSR denied by admin" }]);
    const error = (await rejection(
      poll(context, { timeoutMs: 10_000, now: clock.now, sleep: clock.sleep }, check),
    )) as Error;
    for (const part of [context.step, context.object, context.endpoint, "CSR denied by admin"])
      expect(error.message).toContain(part);
  });

  test("GIVEN an already aborted signal WHEN polled THEN the wait ends without looking", async () => {
    const clock = fakeClock();
    const { check, calls } = scripted([{ done: true, value: 1 }]);
    const signal = AbortSignal.abort();
    const error = (await rejection(
      poll(context, { timeoutMs: 10_000, signal, now: clock.now, sleep: clock.sleep }, check),
    )) as WaitTimeoutError;
    expect(error.isWaitTimeoutError).toBe(true);
    expect(error.lastState).toContain("operation deadline reached");
    expect(calls()).toBe(0);
  });

  test("GIVEN a signal aborted during a pause WHEN the pause ends THEN the wait ends with the last state seen and no further look", async () => {
    const clock = fakeClock();
    const controller = new AbortController();
    const { check, calls } = scripted<never>([{ done: false, state: "Pending" }]);
    const sleep = async (ms: number): Promise<void> => {
      await clock.sleep(ms);
      controller.abort();
    };
    const error = (await rejection(
      poll(context, { timeoutMs: 60_000, intervalMs: 100, signal: controller.signal, now: clock.now, sleep }, check),
    )) as WaitTimeoutError;
    expect(error.isWaitTimeoutError).toBe(true);
    expect(error.lastState).toBe("Pending (operation deadline reached)");
    expect(calls()).toBe(1);
    expect(clock.elapsed()).toBeLessThan(60_000);
  });

  test("GIVEN a look that the deadline cuts short WHEN the wait ends THEN it ends with the reason the last complete look gave, not the abort", async () => {
    const clock = fakeClock();
    const controller = new AbortController();
    let calls = 0;
    const check = async (): Promise<CheckResult<never>> => {
      calls += 1;
      if (calls === 1) return { done: false, state: "HTTP 503: the signer has not issued the certificate" };
      // The deadline passes while this look is in flight: the request ends as aborted.
      controller.abort();
      throw new Error("This operation was aborted");
    };
    const error = (await rejection(
      poll(
        context,
        { timeoutMs: 60_000, intervalMs: 100, signal: controller.signal, now: clock.now, sleep: clock.sleep },
        check,
      ),
    )) as WaitTimeoutError;
    expect(error.isWaitTimeoutError).toBe(true);
    expect(error.lastState).toBe("HTTP 503: the signer has not issued the certificate (operation deadline reached)");
  });

  test("GIVEN an interval longer than the time left WHEN pausing THEN no pause exceeds the remaining time", async () => {
    const clock = fakeClock();
    const start = clock.now();
    const timeoutMs = 1_000;
    const remainingAtEachSleep: number[] = [];
    const sleep = async (ms: number): Promise<void> => {
      remainingAtEachSleep.push(start + timeoutMs - clock.now());
      await clock.sleep(ms);
    };
    const { check } = scripted<never>([{ done: false, state: "Pending" }]);
    await rejection(poll(context, { timeoutMs, intervalMs: 700, now: clock.now, sleep }, check));
    expect(clock.sleeps.length).toBeGreaterThan(0);
    clock.sleeps.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThanOrEqual(remainingAtEachSleep[i]!);
    });
    expect(clock.elapsed()).toBe(timeoutMs);
  });

  test("GIVEN a check that itself takes time WHEN pausing THEN the pause is cut to what is left after the check", async () => {
    const clock = fakeClock();
    const start = clock.now();
    const timeoutMs = 1_000;
    const slowCheck = async (): Promise<CheckResult<never>> => {
      await clock.sleep(400); // the check's own duration, on the fake clock
      return { done: false, state: "slow" };
    };
    const pauses: Array<{ ms: number; remaining: number }> = [];
    const sleep = async (ms: number): Promise<void> => {
      pauses.push({ ms, remaining: start + timeoutMs - clock.now() });
      await clock.sleep(ms);
    };
    const error = (await rejection(
      poll(context, { timeoutMs, intervalMs: 500, now: clock.now, sleep }, slowCheck),
    )) as WaitTimeoutError;
    expect(error.lastState).toBe("slow");
    for (const { ms, remaining } of pauses) expect(ms).toBeLessThanOrEqual(remaining);
  });

  test("GIVEN a check done exactly at the deadline WHEN polled THEN its value still wins over the timeout", async () => {
    const clock = fakeClock();
    const start = clock.now();
    const check = async (): Promise<CheckResult<string>> =>
      clock.now() >= start + 1_000 ? { done: true, value: "just in time" } : { done: false, state: "Pending" };
    await expect(
      poll(context, { timeoutMs: 1_000, intervalMs: 250, now: clock.now, sleep: clock.sleep }, check),
    ).resolves.toBe("just in time");
  });

  test("GIVEN a zero timeout WHEN the first look is not done THEN it times out after one look without pausing", async () => {
    const clock = fakeClock();
    const { check, calls } = scripted<never>([{ done: false, state: "Pending" }]);
    const error = (await rejection(
      poll(context, { timeoutMs: 0, now: clock.now, sleep: clock.sleep }, check),
    )) as WaitTimeoutError;
    expect(error.isWaitTimeoutError).toBe(true);
    expect(error.lastState).toBe("Pending");
    expect(calls()).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });
});
