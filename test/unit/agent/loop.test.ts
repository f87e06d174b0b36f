import { abortableDelay, runLoop, Wakeup } from "../../../agent/loop.js";
import { RetryNow } from "../../../agent/watch.js";
import type { Reporter } from "../../../agent/reporter.js";

describe("runLoop", () => {
  test("GIVEN failing then passing passes WHEN looped THEN it backs off 1 s, 2 s, says why and that it recovered, then returns to the interval", async () => {
    const stop = new AbortController();
    const delays: number[] = [];
    const warnings: string[] = [];
    const infos: string[] = [];
    const reporter: Reporter = { info: (l) => infos.push(l), warn: (l) => warnings.push(l) };
    let calls = 0;
    await runLoop(
      {
        name: "test",
        intervalMs: 10_000,
        signal: stop.signal,
        reporter,
        random: () => 0,
        delay: async (ms) => {
          delays.push(ms);
          if (delays.length === 4) stop.abort();
        },
      },
      async () => {
        calls += 1;
        if (calls <= 2) throw new Error(`boom ${calls}`);
      },
    );
    expect(delays).toEqual([1000, 2000, 10_000, 10_000]);
    expect(warnings).toEqual(["test: boom 1 (attempt 1, retry in 1 s)", "test: boom 2 (attempt 2, retry in 2 s)"]);
    expect(infos).toEqual(["test: recovered after 2 failed attempts"]);
  });

  test("GIVEN a pass that keeps failing and a wake after each WHEN looped THEN the wakes do not cut the backoff short", async () => {
    const stop = new AbortController();
    const wakeup = new Wakeup();
    const slept: number[] = [];
    await runLoop(
      {
        name: "test",
        intervalMs: 10_000,
        signal: stop.signal,
        reporter: { info: () => undefined, warn: () => undefined },
        wakeup,
        random: () => 0,
        delay: async (ms) => void (slept.push(ms) === 4 && stop.abort()),
      },
      async () => {
        wakeup.wake();
        throw new Error("boom");
      },
    );
    expect(slept).toEqual([1000, 2000, 4000, 8000]);
  });

  test("GIVEN a pass that asks for a shorter pause WHEN looped THEN that pause is used for that turn only", async () => {
    const stop = new AbortController();
    const delays: number[] = [];
    let calls = 0;
    await runLoop(
      {
        name: "test",
        intervalMs: 30_000,
        signal: stop.signal,
        reporter: { info: () => undefined, warn: () => undefined },
        delay: async (ms) => void (delays.push(ms) === 3 && stop.abort()),
      },
      async () => (++calls === 2 ? 1000 : undefined),
    );
    expect(delays).toEqual([30_000, 1000, 30_000]);
  });
});

describe("Wakeup", () => {
  const never = new AbortController().signal;

  test("GIVEN a long pause WHEN woken THEN the pause ends at once", async () => {
    const wakeup = new Wakeup();
    const started = performance.now();
    const sleeping = wakeup.sleep(60_000, never, abortableDelay);
    wakeup.wake();
    await sleeping;
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test("GIVEN a wake during a pass WHEN the loop next pauses THEN it does not pause, and the pause after that is whole again", async () => {
    const wakeup = new Wakeup();
    wakeup.wake();
    const delays: number[] = [];
    const recordingDelay = async (ms: number): Promise<void> => void delays.push(ms);
    await wakeup.sleep(60_000, never, recordingDelay);
    await wakeup.sleep(60_000, never, recordingDelay);
    expect(delays).toEqual([60_000]);
  });

  test("GIVEN a looping agent WHEN woken between passes THEN the next pass runs without waiting the interval", async () => {
    const stop = new AbortController();
    const wakeup = new Wakeup();
    let calls = 0;
    const started = performance.now();
    await runLoop(
      {
        name: "test",
        intervalMs: 60_000,
        signal: stop.signal,
        reporter: { info: () => undefined, warn: () => undefined },
        wakeup,
      },
      async () => {
        calls += 1;
        if (calls === 3) stop.abort();
        else setTimeout(() => wakeup.wake(), 10);
      },
    );
    expect(calls).toBe(3);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

describe("RetryNow", () => {
  test("GIVEN two watches waiting to start over WHEN kicked THEN both stop waiting", async () => {
    const retryNow = new RetryNow();
    const never = new AbortController().signal;
    const started = performance.now();
    const waits = [retryNow.sleep(60_000, never), retryNow.sleep(60_000, never)];
    retryNow.kick();
    await Promise.all(waits);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
