/** A 429 of the auth service as the consumer reads it: when to look again, and what it says of the flood. */
import { throttledState } from "../../../../core/authentication/identity.js";

const answer = (error: unknown, retryAfterSeconds?: number) => ({
  status: 429,
  body: { error },
  ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
});

describe("throttledState", () => {
  test("GIVEN the provider's 429 naming the address it throttles THEN the state says it is flooded, from where, and waits its Retry-After", () => {
    const seen = throttledState(answer("too many refused requests from address 192.168.101.1; retry after 60 s", 60));
    expect(seen.retryAfterMs).toBe(60_000);
    expect(seen.state).toBe(
      "throttled, HTTP 429: too many refused requests from address 192.168.101.1; retry after 60 s (retry after 60 s): " +
        "the provider is being flooded with refused requests and throttles those it sees from address 192.168.101.1",
    );
  });

  test("GIVEN no Retry-After, a zero or a huge one THEN it waits 1 s at least and an hour at most", () => {
    expect(throttledState(answer("busy")).retryAfterMs).toBe(1_000);
    expect(throttledState(answer("busy", 0)).retryAfterMs).toBe(1_000);
    expect(throttledState(answer("busy", 1e9)).retryAfterMs).toBe(3_600_000);
  });

  test("GIVEN a hostile body (no text, something that is no address, a long text) THEN nothing of it is repeated as whom it throttles", () => {
    expect(throttledState(answer({ x: 1 }, 2)).state).toBe(
      "throttled, HTTP 429: no reason given (retry after 2 s): the provider is being flooded with refused requests",
    );
    const injected = throttledState(answer("too many refused requests from address $(rm -rf /)\nx; retry", 2)).state;
    expect(injected).not.toContain("throttles those it sees");
    expect(throttledState(answer(`from address 1.2.3.4; ${"x".repeat(10_000)}`, 2)).state.length).toBeLessThan(700);
  });
});
