import { provider as cluster } from "../../../../provider/resources/cluster.js";
import { UNKNOWN } from "../../../../provider/resources/inputs.js";
import { provider as peering, type PeeringInputs } from "../../../../provider/resources/peering.js";
import type { ClusterInputs } from "../../../../provider/resources/cluster.js";
import { forgeKubeconfig } from "../../../../provider/kube/kubeconfig.js";

const kubeconfig = forgeKubeconfig({ name: "x", server: "https://10.0.0.1:6443", caPem: "ca", certPem: "cert", keyPem: "key" });
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
    const bad = { ...goodCluster, name: "Not_A_Label", kubeconfig: "apiVersion: v1\nkind: Config\nsecret-ish: 1", podCidr: "10.1.2.3/16", serviceCidr: "nope", gateway: { port: 70000 }, timeoutSeconds: -1 };
    const { failures } = await cluster.check!(goodCluster, bad);
    expect(failures!.map((f) => f.property)).toEqual(["name", "kubeconfig", "podCidr", "serviceCidr", "gateway.port", "timeoutSeconds"]);
    expect(failures!.find((f) => f.property === "kubeconfig")!.reason).toMatch(/^Cluster "Not_A_Label": kubeconfig: not a usable kubeconfig/);
    expect(JSON.stringify(failures)).not.toContain("secret-ish");
  });

  test("GIVEN unknown inputs during preview WHEN checked THEN they are not judged", async () => {
    const unknown = { ...goodCluster, kubeconfig: UNKNOWN, podCidr: UNKNOWN } as ClusterInputs;
    expect((await cluster.check!(goodCluster, unknown)).failures).toEqual([]);
  });
});

describe("Peering check", () => {
  test("GIVEN a consumer peering with itself WHEN checked THEN it fails on provider", async () => {
    const self = { ...goodPeering, provider: { ...goodPeering.provider, clusterId: "c1" } };
    expect((await peering.check!(goodPeering, self)).failures).toEqual([{ property: "provider", reason: "a cluster cannot peer with itself (consumer and provider are both cluster c1)" }]);
  });

  test("GIVEN a malformed consumer kubeconfig and a share mixed with fixed amounts WHEN checked THEN both are reported", async () => {
    const bad = { ...goodPeering, consumerKubeconfig: "{", resources: { sharePercent: 150, cpu: "lots" } };
    const { failures } = await peering.check!(goodPeering, bad);
    expect(failures!.map((f) => f.property)).toEqual(["consumerKubeconfig", "resources", "resources.sharePercent", "resources.cpu"]);
  });

  test("GIVEN the token changed WHEN diffed THEN nothing changes (rotation leaves peerings alone)", async () => {
    const olds = { ...goodPeering, provider: { clusterId: "p1", authUrl: "https://10.0.0.2:8443", authCaCert: "ca" }, virtualNodeName: "liqo-p", providerClusterName: "p" };
    const news = { ...goodPeering, provider: { ...goodPeering.provider, token: "rotated" } };
    expect(await peering.diff!("id", olds as never, news)).toEqual({ changes: false, replaces: [], deleteBeforeReplace: true });
  });

  test("GIVEN a new resource request WHEN diffed THEN it is an update in place; a new provider replaces", async () => {
    const olds = { ...goodPeering, provider: { clusterId: "p1", authUrl: "https://10.0.0.2:8443", authCaCert: "ca" }, virtualNodeName: "liqo-p", providerClusterName: "p" };
    expect(await peering.diff!("id", olds as never, { ...goodPeering, resources: { cpu: "3", memory: "4Gi", pods: 10 } })).toEqual({ changes: true, replaces: [], deleteBeforeReplace: true });
    expect((await peering.diff!("id", olds as never, { ...goodPeering, provider: { ...goodPeering.provider, clusterId: "p2" } })).replaces).toEqual(["provider.clusterId"]);
  });
});
