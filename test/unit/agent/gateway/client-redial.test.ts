import { endpointToRedial } from "../../../../agent/gateway/client-redial.js";

describe("endpointToRedial (a client gateway whose tunnel is down)", () => {
  test("GIVEN the peer roamed to the server's old port WHEN the spec names the new one THEN it dials the new one", () => {
    expect(endpointToRedial("172.29.1.10:51824", "172.29.1.10:51820")).toBe("172.29.1.10:51824");
  });

  test("GIVEN the peer has no endpoint yet THEN it dials the spec's", () => {
    expect(endpointToRedial("172.29.1.10:51824", undefined)).toBe("172.29.1.10:51824");
  });

  test("GIVEN the peer is where the spec says THEN it dials nothing", () => {
    expect(endpointToRedial("172.29.1.10:51824", "172.29.1.10:51824")).toBeUndefined();
  });

  test("GIVEN no endpoint in the spec (a server's side) THEN it dials nothing", () => {
    expect(endpointToRedial(undefined, "10.0.0.2:40000")).toBeUndefined();
  });
});
