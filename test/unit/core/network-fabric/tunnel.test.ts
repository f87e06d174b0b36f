/**
 * What refresh says of a tunnel (tunnelProblems) and what a forced delete says stays on the
 * provider (tunnelLeftOnProvider): pure judgements over the two TunnelEndpoints, no cluster.
 */
import * as k8s from "@kubernetes/client-node";
import type { TunnelEndpoint } from "../../../../core/api/index.js";
import { HANDSHAKE_STALE_MS, tunnelProblems, type TunnelSides } from "../../../../core/network-fabric/tunnel.js";
import { tunnelLeftOnProvider } from "../../../../core/network-fabric/tunnel-delete.js";

const NOW = Date.parse("2026-11-23T10:00:00Z");
const CONSUMER_ID = "00000000000000bb";
const PROVIDER_ID = "00000000000000aa";

const sides: TunnelSides = {
  consumer: {
    kc: new k8s.KubeConfig(),
    namespace: "pulumi-liqo-system",
    party: { clusterId: CONSUMER_ID, clusterName: "b" },
  },
  provider: {
    kc: new k8s.KubeConfig(),
    namespace: `pulumi-liqo-tenant-${CONSUMER_ID}`,
    party: { clusterId: PROVIDER_ID, clusterName: "a" },
  },
};

/** An endpoint whose gateway answered its current generation Connected, dialing `remoteKey`, with a handshake `ageMs` old. */
function connected(name: string, ownKey: string, remoteKey: string, ageMs = 10_000): TunnelEndpoint {
  return {
    apiVersion: "peering.pulumi-liqo.dev/v1alpha1",
    kind: "TunnelEndpoint",
    metadata: { name, generation: 3 },
    spec: { remote: { publicKey: remoteKey } } as TunnelEndpoint["spec"],
    status: {
      phase: "Connected",
      observedGeneration: 3,
      publicKey: ownKey,
      podCidr: "10.1.0.0/16",
      latestHandshake: new Date(NOW - ageMs).toISOString(),
      rttMs: 0.4,
    },
  };
}
const consumerUp = (): TunnelEndpoint => connected(`to-${PROVIDER_ID}`, "keyB", "keyA");
const providerUp = (): TunnelEndpoint => connected(`to-${CONSUMER_ID}`, "keyA", "keyB");

describe("tunnelProblems", () => {
  test("GIVEN both gateways Connected to each other's keys with a recent handshake WHEN judged THEN there is no problem", () => {
    expect(tunnelProblems(sides, { consumer: consumerUp(), provider: providerUp() }, NOW)).toEqual([]);
  });

  test(
    "GIVEN the consumer's endpoint removed and the provider's still reporting Connected WHEN judged THEN both sides are " +
      "named: one gone, the other's Connected stale",
    () => {
      expect(tunnelProblems(sides, { consumer: undefined, provider: providerUp() }, NOW)).toEqual([
        `consumer b: its TunnelEndpoint pulumi-liqo-system/to-${PROVIDER_ID} is gone (that side of the tunnel was removed)`,
        "provider a: reports Connected, but the other side's TunnelEndpoint is gone: the report is stale",
      ]);
    },
  );

  test(
    "GIVEN the consumer's endpoint deleted while its gateway is away (finalizer holds it, status still Connected) WHEN " +
      "judged THEN it is not Connected",
    () => {
      const deleting = {
        ...consumerUp(),
        metadata: { ...consumerUp().metadata, deletionTimestamp: new Date(NOW - 60_000) },
      };
      expect(tunnelProblems(sides, { consumer: deleting, provider: providerUp() }, NOW)).toEqual([
        `consumer b: its TunnelEndpoint pulumi-liqo-system/to-${PROVIDER_ID} is being deleted (waiting for its gateway's finalizer)`,
      ]);
    },
  );

  test(
    "GIVEN the consumer's side made again with a new key that the provider's gateway does not dial yet WHEN judged THEN " +
      "the provider's Connected is stale",
    () => {
      const remade = connected(`to-${PROVIDER_ID}`, "keyB2", "keyA");
      expect(tunnelProblems(sides, { consumer: remade, provider: providerUp() }, NOW)).toEqual([
        "provider a: reports Connected to a key the other side's gateway no longer has (it announced a new one): the report is stale",
      ]);
    },
  );

  test("GIVEN a Connected whose handshake is older than WireGuard keeps a session WHEN judged THEN it is stale, with its age", () => {
    const old = connected(`to-${CONSUMER_ID}`, "keyA", "keyB", HANDSHAKE_STALE_MS + 60_000);
    expect(tunnelProblems(sides, { consumer: consumerUp(), provider: old }, NOW)).toEqual([
      `provider a: reports Connected, but its last handshake was ${(HANDSHAKE_STALE_MS + 60_000) / 1000} s ago: the report is stale (is its gateway running?)`,
    ]);
  });

  test("GIVEN a Connected without a handshake time (the gateway read none, its probe crossed) WHEN judged THEN the probe stands as proof", () => {
    const { latestHandshake: _none, ...status } = providerUp().status!;
    expect(tunnelProblems(sides, { consumer: consumerUp(), provider: { ...providerUp(), status } }, NOW)).toEqual([]);
  });

  test("GIVEN a gateway that has not answered the current generation WHEN judged THEN its state is the problem", () => {
    const behind = { ...consumerUp(), metadata: { ...consumerUp().metadata, generation: 4 } };
    expect(tunnelProblems(sides, { consumer: behind, provider: providerUp() }, NOW)).toEqual([
      "consumer b: gateway has not answered generation 4 yet (last answered 3)",
    ]);
  });
});

describe("tunnelLeftOnProvider", () => {
  test("GIVEN the provider's interface as last reported WHEN listed THEN the endpoint, interface, process and key Secret are named", () => {
    expect(tunnelLeftOnProvider(sides, "lqw1a2b3c4d")).toEqual([
      `TunnelEndpoint pulumi-liqo-tenant-${CONSUMER_ID}/to-${CONSUMER_ID}`,
      "WireGuard interface lqw1a2b3c4d with its routes and NAT rules, in the gateway of provider a",
      "the wireguard-go process serving lqw1a2b3c4d",
      "key Secret pulumi-liqo-system/wireguard-lqw1a2b3c4d",
    ]);
  });

  test("GIVEN a tunnel that never reported its interface WHEN listed THEN every part is still named, the interface as unknown", () => {
    expect(tunnelLeftOnProvider(sides, undefined)).toHaveLength(4);
    expect(tunnelLeftOnProvider(sides, undefined)[1]).toMatch(/never reported/);
  });
});
