/** deleteFailure: a failed delete as the engine shows it, and the way out it names. */
import { deleteFailure } from "../../../../core/resources/read-failure.js";
import { WaitTimeoutError } from "../../../../core/wait/poll.js";

describe("deleteFailure", () => {
  test("GIVEN a delete whose wait ran out WHEN shaped THEN it names force as the way out, without a stack trace", () => {
    const timedOut = new WaitTimeoutError(
      {
        step: "offloading",
        object: "NamespaceOffloading shop/offloading deleted",
        endpoint: "https://172.29.1.11:6443",
      },
      300_000,
      "the consumer's agent has not let it go yet",
    );
    const failure = deleteFailure("NamespaceOffloading", "b-offloads", timedOut);
    expect(failure.message).toBe(
      'NamespaceOffloading "b-offloads": delete failed: offloading: timed out after 300 s waiting for NamespaceOffloading ' +
        "shop/offloading deleted at https://172.29.1.11:6443; last state: the consumer's agent has not let it go yet",
    );
    expect(failure.stack).toContain("if its provider is gone for good, set force: true on it, run pulumi up");
    expect(failure.stack).not.toMatch(/^\s+at /m);
  });

  test("GIVEN a delete refused at once WHEN shaped THEN it says to run destroy again, and nothing of force", () => {
    const failure = deleteFailure("Tunnel", "b-to-a-tunnel", new Error("network fabric: HTTP 403: forbidden"));
    expect(failure.stack).toBe(
      "the resource stays in the stack; run pulumi destroy again once the cause is dealt with",
    );
  });
});
