/** statusOf and describeKubeError: short descriptions of API errors shaped like client-node's. */
import { ApiException } from "@kubernetes/client-node";
import {
  classifyConnectionError,
  describeKubeError,
  explainConnectionError,
  statusOf,
} from "../../../../core/kube/errors.js";

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
    expect(
      statusOf(new ApiException(404, "Unknown API Status Code!", JSON.stringify(statusBody(404, notFound)), {})),
    ).toBe(404);
  });

  test("GIVEN an object with a numeric code WHEN asked THEN the code is returned", () => {
    expect(statusOf({ code: 409, body: "{}" })).toBe(409);
  });

  test("GIVEN a Node system error whose code is a string WHEN asked THEN there is no status", () => {
    const error = Object.assign(new Error("connect ECONNREFUSED 172.29.1.10:6443"), { code: "ECONNREFUSED" });
    expect(statusOf(error)).toBeUndefined();
  });

  test.each([new Error("plain"), "text", 404, null, undefined, {}])(
    "GIVEN %p, which carries no status WHEN asked THEN there is none",
    (error) => {
      expect(statusOf(error)).toBeUndefined();
    },
  );
});

describe("describeKubeError", () => {
  test("GIVEN a client-node ApiException with a JSON Status body WHEN described THEN it is the status and the Status message only", () => {
    const error = new ApiException(404, "Unknown API Status Code!", JSON.stringify(statusBody(404, notFound)), {
      "content-type": "application/json",
    });
    expect(describeKubeError(error)).toBe(`HTTP 404: ${notFound}`);
  });

  test("GIVEN an ApiException WHEN described THEN the headers that client-node's own message dumps are left out", () => {
    const error = new ApiException(403, "Unknown API Status Code!", JSON.stringify(statusBody(403, "forbidden")), {
      "x-secret-header": "leaky",
    });
    expect(error.message).toContain("leaky");
    expect(describeKubeError(error)).not.toContain("leaky");
  });

  test("GIVEN an error whose body is a Status object WHEN described THEN its message is used", () => {
    expect(
      describeKubeError({
        code: 403,
        body: statusBody(403, 'nodes is forbidden: User "u" cannot list resource "nodes"'),
      }),
    ).toBe('HTTP 403: nodes is forbidden: User "u" cannot list resource "nodes"');
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
    expect(describeKubeError(new Error("connect ECONNREFUSED 172.29.1.10:6443"))).toBe(
      "connect ECONNREFUSED 172.29.1.10:6443",
    );
  });

  test("GIVEN a Node system error with a string code WHEN described THEN its cause is named, not an HTTP status", () => {
    const error = Object.assign(new Error("getaddrinfo ENOTFOUND nowhere"), { code: "ENOTFOUND" });
    expect(describeKubeError(error)).toBe("host name not resolved (DNS has no address for the host; ENOTFOUND)");
  });

  test("GIVEN undici's fetch failed whose cause has no known code WHEN described THEN the cause's message follows", () => {
    expect(describeKubeError(new TypeError("fetch failed", { cause: new Error("bad port") }))).toBe(
      "fetch failed: bad port",
    );
  });

  test.each([
    ["a string", "something broke", "something broke"],
    ["null", null, "null"],
    ["undefined", undefined, "undefined"],
  ])("GIVEN %s thrown WHEN described THEN its text is returned", (_label, error, expected) => {
    expect(describeKubeError(error)).toBe(expected);
  });
});

/**
 * Error shapes as client-node 2.0.1 (undici fetch) and node:https/node:tls threw them here, on
 * Node 24: a `TypeError: fetch failed` whose `cause` is the socket's or TLS library's error.
 */
const fetchFailed = (cause: Record<string, unknown>): TypeError =>
  new TypeError("fetch failed", { cause: Object.assign(new Error(String(cause["message"])), cause) });
const CAPTURED = {
  refused: fetchFailed({
    errno: -111,
    code: "ECONNREFUSED",
    syscall: "connect",
    address: "127.0.0.1",
    port: 39309,
    message: "connect ECONNREFUSED 127.0.0.1:39309",
  }),
  connectTimeout: fetchFailed({
    code: "UND_ERR_CONNECT_TIMEOUT",
    message: "Connect Timeout Error (attempted address: 172.29.1.10:6443, timeout: 10000ms)",
  }),
  etimedout: Object.assign(new Error("connect ETIMEDOUT 172.29.1.10:6443"), {
    code: "ETIMEDOUT",
    errno: -110,
    syscall: "connect",
  }),
  hostUnreachable: fetchFailed({
    errno: -113,
    code: "EHOSTUNREACH",
    syscall: "connect",
    address: "172.29.1.10",
    port: 6443,
    message: "connect EHOSTUNREACH 172.29.1.10:6443",
  }),
  selfSigned: fetchFailed({
    code: "DEPTH_ZERO_SELF_SIGNED_CERT",
    message: "self-signed certificate; if the root CA is installed locally, try running Node.js with --use-system-ca",
  }),
  wrongCa: fetchFailed({ code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE", message: "unable to verify the first certificate" }),
  chainedElsewhere: fetchFailed({
    code: "SELF_SIGNED_CERT_IN_CHAIN",
    message: "self-signed certificate in certificate chain",
  }),
  nameMismatch: fetchFailed({
    code: "ERR_TLS_CERT_ALTNAME_INVALID",
    message: "Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: ",
    reason: "IP: 127.0.0.1 is not in the cert's list: ",
    host: "127.0.0.1",
  }),
  dns: fetchFailed({
    errno: -3008,
    code: "ENOTFOUND",
    syscall: "getaddrinfo",
    message: "getaddrinfo ENOTFOUND nonexistent.invalid",
  }),
  aggregate: fetchFailed({
    code: "ECONNREFUSED",
    message: "",
    errors: [Object.assign(new Error("connect ECONNREFUSED ::1:6443"), { code: "ECONNREFUSED" })],
  }),
  deadline: new DOMException("The operation was aborted due to timeout", "TimeoutError"),
};

describe("classifyConnectionError", () => {
  test.each([
    ["refused", CAPTURED.refused, "connection refused", "ECONNREFUSED"],
    ["undici's connect timeout", CAPTURED.connectTimeout, "timed out", "UND_ERR_CONNECT_TIMEOUT"],
    ["a socket's ETIMEDOUT", CAPTURED.etimedout, "timed out", "ETIMEDOUT"],
    ["an abort by a deadline", CAPTURED.deadline, "timed out", "TimeoutError"],
    ["no route", CAPTURED.hostUnreachable, "host unreachable", "EHOSTUNREACH"],
    ["a self-signed server certificate", CAPTURED.selfSigned, "TLS: unknown authority", "DEPTH_ZERO_SELF_SIGNED_CERT"],
    ["a certificate of another CA", CAPTURED.wrongCa, "TLS: unknown authority", "UNABLE_TO_VERIFY_LEAF_SIGNATURE"],
    ["a chain to another root", CAPTURED.chainedElsewhere, "TLS: unknown authority", "SELF_SIGNED_CERT_IN_CHAIN"],
    ["a certificate for another name", CAPTURED.nameMismatch, "TLS: name mismatch", "ERR_TLS_CERT_ALTNAME_INVALID"],
    ["an unknown host name", CAPTURED.dns, "host name not resolved", "ENOTFOUND"],
    ["an AggregateError of several addresses", CAPTURED.aggregate, "connection refused", "ECONNREFUSED"],
  ])("GIVEN %s WHEN classified THEN the fault and its code are named", (_label, error, fault, code) => {
    expect(classifyConnectionError(error)).toEqual({
      fault,
      code,
      description: expect.stringMatching(new RegExp(`^${fault} \\(.+; ${code}\\)$`)),
    });
  });

  test("GIVEN undici's fetch failed for two different causes WHEN described THEN the descriptions differ (the point of reading the cause)", () => {
    expect(describeKubeError(CAPTURED.refused)).not.toBe(describeKubeError(CAPTURED.wrongCa));
    expect(describeKubeError(CAPTURED.refused)).toBe(
      "connection refused (nothing listens at that address and port; ECONNREFUSED)",
    );
  });

  test.each([
    new Error("plain"),
    new ApiException(404, "Not Found", "{}", {}),
    "text",
    null,
    undefined,
    Object.assign(new Error("x"), { code: 500 }),
  ])("GIVEN %p, not a connection's failure WHEN classified THEN there is no fault", (error) => {
    expect(classifyConnectionError(error)).toBeUndefined();
  });

  test("GIVEN an error whose cause refers back to it WHEN classified THEN it ends", () => {
    const loop: Error & { cause?: unknown } = new Error("loop");
    loop.cause = loop;
    expect(classifyConnectionError(loop)).toBeUndefined();
  });
});

describe("explainConnectionError", () => {
  test("GIVEN a TLS failure of node:https WHEN explained THEN the message names the cause and the code stays for callers that test it", () => {
    const raw = Object.assign(new Error("unable to verify the first certificate"), {
      code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    });
    const explained = explainConnectionError(raw) as Error & { code?: string };
    expect([explained.message, explained.code, explained.cause]).toEqual([
      expect.stringMatching(/^TLS: unknown authority \(/),
      "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      raw,
    ]);
  });

  test("GIVEN an error that is no connection's failure WHEN explained THEN it is returned as it is", () => {
    const plain = new Error("answer larger than 1048576 bytes");
    expect(explainConnectionError(plain)).toBe(plain);
  });
});
