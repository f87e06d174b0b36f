import { authAccessOf, MIN_RENEWAL_SPACING_MS, RENEW_AT_FRACTION, renewalTime } from "../../../agent/renewal.js";
import type { OutgoingPeering } from "../../../core/api/index.js";

const DAY = 24 * 3600 * 1000;
const issued = Date.parse("2026-01-01T00:00:00Z");
const thirtyDays = { notBefore: new Date(issued), notAfter: new Date(issued + 30 * DAY) };

describe("when an identity is renewed", () => {
  test("GIVEN a 30-day identity THEN it is due at two thirds of its lifetime: 20 days in, 10 days before it expires", () => {
    expect(renewalTime(thirtyDays, RENEW_AT_FRACTION)).toBe(issued + 20 * DAY);
  });

  test("GIVEN a 600 s identity (the CSR API's minimum) THEN it is due after 400 s", () => {
    expect(renewalTime({ notBefore: new Date(issued), notAfter: new Date(issued + 600_000) }, RENEW_AT_FRACTION)).toBe(
      issued + 400_000,
    );
  });

  test(
    "GIVEN renewals that failed WHEN the next try is planned THEN it backs off from the last failure (1 s, 2 s, 4 s … " +
      "capped at 30 s), never before the renewal is due",
    () => {
      const due = issued + 20 * DAY;
      expect(renewalTime(thirtyDays, RENEW_AT_FRACTION, { count: 1, lastAt: due })).toBe(due + 1_000);
      expect(renewalTime(thirtyDays, RENEW_AT_FRACTION, { count: 3, lastAt: due + 5_000 })).toBe(due + 5_000 + 4_000);
      expect(renewalTime(thirtyDays, RENEW_AT_FRACTION, { count: 20, lastAt: due + DAY })).toBe(due + DAY + 30_000);
      // A failure recorded before the due time (an earlier identity) does not make the renewal early.
      expect(renewalTime(thirtyDays, RENEW_AT_FRACTION, { count: 1, lastAt: issued })).toBe(due);
    },
  );

  test("GIVEN a threshold injected for tests THEN the identity is due at that share of its lifetime", () => {
    expect(renewalTime(thirtyDays, 0.02)).toBe(issued + 0.6 * DAY);
  });

  test(
    "GIVEN a certificate dated back by its signer and a low threshold WHEN it was just renewed THEN the next renewal " +
      "waits the minimum spacing instead of looping",
    () => {
      const now = issued + 300_000;
      // kube-controller-manager dates a 600 s certificate 5 minutes back: valid 900 s, 300 s of them past.
      const backdated = { notBefore: new Date(issued), notAfter: new Date(now + 600_000) };
      expect(renewalTime(backdated, 0.02)).toBeLessThan(now);
      expect(renewalTime(backdated, 0.02, undefined, now)).toBe(now + MIN_RENEWAL_SPACING_MS);
      expect(renewalTime(backdated, RENEW_AT_FRACTION, undefined, now)).toBe(issued + 600_000);
    },
  );
});

describe("where an identity is renewed", () => {
  const spec = {
    providerClusterId: "p",
    providerClusterName: "a",
    identitySecret: "identity-p",
    tenantNamespace: "t",
    requestName: "r",
    virtualNodeName: "n",
  };
  const peering = (extra: Partial<OutgoingPeering["spec"]>): OutgoingPeering => ({
    apiVersion: "x",
    kind: "OutgoingPeering",
    metadata: { name: "to-p" },
    spec: { ...spec, ...extra },
  });

  test(
    "GIVEN an out-of-band peering THEN at the auth service its handover named; GIVEN an in-band one THEN inside the " +
      "tunnel, under the service's name; GIVEN one made before renewal existed THEN nowhere",
    () => {
      expect(authAccessOf(peering({ auth: { url: "https://172.29.1.10:8443", caPem: "CA" } }))).toEqual({
        url: "https://172.29.1.10:8443",
        caPem: "CA",
      });
      const inBand = {
        authUrl: "https://169.254.0.1:8443",
        authServerName: "auth.a",
        authCaPem: "CA2",
        apiServerUrl: "https://169.254.0.1:6443",
        apiServerName: "kubernetes",
        tokenSecret: "tok",
        resources: { pods: 1 },
      };
      expect(authAccessOf(peering({ inBand }))).toEqual({
        url: "https://169.254.0.1:8443",
        caPem: "CA2",
        serverName: "auth.a",
      });
      expect(authAccessOf(peering({}))).toBeUndefined();
    },
  );
});
