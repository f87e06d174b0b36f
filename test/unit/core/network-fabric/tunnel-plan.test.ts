/** Tunnel decisions: settings problems, the link block, roles and the specs each gateway gets. */
import { Cidr } from "../../../../core/net/cidr.js";
import { joinHostPort } from "../../../../core/net/endpoint.js";
import {
  dialedEndpoint,
  endpointReadiness,
  forgeTunnelEndpointSpec,
  TUNNEL_DEFAULTS,
  tunnelAddress,
  tunnelLinkCidr,
  tunnelSettingsProblems,
  type TunnelSettings,
} from "../../../../core/network-fabric/tunnel-plan.js";
import type { TunnelEndpoint } from "../../../../core/api/index.js";

const parties = {
  consumer: { clusterId: "00000000000000bb", clusterName: "b" },
  provider: { clusterId: "00000000000000aa", clusterName: "a" },
};
const settings: TunnelSettings = {
  server: "provider",
  serverAddress: "203.0.113.7",
  ...TUNNEL_DEFAULTS,
  behindNat: [],
};

describe("tunnel settings", () => {
  test("GIVEN both sides behind NAT WHEN checked THEN it is refused saying neither gateway can be reached", () => {
    expect(tunnelSettingsProblems({ server: "provider", behindNat: ["consumer", "provider"] })).toEqual([
      {
        input: "behindNat",
        reason: expect.stringMatching(/both clusters are behind NAT: neither gateway can be reached/),
      },
    ]);
  });

  test("GIVEN the server behind NAT WHEN checked THEN it is refused naming the side that should serve", () => {
    expect(tunnelSettingsProblems({ server: "provider", behindNat: ["provider"] })).toEqual([
      { input: "server", reason: expect.stringContaining(`let the consumer serve (server: "consumer")`) },
    ]);
  });

  test("GIVEN one side behind NAT and the other serving WHEN checked THEN nothing is wrong", () => {
    expect(tunnelSettingsProblems({ server: "provider", behindNat: ["consumer"] })).toEqual([]);
    expect(tunnelSettingsProblems({ server: "consumer", behindNat: ["provider"] })).toEqual([]);
  });

  test("GIVEN a bad port, MTU, keepalive and server WHEN checked THEN every one is named", () => {
    const problems = tunnelSettingsProblems({ server: "both" as never, port: 70000, mtu: 1000, keepaliveSeconds: -1 });
    expect(problems.map((p) => p.input)).toEqual(["server", "port", "mtu", "keepaliveSeconds"]);
  });
});

describe("tunnel link block", () => {
  test("GIVEN a peering WHEN the link block is derived THEN it is a link-local /30, the same each time, and the reverse peering gets another", () => {
    const link = tunnelLinkCidr("00000000000000bb", "00000000000000aa");
    expect(tunnelLinkCidr("00000000000000bb", "00000000000000aa").toString()).toBe(link.toString());
    expect(tunnelLinkCidr("00000000000000aa", "00000000000000bb").toString()).not.toBe(link.toString());
    expect(link.prefixLength).toBe(30);
    expect(Cidr.parse("169.254.0.0/16").contains(link.nth(0))).toBe(true);
    expect(link.nth(0)).not.toMatch(/^169\.254\.(0|255)\./);
    expect(tunnelAddress(link, "server")).toBe(`${link.nth(1)}/30`);
    expect(tunnelAddress(link, "client")).toBe(`${link.nth(2)}/30`);
  });

  test("GIVEN many pairs WHEN derived THEN blocks spread (few collisions among 200 pairs)", () => {
    const blocks = new Set(Array.from({ length: 200 }, (_, i) => tunnelLinkCidr("aa", `peer-${i}`).toString()));
    expect(blocks.size).toBeGreaterThan(195);
  });
});

describe("tunnel endpoint specs", () => {
  test("GIVEN the provider serving WHEN both specs are forged THEN only the client dials, with the server's address, and sends keepalives", () => {
    const provider = forgeTunnelEndpointSpec("provider", parties, settings, {
      publicKey: "K".repeat(43) + "=",
      podCidr: "10.101.0.0/16",
    });
    const consumer = forgeTunnelEndpointSpec("consumer", parties, settings, {});
    expect(provider).toMatchObject({
      remoteClusterId: "00000000000000bb",
      role: "server",
      listenPort: 51820,
      keepaliveSeconds: 0,
      remote: { podCidr: "10.101.0.0/16" },
    });
    expect(provider.remote.endpoint).toBeUndefined();
    expect(consumer).toMatchObject({
      remoteClusterId: "00000000000000aa",
      role: "client",
      keepaliveSeconds: 25,
      remote: { endpoint: "203.0.113.7:51820" },
    });
    expect(consumer.linkCidr).toBe(provider.linkCidr);
    expect(provider.inBandPorts).toBeUndefined();
    expect(consumer.inBandPorts).toBeUndefined();
    // The consumer's gateway serves its API server to the pods it offloads; the provider's serves nothing.
    expect(consumer.podApiPort).toBe(6443);
    expect(provider.podApiPort).toBeUndefined();
  });

  test("GIVEN in-band ports for the provider's side WHEN forged THEN its spec carries them, and an out-of-band spec none", () => {
    const ports = { apiServer: 6443, auth: 8443 };
    expect(forgeTunnelEndpointSpec("provider", parties, settings, {}, ports).inBandPorts).toEqual(ports);
    expect("inBandPorts" in forgeTunnelEndpointSpec("provider", parties, settings, {})).toBe(false);
  });

  test("GIVEN the consumer serving WHEN forged THEN the provider dials the consumer", () => {
    const provider = forgeTunnelEndpointSpec(
      "provider",
      parties,
      { ...settings, server: "consumer", serverAddress: "gw.example.com", port: 4500 },
      {},
    );
    expect(provider).toMatchObject({ role: "client", remote: { endpoint: "gw.example.com:4500" } });
  });

  test("GIVEN an IPv6 server address WHEN joined with the port THEN it is bracketed", () => {
    expect(joinHostPort("2001:db8::1", 51820)).toBe("[2001:db8::1]:51820");
  });

  test("GIVEN no server address WHEN the server announced an endpoint THEN the client dials it, and the server's own spec carries none", () => {
    const unset = { ...settings, serverAddress: undefined };
    const announced = { publicKey: "k", endpoint: "lb.example.com:31820" };
    expect(forgeTunnelEndpointSpec("consumer", parties, unset, announced).remote).toEqual(announced);
    expect(forgeTunnelEndpointSpec("consumer", parties, settings, announced).remote.endpoint).toBe(
      joinHostPort(settings.serverAddress!, settings.port),
    );
    expect(forgeTunnelEndpointSpec("provider", parties, unset, announced).remote).toEqual({ publicKey: "k" });
  });

  test("GIVEN no server address and nothing usable announced WHEN forged THEN the client dials nowhere, and dialedEndpoint says why", () => {
    const unset = { ...settings, serverAddress: undefined };
    expect(
      "endpoint" in forgeTunnelEndpointSpec("consumer", parties, unset, { endpoint: "127.0.0.1:51820" }).remote,
    ).toBe(false);
    expect(dialedEndpoint(unset, undefined)).toEqual({
      missing: "its gateway announces no endpoint where it is reached",
    });
    expect(dialedEndpoint(unset, "10.0.0.1:0")).toEqual({
      missing: "the endpoint its gateway announces is refused: its port is not 1-65535",
    });
    expect(dialedEndpoint(unset, "[2001:db8::7]:51820")).toEqual({ endpoint: "[2001:db8::7]:51820" });
  });
});

describe("endpoint readiness", () => {
  const endpoint = (generation: number, status: TunnelEndpoint["status"]): TunnelEndpoint =>
    ({
      apiVersion: "x",
      kind: "TunnelEndpoint",
      metadata: { generation },
      spec: {} as never,
      ...(status ? { status } : {}),
    }) as TunnelEndpoint;

  test("GIVEN a status of an older generation WHEN read THEN it is neither answered nor connected, and says so", () => {
    const readiness = endpointReadiness(
      endpoint(3, { observedGeneration: 2, phase: "Connected", publicKey: "k", podCidr: "10.0.0.0/16" }),
    );
    expect(readiness).toEqual({
      connected: false,
      answered: false,
      state: "gateway has not answered generation 3 yet (last answered 2)",
    });
  });

  test("GIVEN a current Pending status WHEN read THEN it is answered, not connected, and carries the gateway's reason", () => {
    const readiness = endpointReadiness(
      endpoint(3, {
        observedGeneration: 3,
        phase: "Pending",
        message: "no answer",
        publicKey: "k",
        podCidr: "10.0.0.0/16",
      }),
    );
    expect(readiness).toEqual({ connected: false, answered: true, state: "Pending: no answer" });
  });

  test("GIVEN a current Connected status WHEN read THEN it is connected; an absent endpoint is neither", () => {
    expect(
      endpointReadiness(
        endpoint(1, { observedGeneration: 1, phase: "Connected", publicKey: "k", podCidr: "10.0.0.0/16" }),
      ).connected,
    ).toBe(true);
    expect(endpointReadiness(undefined)).toEqual({ connected: false, answered: false, state: "absent" });
  });

  test(
    "GIVEN a current Refused status (even with keys from an earlier spec) WHEN read THEN it is refused with the gateway's " +
      "reason, neither answered nor connected; a stale one is only not answered yet",
    () => {
      const refused = {
        phase: "Refused" as const,
        message: "refused spec.linkCidr: not the derived block",
        publicKey: "k",
        podCidr: "10.0.0.0/16",
      };
      expect(endpointReadiness(endpoint(4, { ...refused, observedGeneration: 4 }))).toEqual({
        connected: false,
        answered: false,
        state: "Refused: refused spec.linkCidr: not the derived block",
        refused: "refused spec.linkCidr: not the derived block",
      });
      expect(endpointReadiness(endpoint(5, { ...refused, observedGeneration: 4 })).refused).toBeUndefined();
    },
  );
});
