/** statusOf and describeKubeError: short descriptions of API errors shaped like client-node's. */
import { ApiException } from "@kubernetes/client-node";
import { describeKubeError, statusOf } from "../../../../provider/kube/errors.js";

/** A Kubernetes Status body, as the API server sends with an error. */
const statusBody = (code: number, message: string): Record<string, unknown> => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason: code === 404 ? "NotFound" : "Forbidden",
  code,
});

const notFound = 'leases.coordination.k8s.io "x" not found';

describe("statusOf", () => {
  test("GIVEN a client-node ApiException WHEN asked THEN its HTTP status is returned", () => {
    expect(statusOf(new ApiException(404, "Unknown API Status Code!", JSON.stringify(statusBody(404, notFound)), {}))).toBe(404);
  });

  test("GIVEN an object with a numeric code WHEN asked THEN the code is returned", () => {
    expect(statusOf({ code: 409, body: "{}" })).toBe(409);
  });

  test("GIVEN a Node system error whose code is a string WHEN asked THEN there is no status", () => {
    const error = Object.assign(new Error("connect ECONNREFUSED 172.29.1.10:6443"), { code: "ECONNREFUSED" });
    expect(statusOf(error)).toBeUndefined();
  });

  test.each([new Error("plain"), "text", 404, null, undefined, {}])("GIVEN %p, which carries no status WHEN asked THEN there is none", (error) => {
    expect(statusOf(error)).toBeUndefined();
  });
});

describe("describeKubeError", () => {
  test("GIVEN a client-node ApiException with a JSON Status body WHEN described THEN it is the status and the Status message only", () => {
    const error = new ApiException(404, "Unknown API Status Code!", JSON.stringify(statusBody(404, notFound)), { "content-type": "application/json" });
    expect(describeKubeError(error)).toBe(`HTTP 404: ${notFound}`);
  });

  test("GIVEN an ApiException WHEN described THEN the headers that client-node's own message dumps are left out", () => {
    const error = new ApiException(403, "Unknown API Status Code!", JSON.stringify(statusBody(403, "forbidden")), { "x-secret-header": "leaky" });
    expect(error.message).toContain("leaky");
    expect(describeKubeError(error)).not.toContain("leaky");
  });

  test("GIVEN an error whose body is a Status object WHEN described THEN its message is used", () => {
    expect(describeKubeError({ code: 403, body: statusBody(403, 'nodes is forbidden: User "u" cannot list resource "nodes"') })).toBe(
      'HTTP 403: nodes is forbidden: User "u" cannot list resource "nodes"',
    );
  });

  test("GIVEN a body that is not JSON WHEN described THEN the raw body is the message", () => {
    expect(describeKubeError({ code: 502, body: "Bad Gateway" })).toBe("HTTP 502: Bad Gateway");
  });

  test("GIVEN a 401 with no body, as client-node throws it WHEN described THEN it says there is no message", () => {
    expect(describeKubeError(new ApiException(401, "Unauthorized", undefined, {}))).toBe("HTTP 401: no message");
  });

  test.each([
    ["a JSON body without a message", JSON.stringify({ kind: "Status" })],
    ["a JSON body whose message is not text", JSON.stringify({ message: 42 })],
    ["a JSON null body", "null"],
    ["an object body without a message", { kind: "Status" }],
    ["a null body", null],
  ])("GIVEN %s WHEN described THEN it says there is no message", (_label, body) => {
    expect(describeKubeError({ code: 500, body })).toBe("HTTP 500: no message");
  });

  test("GIVEN a plain Error WHEN described THEN its own message is returned", () => {
    expect(describeKubeError(new Error("connect ECONNREFUSED 172.29.1.10:6443"))).toBe("connect ECONNREFUSED 172.29.1.10:6443");
  });

  test("GIVEN a Node system error with a string code WHEN described THEN its own message is returned, not an HTTP status", () => {
    const error = Object.assign(new Error("getaddrinfo ENOTFOUND nowhere"), { code: "ENOTFOUND" });
    expect(describeKubeError(error)).toBe("getaddrinfo ENOTFOUND nowhere");
  });

  test.each([
    ["a string", "something broke", "something broke"],
    ["null", null, "null"],
    ["undefined", undefined, "undefined"],
  ])("GIVEN %s thrown WHEN described THEN its text is returned", (_label, error, expected) => {
    expect(describeKubeError(error)).toBe(expected);
  });
});
