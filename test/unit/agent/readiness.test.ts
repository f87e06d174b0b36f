import {
  decideReadiness,
  IDENTITY_EXPIRED_REASON,
  IDENTITY_RENEWAL_FAILING_REASON,
  PROVIDER_UNREACHABLE_AFTER_MS,
  PROVIDER_UNREACHABLE_REASON,
} from "../../../agent/readiness.js";
import { IDENTITY_REVOKED_REASON } from "../../../core/authentication/revoked.js";
import { PEERING_ACTIVE } from "../../../core/virtual-node/node.js";

const now = Date.parse("2026-01-21T00:00:00Z");
const unreachable = "reading ResourceOffer t/r at https://172.29.1.10:6443: no answer within 5 s";
const revoked = { ready: false, reason: IDENTITY_REVOKED_REASON, message: "identity revoked: …" };

describe("what the heartbeat posts as a virtual node's Ready condition", () => {
  test("GIVEN the provider answered THEN the node is Ready, whatever came before", () => {
    expect(decideReadiness({ providerName: "a", answered: PEERING_ACTIVE, lastContactAt: now, now })).toEqual(
      PEERING_ACTIVE,
    );
  });

  test(
    "GIVEN the provider out of reach WHEN for less than the bound THEN what was posted stands; WHEN for the bound THEN " +
      "NotReady, naming the provider, when it was last reached and the cause",
    () => {
      const justBefore = decideReadiness({
        providerName: "a",
        unreachable,
        last: PEERING_ACTIVE,
        lastContactAt: now - PROVIDER_UNREACHABLE_AFTER_MS + 1,
        now,
      });
      expect(justBefore).toEqual(PEERING_ACTIVE);
      const after = decideReadiness({
        providerName: "a",
        unreachable,
        last: PEERING_ACTIVE,
        lastContactAt: now - PROVIDER_UNREACHABLE_AFTER_MS,
        now,
      });
      expect(after).toEqual({
        ready: false,
        reason: PROVIDER_UNREACHABLE_REASON,
        message: `provider a not reached for 40 s (last reached at ${new Date(now - 40_000).toISOString()}): ${unreachable}`,
      });
    },
  );

  test("GIVEN a revoked identity posted WHEN a pass cannot ask the provider THEN the node stays NotReady", () => {
    expect(decideReadiness({ providerName: "a", last: revoked, lastContactAt: now, now })).toEqual(revoked);
  });

  test("GIVEN renewals failing WHEN the provider answers THEN Ready, with the reason, the expiry, the count, the next try and the cause", () => {
    const identity = {
      expiresAt: "2026-01-31T00:00:00.000Z",
      renewAt: "2026-01-21T00:00:30.000Z",
      renewalFailures: 3,
      renewalError: "authentication: … connect ECONNREFUSED 172.29.1.10:8443",
    };
    expect(decideReadiness({ providerName: "a", answered: PEERING_ACTIVE, lastContactAt: now, identity, now })).toEqual(
      {
        ready: true,
        reason: IDENTITY_RENEWAL_FAILING_REASON,
        message:
          `the identity expires at 2026-01-31T00:00:00.000Z; renewing it failed 3 times in a row (next try at ` +
          `2026-01-21T00:00:30.000Z): ${identity.renewalError}`,
      },
    );
    // Once a renewal succeeds the failure is gone from the status, and from the node.
    const last = decideReadiness({ providerName: "a", answered: PEERING_ACTIVE, lastContactAt: now, identity, now });
    expect(
      decideReadiness({
        providerName: "a",
        last,
        lastContactAt: now,
        identity: { expiresAt: "2026-02-20T00:00:00.000Z" },
        now,
      }),
    ).toEqual(PEERING_ACTIVE);
  });

  test("GIVEN the provider refuses the identity WHEN it has expired THEN IdentityExpired, not IdentityRevoked", () => {
    const expired = decideReadiness({
      providerName: "a",
      answered: revoked,
      lastContactAt: now,
      identity: { expiresAt: new Date(now - 1).toISOString() },
      now,
    });
    expect(expired.ready).toBe(false);
    expect(expired.reason).toBe(IDENTITY_EXPIRED_REASON);
    expect(expired.message).toMatch(
      /^identity expired at .* and provider a refuses it; pulumi up authenticates again with the peering token$/,
    );
    expect(
      decideReadiness({
        providerName: "a",
        answered: revoked,
        lastContactAt: now,
        identity: { expiresAt: new Date(now + 1).toISOString() },
        now,
      }),
    ).toEqual(revoked);
  });
});
