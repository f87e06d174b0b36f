import { pulumiProvider as cluster } from "../../../../core/resources/cluster.js";
import { UNKNOWN } from "../../../../core/resources/inputs.js";
import { pulumiProvider as peering, type PeeringInputs } from "../../../../core/resources/peering.js";
import type { ClusterInputs } from "../../../../core/resources/cluster.js";
import { forgeKubeconfig } from "../../../../core/kube/kubeconfig.js";
import { pulumiProvider as tunnel, type TunnelInputs } from "../../../../core/resources/tunnel.js";

/** The inputs the failures name: each reason starts with its input's name (no failure carries a property). */
function inputsNamed(failures: readonly { property: string; reason: string }[] | undefined): string[] {
  expect((failures ?? []).filter((f) => f.property !== "")).toEqual([]);
  return (failures ?? []).map((f) => f.reason.slice(0, f.reason.indexOf(": ")));
}

const kubeconfig = forgeKubeconfig({
  name: "x",
  server: "https://10.0.0.1:6443",
  caPem: "ca",
  certPem: "cert",
  keyPem: "key",
});
const goodCluster: ClusterInputs = { name: "a", kubeconfig, podCidr: "10.100.0.0/16", serviceCidr: "10.200.0.0/16" };
const goodPeering: PeeringInputs = {
  consumerKubeconfig: kubeconfig,
  consumerClusterId: "c1",
  provider: { clusterId: "p1", authUrl: "https://10.0.0.2:8443", authCaCert: "ca", token: "t" },
  resources: { cpu: "2", memory: "4Gi", pods: 10 },
};

describe("Cluster check", () => {
  test("GIVEN good inputs WHEN checked THEN no failures", async () => {
    expect((await cluster.check!(goodCluster, goodCluster)).failures).toEqual([]);
  });

  test("GIVEN every kind of bad input WHEN checked THEN each is reported by property, the kubeconfig never echoed", async () => {
    const bad = {
      ...goodCluster,
      name: "Not_A_Label",
      kubeconfig: "apiVersion: v1\nkind: Config\nsecret-ish: 1",
      podCidr: "10.1.2.3/16",
      serviceCidr: "nope",
      gateway: { port: 70000 },
      timeoutSeconds: -1,
    };
    const { failures } = await cluster.check!(goodCluster, bad);
    expect(inputsNamed(failures)).toEqual([
      "name",
      "kubeconfig",
      "podCidr",
      "serviceCidr",
      "gateway.port",
      "timeoutSeconds",
    ]);
    expect(failures!.find((f) => f.reason.startsWith("kubeconfig: "))!.reason).toMatch(
      /^kubeconfig: not a usable kubeconfig/,
    );
    expect(JSON.stringify(failures)).not.toContain("secret-ish");
  });

  test("GIVEN a deployed agent's bad inputs WHEN checked THEN each is named: image, exposures, node ports", async () => {
    const bad = {
      ...goodCluster,
      agent: { image: "registry.example.com/agent: 1", exposure: "hostPort", nodePort: 8443 },
      gateway: { exposure: "ClusterIP", nodePort: 70000 },
    } as unknown as ClusterInputs;
    const { failures } = await cluster.check!(goodCluster, bad);
    expect(inputsNamed(failures)).toEqual([
      "agent.image",
      "agent.exposure",
      "agent.nodePort",
      "gateway.exposure",
      "gateway.nodePort",
      "gateway.nodePort",
    ]);
    expect(failures!.map((f) => f.reason)).toContain(
      'agent.nodePort: a node port is taken only with agent.exposure "NodePort" (it is "hostPort")',
    );
    expect(failures!.map((f) => f.reason)).toContain(
      'gateway.exposure: "ClusterIP" is not one of LoadBalancer, NodePort, hostPort',
    );
    const good = {
      ...goodCluster,
      agent: { image: "pulumi-liqo.local/agent:0.1.0", exposure: "NodePort", nodePort: 8443 },
      gateway: { exposure: "hostPort", port: 51820 },
    } as ClusterInputs;
    expect((await cluster.check!(goodCluster, good)).failures).toEqual([]);
  });

  test("GIVEN a load-balancer class on a NodePort Service and a source range that is no CIDR WHEN checked THEN preview names both", async () => {
    const bad = {
      ...goodCluster,
      agent: { image: "pulumi-liqo.local/agent:0.1.0", exposure: "NodePort", loadBalancerClass: "example.com/lb" },
      gateway: { loadBalancerSourceRanges: ["everyone"], annotations: { "example.com/scheme": "internal" } },
    } as ClusterInputs;
    expect((await cluster.check!(goodCluster, bad)).failures!.map((f) => f.reason)).toEqual([
      "agent.loadBalancerClass: a NodePort Service has no load balancer to take it",
      'gateway.loadBalancerSourceRanges: "everyone" is not a CIDR',
    ]);
  });

  test("GIVEN unknown inputs during preview WHEN checked THEN they are not judged", async () => {
    const unknown = { ...goodCluster, kubeconfig: UNKNOWN, podCidr: UNKNOWN } as ClusterInputs;
    expect((await cluster.check!(goodCluster, unknown)).failures).toEqual([]);
  });
});

describe("Peering check", () => {
  test("GIVEN a consumer peering with itself WHEN checked THEN it fails on provider.clusterId", async () => {
    const self = { ...goodPeering, provider: { ...goodPeering.provider, clusterId: "c1" } };
    expect((await peering.check!(goodPeering, self)).failures).toEqual([
      {
        property: "",
        reason: "provider.clusterId: a cluster cannot peer with itself (consumer and provider are both cluster c1)",
      },
    ]);
  });

  test("GIVEN a malformed consumer kubeconfig and a share mixed with fixed amounts WHEN checked THEN both are reported", async () => {
    const bad = { ...goodPeering, consumerKubeconfig: "{", resources: { sharePercent: 150, cpu: "lots" } };
    const { failures } = await peering.check!(goodPeering, bad);
    expect(inputsNamed(failures)).toEqual([
      "consumerKubeconfig",
      "resources",
      "resources.sharePercent",
      "resources.cpu",
    ]);
  });

  test("GIVEN the token changed WHEN diffed THEN nothing changes (rotation leaves peerings alone)", async () => {
    const olds = {
      ...goodPeering,
      provider: { clusterId: "p1", authUrl: "https://10.0.0.2:8443", authCaCert: "ca" },
      virtualNodeName: "liqo-p",
      providerClusterName: "p",
    };
    const news = { ...goodPeering, provider: { ...goodPeering.provider, token: "rotated" } };
    expect(await peering.diff!("id", olds as never, news)).toEqual({
      changes: false,
      replaces: [],
      deleteBeforeReplace: true,
    });
  });

  test("GIVEN a new resource request WHEN diffed THEN it is an update in place; a new provider replaces", async () => {
    const olds = {
      ...goodPeering,
      provider: { clusterId: "p1", authUrl: "https://10.0.0.2:8443", authCaCert: "ca" },
      virtualNodeName: "liqo-p",
      providerClusterName: "p",
    };
    expect(
      await peering.diff!("id", olds as never, { ...goodPeering, resources: { cpu: "3", memory: "4Gi", pods: 10 } }),
    ).toEqual({ changes: true, replaces: [], deleteBeforeReplace: true });
    expect(
      (
        await peering.diff!("id", olds as never, {
          ...goodPeering,
          provider: { ...goodPeering.provider, clusterId: "p2" },
        })
      ).replaces,
    ).toEqual(["provider.clusterId"]);
  });
});

const goodTunnel: TunnelInputs = {
  consumerKubeconfig: kubeconfig,
  consumerClusterId: "c1",
  providerClusterId: "p1",
  providerClusterName: "p",
  tenantNamespace: "pulumi-liqo-tenant-c1",
  serverAddress: "203.0.113.7",
};

describe("Tunnel check and diff", () => {
  test("GIVEN good inputs WHEN checked THEN no failures", async () => {
    expect((await tunnel.check!(goodTunnel, goodTunnel)).failures).toEqual([]);
  });

  test("GIVEN both clusters behind NAT WHEN checked (as in preview) THEN it is refused, saying why", async () => {
    const { failures } = await tunnel.check!(goodTunnel, { ...goodTunnel, behindNat: ["consumer", "provider"] });
    expect(failures).toEqual([
      {
        property: "",
        reason: expect.stringMatching(/^behindNat: both clusters are behind NAT: neither gateway can be reached/),
      },
    ]);
  });

  test("GIVEN the provider behind NAT and serving by default WHEN checked THEN it asks for the consumer to serve; with it, nothing is wrong", async () => {
    const { failures } = await tunnel.check!(goodTunnel, { ...goodTunnel, behindNat: ["provider"] });
    expect(failures).toEqual([{ property: "", reason: expect.stringMatching(/^server: .*server: "consumer"/) }]);
    expect(
      (await tunnel.check!(goodTunnel, { ...goodTunnel, behindNat: ["provider"], server: "consumer" })).failures,
    ).toEqual([]);
  });

  test("GIVEN an empty server address and a bad port WHEN checked THEN both are named; none at all is the default", async () => {
    const { failures } = await tunnel.check!(goodTunnel, { ...goodTunnel, serverAddress: " ", port: 0 });
    expect(inputsNamed(failures)).toEqual(["serverAddress", "port"]);
    const { serverAddress: _given, ...unaddressed } = goodTunnel;
    expect((await tunnel.check!(goodTunnel, unaddressed)).failures).toEqual([]);
  });

  test("GIVEN a new port WHEN diffed THEN it changes in place; another provider replaces; unknown peering outputs in preview change nothing", async () => {
    const olds = { ...goodTunnel, status: "Connected" };
    expect(await tunnel.diff!("id", olds, { ...goodTunnel, port: 51821 })).toEqual({
      changes: true,
      replaces: [],
      deleteBeforeReplace: true,
    });
    expect((await tunnel.diff!("id", olds, { ...goodTunnel, providerClusterId: "p2" })).replaces).toEqual([
      "providerClusterId",
    ]);
    expect(
      (await tunnel.diff!("id", olds, { ...goodTunnel, consumerKubeconfig: UNKNOWN, providerClusterId: UNKNOWN }))
        .changes,
    ).toBe(false);
  });
});

describe("Peering check, in-band", () => {
  const inBand: PeeringInputs = {
    ...goodPeering,
    approach: "in-band",
    provider: undefined as never,
    providerKubeconfig: kubeconfig,
    tunnel: { serverAddress: "203.0.113.7" },
  };

  test("GIVEN both kubeconfigs and a tunnel WHEN checked THEN no failures", async () => {
    expect((await peering.check!(inBand, inBand)).failures).toEqual([]);
  });

  test("GIVEN no tunnel, an empty server address, a handover and both sides behind NAT WHEN checked THEN each but the absent tunnel is named", async () => {
    // Left out, the tunnel takes its defaults: the provider serves where its gateway says it is reached.
    expect((await peering.check!(inBand, { ...inBand, tunnel: undefined })).failures).toEqual([]);
    expect(inputsNamed((await peering.check!(inBand, { ...inBand, tunnel: { serverAddress: " " } })).failures)).toEqual(
      ["tunnel.serverAddress"],
    );
    expect(inputsNamed((await peering.check!(inBand, { ...inBand, provider: goodPeering.provider })).failures)).toEqual(
      ["provider"],
    );
    const natted = await peering.check!(inBand, {
      ...inBand,
      tunnel: { serverAddress: "x", behindNat: ["consumer", "provider"] },
    });
    expect(natted.failures).toEqual([
      { property: "", reason: expect.stringMatching(/^tunnel\.behindNat: both clusters are behind NAT/) },
    ]);
  });

  test("GIVEN out-of-band without a handover WHEN checked THEN it says what to give", async () => {
    const { failures } = await peering.check!(goodPeering, { ...goodPeering, provider: undefined as never });
    expect(failures).toEqual([
      {
        property: "",
        reason: expect.stringMatching(/^provider: .*PeeringToken's clusterId, authUrl, authCaCert and token/),
      },
    ]);
  });
});
