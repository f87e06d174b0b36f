import { relayPorts } from "../../../../agent/gateway/relay.js";

describe("relayPorts", () => {
  test("GIVEN an endpoint of pod traffic only THEN nothing is relayed", () => {
    expect(relayPorts({})).toBeUndefined();
  });

  test("GIVEN a consumer's endpoint THEN its API server is relayed to the pods it offloads, and no auth service", () => {
    expect(relayPorts({ podApiPort: 6443 })).toEqual({ apiServer: [6443] });
  });

  test("GIVEN an in-band provider's endpoint that is also a consumer's THEN one port per distinct API server port, and the auth service", () => {
    expect(relayPorts({ inBandPorts: { apiServer: 6443, auth: 8443 }, podApiPort: 6443 })).toEqual({
      apiServer: [6443],
      auth: 8443,
    });
    expect(relayPorts({ inBandPorts: { apiServer: 7443, auth: 8443 }, podApiPort: 6443 })).toEqual({
      apiServer: [7443, 6443],
      auth: 8443,
    });
  });
});
