import { GRACE_MS, withinTimeout, type Schedule } from "../../../plugin/timeouts.js";

/** A schedule that runs nothing by itself: the test fires the timer, no real time passes. */
function manualSchedule(): { schedule: Schedule; fire(): void; delays: number[]; cancelled: () => number } {
  let pending: (() => void) | undefined;
  let cancelled = 0;
  const delays: number[] = [];
  return {
    schedule: (run, ms) => {
      pending = run;
      delays.push(ms);
      return () => {
        cancelled += 1;
        pending = undefined;
      };
    },
    fire: () => pending?.(),
    delays,
    cancelled: () => cancelled,
  };
}

describe("withinTimeout", () => {
  test("GIVEN no customTimeouts (0) WHEN guarded THEN the work is returned as it is, no timer started", async () => {
    const clock = manualSchedule();
    await expect(withinTimeout(Promise.resolve(7), { seconds: 0, what: "x", schedule: clock.schedule })).resolves.toBe(
      7,
    );
    expect(clock.delays).toEqual([]);
  });

  test("GIVEN 5 s WHEN the work never ends and the timer fires THEN it fails naming the operation and the timeout", async () => {
    const clock = manualSchedule();
    const guarded = withinTimeout(new Promise(() => undefined), {
      seconds: 5,
      what: 'Peering "b-to-a": create',
      schedule: clock.schedule,
    });
    expect(clock.delays).toEqual([5000 + GRACE_MS]);
    clock.fire();
    await expect(guarded).rejects.toThrow('Peering "b-to-a": create: did not finish within its customTimeouts of 5 s');
  });

  test("GIVEN 5 s WHEN the work fails with its own error first THEN that error, and the timer is cancelled", async () => {
    const clock = manualSchedule();
    const guarded = withinTimeout(Promise.reject(new Error("authentication: timed out after 5 s")), {
      seconds: 5,
      what: "x",
      schedule: clock.schedule,
    });
    await expect(guarded).rejects.toThrow("authentication: timed out after 5 s");
    expect(clock.cancelled()).toBe(1);
  });
});
