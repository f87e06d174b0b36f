/**
 * What a consumer may ask of the provider's gateway, tried as an attacker would: with nothing but
 * consumer b's own identity on provider a (the identity Secret b's peering stores), on real
 * clusters, real gateways and real WireGuard. b first has its one legitimate tunnel; then it
 * patches that tunnel's spec to steer a's routes (issue 10, hole 2) and creates more tunnels
 * (hole 3). Each attempt must be refused in the endpoint's status with a reason naming the field,
 * and nothing may change on a: same links, processes, routes, rules, NAT rules, key Secrets and
 * UDP listeners, and the legitimate tunnel still carries traffic.
 */
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  API_VERSION,
  API_GROUP_VERSION,
  type TunnelEndpoint,
  type TunnelEndpointSpec,
} from "../../core/api/index.js";
import { runIn, type CommandError } from "../../host/exec.js";
import { Cidr, formatIpv4, parseIpv4 } from "../../core/net/cidr.js";
import { GATEWAY_FINALIZER, getTunnelEndpoint, type EndpointRef } from "../../core/network-fabric/endpoints.js";
import { translateAddress } from "../../core/network-fabric/remap.js";
import { endpointRefOf, ensureTunnel, readTunnel, type TunnelRecord } from "../../core/network-fabric/tunnel.js";
import { TUNNEL_DEFAULTS, tunnelEndpointName, type TunnelSettings } from "../../core/network-fabric/tunnel-plan.js";
import { poll } from "../../core/wait/poll.js";
import { addPodAddress, type ClusterState, type LabState } from "../../local-cluster/lab.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { tunnelTraces } from "../../harness/leaks.js";
import { pingReplies } from "../support/probes.js";
import { peerPair, quietProgress, unpeerPair, type Pair } from "../support/tunnel-pair.js";

/** Each test's bound: refused patches and creates with b's identity, and the gateway's answer to them. */
const TEST_BOUND_MS = 3 * 60_000;
/** The bound of this file's set-up and clean-up: a peering and its tunnel (their own steps bounded), or their removal. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS + 240_000;

const PLURAL = "tunnelendpoints";
/** A cluster id that is neither a's nor b's, as a third cluster c would have. */
const C_ID = "00000000c0ffee00";

/** The block of `prefixLength` holding `address`. */
const blockOf = (address: string, prefixLength: number): Cidr =>
  Cidr.parse(`${formatIpv4(parseIpv4(address) - (parseIpv4(address) % 2 ** (32 - prefixLength)))}/${prefixLength}`);

/** The UDP sockets listening in `netns`, by local address and port, sorted. */
async function udpListeners(netns: string): Promise<string[]> {
  const out = await runIn(netns, "ss", ["-H", "-u", "-l", "-n"]);
  return out
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => l.trim().split(/\s+/)[3] ?? l)
    .sort();
}

/** Everything a tunnel sets up in a's namespace and API, plus its UDP listeners: compared before and after. */
async function fabricOf(cluster: ClusterState): Promise<{ traces: string[]; udp: string[] }> {
  return { traces: (await tunnelTraces(cluster)).sort(), udp: await udpListeners(cluster.netns) };
}

/** The device `ip route get` picks for `address` in `netns`, or `unreachable` when no route leads there. */
async function routeDevice(netns: string, address: string): Promise<string> {
  const out = await runIn(netns, "ip", ["route", "get", address]).catch((error: CommandError) => {
    if (/Network is unreachable/.test(error.stderr)) return "unreachable";
    throw error;
  });
  return /\bdev (\S+)/.exec(out)?.[1] ?? out.trim();
}

/** Merge-patches an endpoint as `kc` (b's identity); resolves the generation the patch made. */
async function patchAs(kc: k8s.KubeConfig, ref: EndpointRef, body: object): Promise<number> {
  return (await mergePatchAs(kc, ref, body)).metadata.generation!;
}

/** Removes every finalizer of the endpoint as `kc`'s identity; returns the resulting resourceVersion. */
async function stripFinalizersAs(kc: k8s.KubeConfig, ref: EndpointRef): Promise<string> {
  return (await mergePatchAs(kc, ref, { metadata: { finalizers: null } })).metadata.resourceVersion!;
}

async function mergePatchAs(kc: k8s.KubeConfig, ref: EndpointRef, body: object): Promise<TunnelEndpoint> {
  return (await kc.makeApiClient(k8s.CustomObjectsApi).patchNamespacedCustomObject(
    {
      group: API_GROUP,
      version: API_VERSION,
      namespace: ref.namespace,
      plural: PLURAL,
      name: ref.name,
      body,
      fieldManager: "attacker",
    },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
  )) as TunnelEndpoint;
}

/** Creates an endpoint as `kc`; resolves its generation. */
async function createAs(kc: k8s.KubeConfig, ref: EndpointRef, spec: TunnelEndpointSpec): Promise<number> {
  const body: TunnelEndpoint = {
    apiVersion: API_GROUP_VERSION,
    kind: "TunnelEndpoint",
    metadata: { name: ref.name, namespace: ref.namespace },
    spec,
  };
  const created = (await kc.makeApiClient(k8s.CustomObjectsApi).createNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    namespace: ref.namespace,
    plural: PLURAL,
    body,
  })) as TunnelEndpoint;
  return created.metadata.generation!;
}

/** Waits until a's gateway has refused generation `generation` of the endpoint; resolves the endpoint. */
function refused(kc: k8s.KubeConfig, ref: EndpointRef, generation: number): Promise<TunnelEndpoint> {
  return poll(
    {
      step: "test",
      object: `refusal of TunnelEndpoint ${ref.namespace}/${ref.name} generation ${generation}`,
      endpoint: "a's gateway",
    },
    { timeoutMs: 30_000, intervalMs: 250 },
    async () => {
      const endpoint = await getTunnelEndpoint(kc, ref, "test");
      const status = endpoint?.status;
      return endpoint && status?.observedGeneration === generation && status.phase === "Refused"
        ? { done: true, value: endpoint }
        : {
            done: false,
            state: `generation ${endpoint?.metadata.generation ?? "-"}, status ${JSON.stringify(status ?? {})}`,
          };
    },
  );
}

describe("trust boundaries of the network fabric: b's identity against a's gateway", () => {
  let lab: LabState;
  let pair: Pair | undefined;
  let tunnel: TunnelRecord;
  let settings: TunnelSettings;
  /** A pod address in each cluster, and a's as b sees it. */
  let pods: { a: string; b: string; aFromB: string };

  beforeAll(async () => {
    lab = await sharedLab();
    pair = await peerPair(lab);
    settings = {
      server: "provider",
      serverAddress: pair.a.publicAddress,
      ...TUNNEL_DEFAULTS,
      port: 51831,
      behindNat: [],
    };
    tunnel = await ensureTunnel(pair.sides, settings, 60_000, quietProgress);
    const aReal = Cidr.parse(pair.a.podCidr).nth(70);
    pods = {
      a: aReal,
      b: Cidr.parse(pair.b.podCidr).nth(71),
      aFromB: translateAddress(aReal, Cidr.parse(pair.a.podCidr), Cidr.parse(tunnel.consumer.remotePodCidrAsSeen)),
    };
    await addPodAddress(lab, "a", pods.a);
    await addPodAddress(lab, "b", pods.b);
  }, HOOK_BOUND_MS);

  afterAll(async () => {
    if (!pair) return;
    await runIn(pair.a.netns, "ip", ["addr", "del", `${pods?.a}/32`, "dev", "pods"]).catch(() => undefined);
    await runIn(pair.b.netns, "ip", ["addr", "del", `${pods?.b}/32`, "dev", "pods"]).catch(() => undefined);
    await unpeerPair(pair);
  }, HOOK_BOUND_MS);

  /** The legitimate tunnel still works: b's gateway reports it up and a's pod answers b's across it. */
  async function expectTunnelStillUp(p: Pair): Promise<void> {
    const consumerSide = await getTunnelEndpoint(p.consumer.kc, endpointRefOf(p.sides, "consumer"), "test");
    expect(consumerSide?.status?.phase).toBe("Connected");
    expect(await pingReplies(p.b.netns, pods.b, pods.aFromB)).toMatch(/3 received/);
  }

  test(
    "GIVEN b's tunnel on a WHEN b's identity patches its link block to c's address or into a's pod CIDR, or its remote to " +
      "c THEN each is refused naming the field, a routes nothing new and the tunnel stays up; a claimed remote pod CIDR on a's host route is seen remapped",
    async () => {
      const p = pair!;
      const asB = p.sides.provider.kc;
      const ref = endpointRefOf(p.sides, "provider");
      const c = lab.hostAddress; // An address a reaches on its lab network, as it would reach a cluster c.
      const insidePods = Cidr.parse(p.a.podCidr).nth(9);
      const before = await fabricOf(p.a);
      expect(await routeDevice(p.a.netns, c)).not.toMatch(/^lqw/);

      const attempts = [
        { patch: { spec: { linkCidr: blockOf(c, 30).toString() } }, field: "spec.linkCidr", probe: c },
        {
          patch: { spec: { linkCidr: blockOf(insidePods, 30).toString() } },
          field: "spec.linkCidr",
          probe: insidePods,
        },
        { patch: { spec: { remoteClusterId: C_ID } }, field: "spec.remoteClusterId", probe: c },
      ];
      for (const { patch, field, probe } of attempts) {
        const generation = await patchAs(asB, ref, patch);
        const endpoint = await refused(asB, ref, generation);
        expect(endpoint.status?.message).toMatch(new RegExp(`^refused ${field.replace(".", "\\.")}: `));
        expect(await routeDevice(p.a.netns, probe)).not.toMatch(/^lqw/);
        expect(await fabricOf(p.a)).toEqual(before);
        await expectTunnelStillUp(p);
        // The consumer's own steps put the spec back; a's gateway serves it again, unchanged.
        const again = await ensureTunnel(p.sides, settings, 60_000, quietProgress);
        expect(again.provider.interfaceName).toBe(tunnel.provider.interfaceName);
        expect(await fabricOf(p.a)).toEqual(before);
      }

      // A remote pod CIDR on one of a's host routes (the lab network, where c is) is seen remapped.
      const claimed = blockOf(c, 24);
      const generation = await patchAs(asB, ref, { spec: { remote: { podCidr: claimed.toString() } } });
      const asSeen = await poll(
        { step: "test", object: `a's view of the claimed ${claimed}`, endpoint: "a's gateway" },
        { timeoutMs: 30_000, intervalMs: 250 },
        async () => {
          const status = (await getTunnelEndpoint(asB, ref, "test"))?.status;
          return status?.observedGeneration === generation && status.remotePodCidrAsSeen && status.phase !== "Error"
            ? { done: true, value: Cidr.parse(status.remotePodCidrAsSeen) }
            : { done: false, state: JSON.stringify(status ?? {}) };
        },
      );
      expect(asSeen.toString()).not.toBe(claimed.toString());
      expect(Cidr.parse("10.64.0.0/10").overlaps(asSeen)).toBe(true);
      expect(await routeDevice(p.a.netns, c)).not.toMatch(/^lqw/);
      expect(await routeDevice(p.a.netns, asSeen.nth(1))).toBe(tunnel.provider.interfaceName);
      const restored = await ensureTunnel(p.sides, settings, 60_000, quietProgress);
      expect(restored.provider.remotePodCidrAsSeen).toBe(p.b.podCidr);
      expect(await fabricOf(p.a)).toEqual(before);
      await expectTunnelStillUp(p);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN b's tunnel on a WHEN b's identity creates three more TunnelEndpoints THEN each is refused with a reason and a " +
      "starts no wireguard-go, UDP listener, key Secret or finalizer",
    async () => {
      const p = pair!;
      const asB = p.sides.provider.kc;
      // The legitimate tunnel as b's steps leave it, whatever an earlier test did to it.
      await ensureTunnel(p.sides, settings, 60_000, quietProgress);
      const own = (await getTunnelEndpoint(asB, endpointRefOf(p.sides, "provider"), "test"))!;
      const namespace = own.metadata.namespace!;
      const extras: { ref: EndpointRef; spec: TunnelEndpointSpec }[] = [
        { ref: { namespace, name: "extra-1" }, spec: { ...own.spec, listenPort: 51901 } },
        { ref: { namespace, name: "extra-2" }, spec: { ...own.spec, role: "client", listenPort: 51902 } },
        {
          ref: { namespace, name: tunnelEndpointName(C_ID) },
          spec: { ...own.spec, remoteClusterId: C_ID, listenPort: 51903 },
        },
      ];
      const before = await fabricOf(p.a);
      try {
        const generations = [];
        for (const { ref, spec } of extras) generations.push(await createAs(asB, ref, spec));
        for (const [i, { ref }] of extras.entries()) {
          const endpoint = await refused(asB, ref, generations[i]!);
          expect(endpoint.status?.message).toContain(
            `refused metadata.name: "${ref.name}": the only tunnel consumer ${p.consumer.clusterId} may ask for in ` +
              `${namespace} is its peering's, named ${own.metadata.name}`,
          );
          expect(endpoint.metadata.finalizers ?? []).not.toContain(GATEWAY_FINALIZER);
          expect(endpoint.status?.interfaceName).toBeUndefined();
        }
        expect(await fabricOf(p.a)).toEqual(before);
        expect((await readTunnel(p.sides, settings)).problems).toEqual([]);
        await expectTunnelStillUp(p);
      } finally {
        const api = asB.makeApiClient(k8s.CustomObjectsApi);
        for (const { ref } of extras) {
          await api
            .deleteNamespacedCustomObject({
              group: API_GROUP,
              version: API_VERSION,
              namespace: ref.namespace,
              plural: PLURAL,
              name: ref.name,
            })
            .catch(() => undefined);
        }
        await poll(
          { step: "test", object: "the extra TunnelEndpoints gone", endpoint: "a" },
          { timeoutMs: 30_000, intervalMs: 250 },
          async () => {
            const left = (await Promise.all(extras.map(({ ref }) => getTunnelEndpoint(asB, ref, "test")))).filter(
              (e) => e,
            );
            return left.length === 0
              ? { done: true, value: undefined }
              : { done: false, state: left.map((e) => e!.metadata.name).join(", ") };
          },
        );
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN b's tunnel on a WHEN b's identity strips the gateway's finalizer from its endpoint and deletes it THEN a's " +
      "gateway still takes the tunnel down: no interface, wireguard-go, key Secret or UDP listener is left",
    async () => {
      const p = pair!;
      const asB = p.sides.provider.kc;
      await ensureTunnel(p.sides, settings, 60_000, quietProgress);
      const ref = endpointRefOf(p.sides, "provider");
      const ifname = tunnel.provider.interfaceName;
      const mine = (traces: readonly string[]): string[] =>
        traces.filter((t) => t.includes(ifname) || t.includes(`:${settings.port}`));
      expect(mine([...(await tunnelTraces(p.a, [ifname])), ...(await udpListeners(p.a.netns))])).not.toEqual([]);

      // a's gateway puts its finalizer back as soon as it sees the strip; the delete is conditioned on the stripped
      // version, so it lands only on an endpoint without the finalizer, which the API server removes at once.
      await poll(
        { step: "test", object: `a stripped-then-deleted ${ref.name}`, endpoint: "a's API server" },
        { timeoutMs: 30_000, intervalMs: 100 },
        async () => {
          const resourceVersion = await stripFinalizersAs(asB, ref);
          try {
            await asB.makeApiClient(k8s.CustomObjectsApi).deleteNamespacedCustomObject({
              group: API_GROUP,
              version: API_VERSION,
              namespace: ref.namespace,
              plural: PLURAL,
              name: ref.name,
              body: { preconditions: { resourceVersion } },
            });
            return { done: true, value: undefined };
          } catch (err) {
            if ((err as { code?: number }).code === 409)
              return { done: false, state: "the gateway re-added its finalizer" };
            throw err;
          }
        },
      );
      expect(await getTunnelEndpoint(asB, ref, "test")).toBeUndefined();
      const left = await poll(
        { step: "test", object: `a's gateway taking down ${ifname} without its endpoint`, endpoint: "a's gateway" },
        { timeoutMs: 30_000, intervalMs: 250 },
        async () => {
          const traces = mine([...(await tunnelTraces(p.a, [ifname])), ...(await udpListeners(p.a.netns))]);
          return traces.length === 0 ? { done: true, value: traces } : { done: false, state: traces.join("; ") };
        },
      );
      expect(left).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
