/**
 * Each resource's diff against its table of reasons: every input is changed in turn (and the
 * nested and recorded cases each rule exists for), and whatever the diff reports must have a
 * rule with a reason, the effect the diff gives the engine, and an explanation that quotes no value.
 * Every rule must be reachable, and every input the diff does not look at is named here, with why.
 */
import type * as pulumi from "@pulumi/pulumi";
import { forgeKubeconfig } from "../../../../core/kube/kubeconfig.js";
import {
  CLUSTER_DIFF,
  clusterChanges,
  pulumiProvider as cluster,
  type ClusterInputs,
  type ClusterOutputs,
} from "../../../../core/resources/cluster.js";
import { explainChanges, type DiffRules, type FoundChanges } from "../../../../core/resources/diff-rules.js";
import { URN_INPUT } from "../../../../core/resources/hidden-inputs.js";
import { UNKNOWN } from "../../../../core/resources/inputs.js";
import {
  PEERING_DIFF,
  peeringChanges,
  pulumiProvider as peering,
  type PeeringInputs,
  type PeeringOutputs,
} from "../../../../core/resources/peering.js";
import {
  PEERING_TOKEN_DIFF,
  peeringTokenChanges,
  pulumiProvider as peeringToken,
  type PeeringTokenInputs,
  type PeeringTokenOutputs,
} from "../../../../core/resources/peering-token.js";
import {
  pulumiProvider as tunnel,
  TUNNEL_DIFF,
  tunnelChanges,
  type TunnelInputs,
  type TunnelOutputs,
} from "../../../../core/resources/tunnel.js";

const kubeconfig = forgeKubeconfig({
  name: "x",
  server: "https://10.0.0.1:6443",
  caPem: "ca-pem-1",
  certPem: "cert-pem-1",
  keyPem: "key-pem-1",
});
const providerKubeconfig = forgeKubeconfig({
  name: "y",
  server: "https://10.0.0.2:6443",
  caPem: "ca-pem-2",
  certPem: "cert-pem-2",
  keyPem: "key-pem-2",
});

/** The same input with another value of its kind; an object or array changes in its first element. */
function mutated(value: unknown): unknown {
  if (value === undefined) return "changed";
  if (typeof value === "string") return `${value}-changed`;
  if (typeof value === "number") return value + 1;
  if (typeof value === "boolean") return !value;
  if (Array.isArray(value)) return [...value, value[0] ?? "changed"];
  const [first, ...rest] = Object.entries(value as object);
  return Object.fromEntries([[first![0], mutated(first![1])], ...rest]);
}

/** Values an explanation must never quote: any with a digit (addresses, ids, CIDRs, tokens) or long (kubeconfigs, PEM). */
function quotableValues(value: unknown): string[] {
  if (typeof value === "string") return /\d/.test(value) || value.length > 20 ? [value] : [];
  if (value && typeof value === "object") return Object.values(value).flatMap(quotableValues);
  return [];
}

/** A change to try: how olds and news differ from the resource's full sample. */
interface Variation<O, N> {
  readonly name: string;
  readonly olds: O;
  readonly news: N;
  /** Why this variation is no change, when it is none. */
  readonly unchanged?: string;
}

interface Subject<O extends object, N extends object> {
  readonly kind: string;
  readonly rules: DiffRules<O, N>;
  readonly changes: (olds: O, news: N) => FoundChanges;
  readonly provider: pulumi.dynamic.ResourceProvider<N, O>;
  /** Every input, set (the type makes a new input show up here). */
  readonly inputs: N;
  /** The state those inputs left. */
  readonly outputs: O;
  /** Top-level inputs the diff does not look at in this sample, with why. */
  readonly ignored: Readonly<Record<string, string>>;
  /** Cases the top-level changes do not reach: nested inputs, state recorded by refresh. */
  readonly more: (sample: { olds: O; news: N }) => Variation<O, N>[];
}

function variationsOf<O extends object, N extends object>(subject: Subject<O, N>): Variation<O, N>[] {
  const { inputs: news, outputs: olds } = subject;
  const topLevel = Object.keys(news).map((key) => ({
    name: key,
    olds,
    news: { ...news, [key]: mutated((news as Record<string, unknown>)[key]) },
  }));
  const renamed = {
    name: URN_INPUT,
    olds,
    news: { ...news, [URN_INPUT]: "urn:pulumi:dev::p::t::renamed" },
    unchanged: "the SDK's hidden input: a renamed resource has nothing else to update",
  };
  return [
    ...topLevel.map((v) => (v.name in subject.ignored ? { ...v, unchanged: subject.ignored[v.name]! } : v)),
    renamed,
    ...subject.more({ olds, news }),
  ];
}

function describeDiff<O extends object, N extends object>(subject: Subject<O, N>): void {
  describe(`${subject.kind} diff and its reasons`, () => {
    const variations = variationsOf(subject);

    test(
      "GIVEN every input changed in turn WHEN diffed THEN what the diff reports has a rule with a reason, the effect the " +
        "engine is told, and an explanation quoting no value",
      async () => {
        for (const variation of variations) {
          const found = subject.changes(variation.olds, variation.news);
          const result = await subject.provider.diff!("the-resource-id", variation.olds, variation.news);
          for (const key of found.changed)
            expect([variation.name, key, (subject.rules[key]?.reason ?? "").trim() !== ""]).toEqual([
              variation.name,
              key,
              true,
            ]);
          expect([variation.name, result.changes, result.replaces ?? []]).toEqual([
            variation.name,
            found.changed.length > 0,
            found.changed.filter((key) => subject.rules[key]!.effect === "replaces"),
          ]);
          const lines = explainChanges({
            kind: subject.kind,
            label: "the-resource-id",
            ...found,
            deleteBeforeReplace: result.deleteBeforeReplace ?? false,
            reasons: subject.rules,
          });
          expect(lines).toHaveLength(found.changed.length);
          for (const line of lines)
            expect([variation.name, line]).toEqual([variation.name, expect.stringMatching(/ → [^:]+: \S/)]);
          for (const value of quotableValues([variation.olds, variation.news]))
            expect([variation.name, lines.filter((line) => line.includes(value))]).toEqual([variation.name, []]);
        }
      },
    );

    test("GIVEN every input changed in turn WHEN diffed THEN each reports a change unless named as ignored, and the URN the SDK passes never does", () => {
      for (const variation of variations) {
        const changed = subject.changes(variation.olds, variation.news).changed;
        expect([variation.name, changed.length > 0]).toEqual([variation.name, variation.unchanged === undefined]);
      }
    });

    test("GIVEN the rules WHEN every change is tried THEN each rule is reached (none is stale)", () => {
      const reached = new Set(
        variations.flatMap((variation) => subject.changes(variation.olds, variation.news).changed),
      );
      expect(Object.keys(subject.rules).filter((key) => !reached.has(key))).toEqual([]);
    });
  });
}

const clusterInputs: Required<ClusterInputs> = {
  name: "alpha",
  kubeconfig,
  podCidr: "10.100.0.0/16",
  serviceCidr: "10.200.0.0/16",
  externalCidr: "10.220.0.0/24",
  apiServerUrl: "https://198.51.100.1:6443",
  authService: { address: "198.51.100.2", port: 8443 },
  gateway: { address: "198.51.100.3", port: 51820 },
  agent: { image: "registry.example/agent:1", exposure: "LoadBalancer" },
  timeoutSeconds: 300,
  force: false,
};
describeDiff<ClusterOutputs, ClusterInputs>({
  kind: "Cluster",
  rules: CLUSTER_DIFF,
  changes: clusterChanges,
  provider: cluster,
  inputs: clusterInputs,
  outputs: {
    ...clusterInputs,
    clusterId: "00000000000000aa",
    authUrl: "https://198.51.100.2:8443",
    authCaCert: "auth-ca-pem-1",
    gatewayEndpoint: "198.51.100.3:51820",
  },
  ignored: {},
  more: () => [],
});

const tokenInputs: Required<PeeringTokenInputs> = {
  kubeconfig,
  clusterId: "00000000000000aa",
  authUrl: "https://198.51.100.2:8443",
  authCaCert: "auth-ca-pem-1",
  expiresInSeconds: 3600,
  rotation: "1",
  force: false,
};
describeDiff<PeeringTokenOutputs, PeeringTokenInputs>({
  kind: "PeeringToken",
  rules: PEERING_TOKEN_DIFF,
  changes: peeringTokenChanges,
  provider: peeringToken,
  inputs: tokenInputs,
  outputs: {
    ...tokenInputs,
    token: "plt_0123456789abcdef_secret0",
    tokenId: "0123456789abcdef",
    expiresAt: "2030-01-01T00:00:00.000Z",
  },
  ignored: {},
  more: () => [],
});

const handover = {
  clusterId: "00000000000000aa",
  authUrl: "https://198.51.100.2:8443",
  authCaCert: "auth-ca-pem-1",
  token: "plt_0123456789abcdef_secret0",
};
const peeringInputs: Required<PeeringInputs> = {
  consumerKubeconfig: kubeconfig,
  consumerClusterId: "00000000000000bb",
  approach: "out-of-band",
  provider: handover,
  providerKubeconfig,
  providerClusterId: "00000000000000aa",
  providerAuthUrl: "https://198.51.100.2:8443",
  tunnel: { serverAddress: "198.51.100.3", port: 51820 },
  resources: { cpu: "2", memory: "4Gi", pods: 20 },
  virtualNodeName: "liqo-alpha",
  labels: { zone: "z1" },
  taints: [{ key: "dedicated", value: "batch1", effect: "NoSchedule" }],
  timeoutSeconds: 300,
  force: false,
};
const { token: _token, ...handedOver } = handover;
const peeringOutputs = (inputs: PeeringInputs): PeeringOutputs => ({
  ...inputs,
  provider: handedOver,
  providerClusterName: "alpha",
  tenantNamespace: "pulumi-liqo-tenant-00000000000000bb",
  status: "Ready",
});
/** The rules that apply to one approach: the others are never reached there. */
const peeringRulesWithout = (inputs: readonly string[]) =>
  Object.fromEntries(Object.entries(PEERING_DIFF).filter(([key]) => !inputs.includes(key)));
const drifted = ({
  olds,
  news,
}: {
  olds: PeeringOutputs;
  news: PeeringInputs;
}): Variation<PeeringOutputs, PeeringInputs> => ({
  name: "status recorded by refresh",
  olds: { ...olds, status: "virtual node liqo-alpha: node not found" },
  news,
});
describeDiff<PeeringOutputs, PeeringInputs>({
  kind: "Peering",
  rules: peeringRulesWithout(["providerClusterId"]),
  changes: peeringChanges,
  provider: peering,
  inputs: peeringInputs,
  outputs: peeringOutputs(peeringInputs),
  ignored: { providerClusterId: "out-of-band, provider.clusterId says which cluster provides" },
  more: (sample) => [
    {
      name: "provider.authUrl",
      olds: sample.olds,
      news: { ...sample.news, provider: { ...handover, authUrl: "https://198.51.100.9:8443" } },
    },
    {
      name: "provider.authCaCert",
      olds: sample.olds,
      news: { ...sample.news, provider: { ...handover, authCaCert: "auth-ca-pem-2" } },
    },
    {
      name: "provider.token",
      olds: sample.olds,
      news: { ...sample.news, provider: { ...handover, token: "plt_fedcba9876543210_secret1" } },
      unchanged: "a rotated token must not touch a peering that exists",
    },
    {
      name: "consumerClusterId unknown in preview",
      olds: sample.olds,
      news: { ...sample.news, consumerClusterId: UNKNOWN },
      unchanged: "the consumer's Cluster updates (a new agent image): its id stays, the peering must not be replaced",
    },
    {
      name: "virtualNodeName left to its default",
      olds: sample.olds,
      news: { ...sample.news, virtualNodeName: undefined as never },
      unchanged: "the default resolves to the name the node has",
    },
    drifted(sample),
    {
      name: "status of a peering that stands with an empty offer",
      olds: {
        ...sample.olds,
        status: "Ready, with an empty offer: the provider offers no pods (cpu 1, memory 1Gi, pods 0)",
      },
      news: sample.news,
      unchanged: "an empty offer is the provider's answer, which up cannot change: a warning, not drift",
    },
  ],
});

const inBandInputs = {
  ...peeringInputs,
  approach: "in-band",
  provider: undefined,
} as unknown as Required<PeeringInputs>;
describeDiff<PeeringOutputs, PeeringInputs>({
  kind: "Peering",
  rules: peeringRulesWithout(["provider.clusterId", "provider.authUrl", "provider.authCaCert"]),
  changes: peeringChanges,
  provider: peering,
  inputs: inBandInputs,
  outputs: { ...peeringOutputs(inBandInputs), provider: undefined as never },
  ignored: { provider: "in-band, the provider is reached with its own kubeconfig (check refuses a handover)" },
  more: (sample) => [drifted(sample)],
});

const tunnelInputs: Required<TunnelInputs> = {
  consumerKubeconfig: kubeconfig,
  consumerClusterId: "00000000000000bb",
  providerClusterId: "00000000000000aa",
  providerClusterName: "alpha",
  tenantNamespace: "pulumi-liqo-tenant-00000000000000bb",
  timeoutSeconds: 300,
  server: "provider",
  serverAddress: "198.51.100.3",
  port: 51820,
  mtu: 1420,
  keepaliveSeconds: 25,
  behindNat: ["consumer"],
  force: false,
};
describeDiff<TunnelOutputs, TunnelInputs>({
  kind: "Tunnel",
  rules: TUNNEL_DIFF,
  changes: tunnelChanges,
  provider: tunnel,
  inputs: tunnelInputs,
  outputs: { ...tunnelInputs, status: "Connected" },
  ignored: { providerClusterName: "the Peering records the provider's name at create and never changes it" },
  more: ({ olds, news }) => [
    { name: "status recorded by refresh", olds: { ...olds, status: "consumer gateway: no handshake" }, news },
  ],
});
