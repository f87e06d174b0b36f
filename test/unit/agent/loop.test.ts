import { backoffMs, runLoop } from "../../../agent/loop.js";
import type { Reporter } from "../../../agent/reporter.js";

describe("runLoop", () => {
  test("GIVEN failing then passing passes WHEN looped THEN it backs off 1 s, 2 s, then returns to the interval", async () => {
    const stop = new AbortController();
    const delays: number[] = [];
    const warnings: string[] = [];
    const reporter: Reporter = { info: () => undefined, warn: (l) => warnings.push(l) };
    let calls = 0;
    await runLoop(
      {
        name: "test",
        intervalMs: 10_000,
        signal: stop.signal,
        reporter,
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
    expect(warnings).toEqual(["test: boom 1 (retry in 1 s)", "test: boom 2 (retry in 2 s)"]);
  });

  test("GIVEN many failures WHEN backing off THEN the pause is capped at 30 s", () => {
    expect([1, 2, 3, 4, 5, 6, 20].map(backoffMs)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });
});
