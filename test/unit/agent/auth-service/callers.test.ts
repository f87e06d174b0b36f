import { callerOf, sourceCaller } from "../../../../agent/auth-service/callers.js";
import { FailureLimiter } from "../../../../agent/auth-service/failure-limiter.js";
import { KnownTokenIds } from "../../../../agent/auth-service/known-tokens.js";

describe("auth service callers", () => {
  test("GIVEN what a request proves THEN it is charged to its consumer, else its known token, else its address", () => {
    expect(callerOf({ source: "10.100.1.1", consumerClusterId: "0123456789abcdef", knownTokenId: "aa" })).toEqual({
      key: "consumer:0123456789abcdef",
      description: "consumer 0123456789abcdef",
    });
    expect(callerOf({ source: "10.100.1.1", knownTokenId: "00ff00ff00ff00ff" })).toEqual({
      key: "token:00ff00ff00ff00ff",
      description: "token id 00ff00ff00ff00ff",
    });
    expect(callerOf({ source: "10.100.1.1" })).toEqual(sourceCaller("10.100.1.1"));
    expect(sourceCaller("10.100.1.1")).toEqual({ key: "source:10.100.1.1", description: "address 10.100.1.1" });
  });

  test("GIVEN a stranger's refusals spending an address's budget THEN a consumer and a known token behind that address are still heard", () => {
    const limiter = new FailureLimiter({ maxFailures: 5, windowMs: 60_000 });
    const shared = sourceCaller("10.100.1.1");
    for (let i = 0; i < 100; i++) limiter.recordFailure(shared.key, 1_000 + i);
    expect(limiter.blockedFor(shared.key, 2_000)).toBeGreaterThan(0);
    const consumer = callerOf({ source: "10.100.1.1", consumerClusterId: "0123456789abcdef" });
    const token = callerOf({ source: "10.100.1.1", knownTokenId: "00ff00ff00ff00ff" });
    expect(limiter.blockedFor(consumer.key, 2_000)).toBeUndefined();
    expect(limiter.blockedFor(token.key, 2_000)).toBeUndefined();
  });
});

describe("known token ids", () => {
  test("GIVEN an unknown id asked for again and again THEN the ids are listed at most once per interval, and shared by callers at once", async () => {
    let clock = 0;
    let lists = 0;
    const known = new KnownTokenIds({
      list: async () => {
        lists += 1;
        return lists >= 2 ? ["00ff00ff00ff00ff"] : [];
      },
      now: () => clock,
      minRefreshMs: 1_000,
    });
    expect(await Promise.all([known.has("00ff00ff00ff00ff"), known.has("1111111111111111")])).toEqual([false, false]);
    expect(lists).toBe(1);
    for (let i = 0; i < 50; i++) expect(await known.has(`${i}`.padStart(16, "0"))).toBe(false);
    expect(lists).toBe(1);
    clock = 1_000;
    expect(await known.has("00ff00ff00ff00ff")).toBe(true);
    expect(lists).toBe(2);
    // Known ids are answered without a list.
    clock = 1_100;
    expect(await known.has("00ff00ff00ff00ff")).toBe(true);
    expect(lists).toBe(2);
  });

  test("GIVEN a token made while a flood keeps the list fresh THEN a request naming it waits for the next list and is recognised", async () => {
    let clock = 0;
    const recorded: string[] = [];
    const lists: number[] = [];
    const slept: number[] = [];
    const known = new KnownTokenIds({
      list: async () => {
        lists.push(clock);
        return [...recorded];
      },
      now: () => clock,
      minRefreshMs: 1_000,
      sleep: async (ms) => {
        slept.push(ms);
        clock += ms;
      },
    });
    expect(await known.has("1111111111111111")).toBe(false);
    // The token's create returns at 400 ms, after the flood's last list; its first request arrives at once.
    clock = 400;
    recorded.push("00ff00ff00ff00ff");
    const flood = Array.from({ length: 20 }, (_, i) => known.has(`${i}`.padStart(16, "0")));
    const answers = await Promise.all([known.has("00ff00ff00ff00ff"), ...flood]);
    expect(answers).toEqual([true, ...flood.map(() => false)]);
    // One list for all of them, one interval after the last.
    expect(lists).toEqual([0, 1_000]);
    expect(slept).toEqual([600]);
  });

  test("GIVEN a list that fails THEN has() does not reject, the ids listed before stay, and the failure is told", async () => {
    let clock = 0;
    let fail = false;
    const failures: unknown[] = [];
    const known = new KnownTokenIds({
      list: async () => {
        if (fail) throw new Error("API server down");
        return ["00ff00ff00ff00ff"];
      },
      now: () => clock,
      onListFailure: (error) => failures.push(error),
    });
    expect(await known.has("00ff00ff00ff00ff")).toBe(true);
    fail = true;
    clock = 5_000;
    expect(await known.has("1111111111111111")).toBe(false);
    expect(await known.has("00ff00ff00ff00ff")).toBe(true);
    expect(failures).toHaveLength(1);
  });
});
