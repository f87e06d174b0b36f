/** A refused identity is told apart from other failures, also through a described failure, and read failures print no stack trace. */
import { ApiException } from "@kubernetes/client-node";
import { describeFailure } from "../../../../core/kube/client.js";
import { httpStatusOf, isRefusal, statusOf } from "../../../../core/kube/errors.js";
import { describeRevokedIdentity, IDENTITY_REVOKED } from "../../../../core/authentication/revoked.js";
import { readFailure } from "../../../../core/resources/read-failure.js";

const forbidden = new ApiException(
  403,
  "Forbidden",
  JSON.stringify({
    kind: "Status",
    message: 'resourceoffers is forbidden: User "pulumi-liqo:consumer:bb" cannot get resource',
  }),
  {},
);
const site = { providerName: "a", endpoint: "https://172.29.1.10:6443", call: "reading ResourceOffer t/from-bb" };

/** What describeFailure throws for `error`. */
function described(error: unknown): unknown {
  try {
    describeFailure("network fabric: reading TunnelEndpoint t/to-aa", "https://172.29.1.10:6443")(error);
  } catch (thrown) {
    return thrown;
  }
  throw new Error("describeFailure did not throw");
}

describe("a refused identity", () => {
  test("GIVEN a 403 or 401 from the provider, raw or described WHEN asked THEN it is a refusal, and a described one is still no 'not found' candidate", () => {
    expect(isRefusal(forbidden)).toBe(true);
    expect(isRefusal(new ApiException(401, "Unauthorized", undefined, {}))).toBe(true);
    const wrapped = described(forbidden);
    expect(isRefusal(wrapped)).toBe(true);
    expect(httpStatusOf(wrapped)).toBe(403);
    expect(statusOf(wrapped)).toBeUndefined();
  });

  test.each([
    ["a 404", new ApiException(404, "Not Found", "{}", {})],
    ["a 500", { code: 500, body: "boom" }],
    [
      "a connection refused",
      Object.assign(new Error("connect ECONNREFUSED 172.29.1.10:6443"), { code: "ECONNREFUSED" }),
    ],
  ])("GIVEN %s WHEN described THEN it is not a revoked identity", (_label, error) => {
    expect(describeRevokedIdentity(error, site)).toBeUndefined();
    expect(describeRevokedIdentity(described(error), site)).toBeUndefined();
  });

  test("GIVEN a refusal WHEN described THEN it says identity revoked, names the provider, its endpoint and the call, and the way out", () => {
    expect(describeRevokedIdentity(forbidden, site)).toBe(
      `${IDENTITY_REVOKED}: provider a at https://172.29.1.10:6443 refused the consumer's identity ` +
        `(HTTP 403 reading ResourceOffer t/from-bb); pulumi up authenticates again with the peering token`,
    );
  });
});

describe("a failed read", () => {
  test("GIVEN any error WHEN made a read failure THEN what the dynamic provider host prints names the resource and the cause, without a stack trace", () => {
    const failure = readFailure(
      "Tunnel",
      "b-to-a-tunnel",
      new Error("network fabric: reading TunnelEndpoint x at https://h:6443: connect ECONNREFUSED"),
    );
    // What @pulumi/pulumi's cmd/dynamic-provider writes for an error thrown from read.
    const printed = `${failure}: ${failure.stack}`;
    expect(printed).toContain(
      'Tunnel "b-to-a-tunnel": refresh could not read it: network fabric: reading TunnelEndpoint x at https://h:6443: connect ECONNREFUSED',
    );
    expect(printed).not.toMatch(/\n\s+at /);
  });
});
