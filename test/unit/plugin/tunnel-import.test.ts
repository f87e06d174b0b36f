/**
 * `pulumi import` of a Tunnel, in pure parts: the settings read back from both sides'
 * TunnelEndpoint specs (the other way from how they were forged), what the reads give back as
 * inputs and outputs, and the refusals.
 */
import type { TunnelFound } from "../../../core/network-fabric/tunnel-lifecycle.js";
import {
  forgeTunnelEndpointSpec,
  settingsOfEndpoints,
  withTunnelDefaults,
  type TunnelSettingsInput,
} from "../../../core/network-fabric/tunnel-plan.js";
import { importedTunnel, type TunnelImport } from "../../../core/resources/tunnel-import.js";
import { A, B, CONSUMER, CONSUMER_SERVER, OUTGOING } from "../../support/import-fixtures.js";

const SERVER = CONSUMER_SERVER;
const parties = { consumer: { clusterId: B, clusterName: "b" }, provider: { clusterId: A, clusterName: "a" } };
const specsOf = (input: TunnelSettingsInput) => {
  const settings = withTunnelDefaults(input);
  return {
    consumer: forgeTunnelEndpointSpec("consumer", parties, settings, {}),
    provider: forgeTunnelEndpointSpec("provider", parties, settings, {}),
  };
};

describe("a tunnel's settings read back from its TunnelEndpoints", () => {
  test.each<TunnelSettingsInput>([
    { serverAddress: "172.29.1.10" },
    { serverAddress: "gw.example.com", port: 51999, mtu: 1380, keepaliveSeconds: 0 },
    { serverAddress: "2001:db8::7", server: "consumer", port: 443 },
  ])("GIVEN endpoints forged with %j WHEN read back THEN the same settings come out", (input) => {
    const { behindNat: _untraced, ...settings } = withTunnelDefaults(input);
    expect(settingsOfEndpoints(specsOf(input))).toEqual(settings);
  });

  test("GIVEN a client dialing what the server announces WHEN read back THEN no server address was given, unless it dials elsewhere", () => {
    const announced = "lb.example.com:31820";
    const specs = {
      ...specsOf({}),
      consumer: forgeTunnelEndpointSpec("consumer", parties, withTunnelDefaults({}), { endpoint: announced }),
    };
    const { behindNat: _untraced, ...settings } = withTunnelDefaults({});
    expect(settingsOfEndpoints(specs, { provider: announced })).toEqual(settings);
    const given = specsOf({ serverAddress: "172.29.1.10" });
    expect(settingsOfEndpoints(given, { provider: announced })).toMatchObject({ serverAddress: "172.29.1.10" });
  });

  test("GIVEN two servers, or a client that dials nothing WHEN read back THEN they are no tunnel's", () => {
    const specs = specsOf({ serverAddress: "172.29.1.10" });
    expect(settingsOfEndpoints({ ...specs, consumer: { ...specs.consumer, role: "server" } })).toBeUndefined();
    expect(settingsOfEndpoints({ ...specs, consumer: { ...specs.consumer, remote: {} } })).toBeUndefined();
  });
});

const asked: TunnelImport = {
  pair: `${B}-to-${A}`,
  consumerKubeconfig: "kubeconfig-text",
  label: `Tunnel import of ID "${B}-to-${A}@/k"`,
};
const end = { publicKey: "pk", podCidr: "10.1.0.0/16", remotePodCidrAsSeen: "10.2.0.0/16", interfaceName: "lqw1" };
const endpoint = (spec: unknown) => ({ apiVersion: "v", kind: "TunnelEndpoint" as const, metadata: {}, spec }) as never;
const specs = specsOf({ serverAddress: "172.29.1.10", port: 51823 });
const found: TunnelFound = {
  server: SERVER,
  consumer: CONSUMER,
  outgoing: OUTGOING,
  identity: true,
  endpoints: { consumer: endpoint(specs.consumer), provider: endpoint(specs.provider) },
  settings: settingsOfEndpoints(specs),
  drift: { problems: [], gone: false, record: { consumer: end, provider: { ...end, endpoint: "172.29.1.10:51823" } } },
};

describe("a Tunnel as its import finds it", () => {
  test("GIVEN a tunnel that is up WHEN imported THEN the inputs reproduce it, with the defaults left out, and it is Connected", () => {
    const imported = importedTunnel(asked, found);
    expect(imported.id).toBe(`${B}-to-${A}`);
    expect(imported.inputs).toEqual({
      consumerClusterId: B,
      providerClusterId: A,
      providerClusterName: "a",
      tenantNamespace: `tenant-${B}`,
      serverAddress: "172.29.1.10",
      port: 51823,
    });
    expect(imported.outputs).toMatchObject({ consumer: end, status: "Connected" });
    expect(imported.untraced).toContain("behindNat");
  });

  test.each<[string, TunnelImport, TunnelFound, string]>([
    ["no install", asked, { server: SERVER, identity: false }, "pulumi-liqo is not installed there"],
    [
      "a forged ID",
      { ...asked, pair: `${A}-to-${B}` },
      found,
      `the kubeconfig reaches cluster ${B}, not ${A}: refused`,
    ],
    ["no peering", asked, { ...found, outgoing: undefined }, "there is none: no peering, so no tunnel, with it"],
    [
      "an in-band peering",
      asked,
      { ...found, outgoing: { ...found.outgoing!, spec: { ...found.outgoing!.spec, inBand: {} as never } } },
      "an in-band peering builds its tunnel itself",
    ],
    ["no identity", asked, { ...found, identity: false }, "the consumer holds no identity for a"],
    [
      "the provider's side missing",
      asked,
      { ...found, endpoints: { consumer: found.endpoints!.consumer, provider: undefined } },
      "the provider side has none: there is no tunnel to import",
    ],
  ])("GIVEN %s WHEN imported THEN it is refused, naming the ID, the step and the endpoint", (_what, how, what, why) => {
    const attempt = () => importedTunnel(how, what);
    expect(attempt).toThrow(how.label);
    expect(attempt).toThrow(why);
  });
});
