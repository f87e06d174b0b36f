/** Deadline: one per operation, shared by its steps; driven here by a fake clock (no real time passes). */
import { RESOURCES } from "../../../../declarations/index.js";
import { DEFAULT_TIMEOUT_SECONDS, startDeadline, type DeadlineClock } from "../../../../core/wait/deadline.js";

/** A fake clock whose signals abort when `advance` passes their time; records what was asked for. */
function fakeClock(start = 5_000_000): DeadlineClock & { advance(ms: number): void; asked: number[] } {
  let time = start;
  const timers: { at: number; controller: AbortController }[] = [];
  const asked: number[] = [];
  return {
    now: () => time,
    abortAfter: (ms) => {
      asked.push(ms);
      const controller = new AbortController();
      timers.push({ at: time + ms, controller });
      return controller.signal;
    },
    advance: (ms) => {
      time += ms;
      for (const timer of timers) if (time >= timer.at) timer.controller.abort();
    },
    asked,
  };
}

describe("startDeadline", () => {
  test("GIVEN a 90 s deadline WHEN steps run for 30 s and then 50 s THEN each sees what is left of the one deadline, not its own 90 s", () => {
    const clock = fakeClock();
    const deadline = startDeadline(90_000, clock);

    expect(deadline.left()).toBe(90_000);
    clock.advance(30_000);
    expect(deadline.left()).toBe(60_000);
    clock.advance(50_000);
    expect(deadline.left()).toBe(10_000);
    expect(deadline.timeoutMs).toBe(90_000);
  });

  test("GIVEN a deadline WHEN its time passes THEN its one signal aborts, and what is left stays at 1 ms so a last step still makes its attempt", () => {
    const clock = fakeClock();
    const deadline = startDeadline(2_000, clock);

    clock.advance(1_999);
    expect(deadline.signal.aborted).toBe(false);
    clock.advance(1);
    expect(deadline.signal.aborted).toBe(true);
    clock.advance(60_000);
    expect(deadline.left()).toBe(1);
    expect(clock.asked).toEqual([2_000]);
  });

  test("GIVEN a timeout that is not a positive number WHEN a deadline is started THEN it is refused, echoing the value", () => {
    for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => startDeadline(bad, fakeClock())).toThrow(
        `deadline: the timeout must be a positive number of milliseconds, got ${bad}`,
      );
  });

  test("GIVEN the real clock WHEN a deadline is started THEN its signal has not aborted and what is left is at most the timeout", () => {
    const deadline = startDeadline(60_000);

    expect(deadline.signal.aborted).toBe(false);
    expect(deadline.left()).toBeLessThanOrEqual(60_000);
    expect(deadline.left()).toBeGreaterThan(50_000);
  });

  test("GIVEN the declarations WHEN they document timeoutSeconds THEN each says the one default the shims use", () => {
    const documented = RESOURCES.flatMap((declaration) => {
      const input = (declaration.inputs as Record<string, { readonly default?: string }>)["timeoutSeconds"];
      return input ? [Number(input.default)] : [];
    });

    expect(documented).toHaveLength(4);
    expect(documented).toEqual(Array(4).fill(DEFAULT_TIMEOUT_SECONDS));
  });
});
