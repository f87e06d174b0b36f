/**
 * Edges of a peering's life on real clusters: a share of free capacity that the provider's agent
 * recomputes when a pod takes some of its node (and the consumer's node follows), a `Cluster` that refuses to
 * be uninstalled while peerings use it, and an unpeer with the provider's auth service
 * unreachable, which fails naming it unless forced.
 */
import * as k8s from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { clusterOf, setProfile, type LabState } from "../../local-cluster/lab.js";
import { ensurePeeringTokenSecret, forgePeeringToken, revokePeeringToken } from "../../core/authentication/tokens.js";
import { deleteOptional, PROBE_TIMEOUT_MS } from "../../core/kube/client.js";
import { createPeering, deletePeering, type PeeringRecord } from "../../core/peering/peering.js";
import { progressTo } from "../../core/operation/progress.js";
import { pulumiProvider as clusterResource, type ClusterOutputs } from "../../core/resources/cluster.js";
import { poll } from "../../core/wait/poll.js";
import { getFreeCapacity } from "../../agent/offer-answering.js";
import { imageReference } from "../../local-cluster/node-images.js";
import { computeOffer, type Capacity } from "../../core/negotiation/offer.js";
import { VIRTUAL_NODE_LABEL } from "../../core/virtual-node/node.js";
import { installForPeering, uninstallClusters, type InstalledCluster } from "../../harness/install.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";

/** Each test's bound: a peering's resize, a refused Cluster delete and an unpeer that fails within one probe. */
const TEST_BOUND_MS = 3 * 60_000;
/** The bound of this file's set-up and clean-up: both installs and a peering (its own steps bounded), or their removal. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS + 300_000;

const quiet = progressTo(() => undefined);
const MIB = 2 ** 20;
/** The pod that takes a share of the provider's capacity. */
const HOG = "capacity-hog";

/**
 * A pod bound to the provider's real node `node`, asking for `cpu` and `memory`: it takes that much
 * of the free capacity (its requests count once it is bound, running or not).
 */
async function takeCapacity(a: InstalledCluster, node: string, cpu: string, memory: string): Promise<void> {
  await a.kc.makeApiClient(k8s.CoreV1Api).createNamespacedPod({
    namespace: "default",
    body: {
      metadata: { name: HOG },
      spec: {
        nodeName: node,
        containers: [
          {
            name: "hog",
            image: imageReference("podtool"),
            imagePullPolicy: "Never",
            args: ["pause"],
            resources: { requests: { cpu, memory } },
          },
        ],
      },
    },
  });
}

function clusterProps(installed: InstalledCluster): ClusterOutputs {
  const c = installed.cluster;
  return {
    name: c.name,
    kubeconfig: installed.kubeconfig,
    podCidr: c.podCidr,
    serviceCidr: c.serviceCidr,
    clusterId: installed.clusterId,
    apiServerUrl: c.apiServerUrl,
    authUrl: c.authUrl,
    authCaCert: installed.caPem,
    gatewayEndpoint: `${c.publicAddress}:51820`,
  };
}

describe("peering edges", () => {
  let lab: LabState;
  let a: InstalledCluster;
  let b: InstalledCluster;
  let record: PeeringRecord | undefined;
  /** The provider's free capacity before the peering. */
  let free: Capacity;
  const token = forgePeeringToken();

  beforeAll(async () => {
    lab = await sharedLab();
    a = await installForPeering(clusterOf(lab, "a"));
    b = await installForPeering(clusterOf(lab, "b"));
    await ensurePeeringTokenSecret(a.kc, { tokenId: token.tokenId, secretHash: token.secretHash });
    free = await getFreeCapacity(a.kc);
    record = await createPeering(
      {
        consumerKubeconfig: readFileSync(b.cluster.kubeconfig, "utf8"),
        provider: { clusterId: a.clusterId, authUrl: a.cluster.authUrl, authCaCert: a.caPem, token: token.token },
        resources: { sharePercent: 50 },
        timeoutMs: 90_000,
      },
      quiet,
    );
  }, HOOK_BOUND_MS);

  afterAll(async () => {
    await setProfile(lab, "open");
    if (record)
      await deletePeering(
        b.kubeconfig,
        record,
        { authUrl: a.cluster.authUrl, authCaCert: a.caPem },
        { force: true, timeoutMs: 20_000 },
        quiet,
      ).catch(() => undefined);
    await deleteOptional(() =>
      a.kc.makeApiClient(k8s.CoreV1Api).deleteNamespacedPod({ name: HOG, namespace: "default", gracePeriodSeconds: 0 }),
    );
    await revokePeeringToken(a.kc, token.tokenId);
    await uninstallClusters([b.cluster, a.cluster], { keepDefinitions: true });
  }, HOOK_BOUND_MS);

  test(
    "GIVEN a share of free capacity WHEN the provider's capacity changes beyond the threshold THEN the offer is " +
      "recomputed and the virtual node follows",
    async () => {
      // Half of the free capacity of a's real node(s).
      expect(free.pods).toBeGreaterThan(0);
      expect(record!.offer).toEqual(computeOffer({ sharePercent: 50 }, free));
      // A pod takes half of the free cpu and a quarter of the memory: the offer shrinks beyond the threshold.
      const node = (await a.kc.makeApiClient(k8s.CoreV1Api).listNode()).items.find(
        (n) => n.metadata?.labels?.[VIRTUAL_NODE_LABEL] !== "true",
      )!.metadata!.name!;
      const taken = {
        cpuMillis: Math.floor(free.cpuMillis / 2),
        memoryBytes: Math.floor(free.memoryBytes / 4 / MIB) * MIB,
      };
      await takeCapacity(a, node, `${taken.cpuMillis}m`, `${taken.memoryBytes / MIB}Mi`);
      const expected = computeOffer(
        { sharePercent: 50 },
        {
          cpuMillis: free.cpuMillis - taken.cpuMillis,
          memoryBytes: free.memoryBytes - taken.memoryBytes,
          pods: free.pods - 1,
        },
      );
      const core = b.kc.makeApiClient(k8s.CoreV1Api);
      // The provider's agent republishes within a second; the consumer's heartbeat follows within ~10 s.
      const capacity = await poll(
        { step: "test", object: `Node ${record!.virtualNodeName} resized`, endpoint: b.cluster.apiServerUrl },
        { timeoutMs: 45_000, intervalMs: 500 },
        async () => {
          const node = await core.readNode({ name: record!.virtualNodeName });
          return node.status?.capacity?.["cpu"] === expected.cpu
            ? { done: true, value: node.status.capacity }
            : { done: false, state: JSON.stringify(node.status?.capacity) };
        },
      );
      expect(capacity).toEqual({ cpu: expected.cpu, memory: expected.memory, pods: String(expected.pods) });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN peerings using both clusters WHEN their Cluster resources are deleted THEN each refuses, naming the peering",
    async () => {
      await expect(clusterResource.delete!(b.clusterId, clusterProps(b))).rejects.toThrow(
        /Cluster "b": delete failed: uninstall: the cluster at .* is still used by: outgoing peering to a .*set force: true/,
      );
      await expect(clusterResource.delete!(a.clusterId, clusterProps(a))).rejects.toThrow(
        new RegExp(
          `Cluster "a": delete failed: uninstall: the cluster at .* is still used by: incoming peering from consumer ${b.clusterId}`,
        ),
      );
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN the provider's auth service unreachable WHEN unpeered THEN it fails within one probe naming the endpoint and " +
      "the cause, and with force cleans the consumer and says what stays",
    async () => {
      // gateway-only: from the host only the API servers answer; the auth service does not.
      await setProfile(lab, "gateway-only");
      const started = Date.now();
      // A deadline far longer than the probe: the answer must not wait for it.
      await expect(
        deletePeering(
          b.kubeconfig,
          record!,
          { authUrl: a.cluster.authUrl, authCaCert: a.caPem },
          { force: false, timeoutMs: 120_000 },
          quiet,
        ),
      ).rejects.toThrow(
        new RegExp(
          `^unpeer: provider a is unreachable: auth service ${a.cluster.authUrl.replace(/[.]/g, "\\.")}: timed out \\(.*\\)\\. ` +
            `Nothing was changed\\. .*set force: true on the Peering`,
        ),
      );
      expect(Date.now() - started).toBeLessThan(PROBE_TIMEOUT_MS + 2_000);
      expect((await b.kc.makeApiClient(k8s.CoreV1Api).readNode({ name: record!.virtualNodeName })).metadata?.name).toBe(
        record!.virtualNodeName,
      );

      const forced = Date.now();
      const left = await deletePeering(
        b.kubeconfig,
        record!,
        { authUrl: a.cluster.authUrl, authCaCert: a.caPem },
        { force: true, timeoutMs: 120_000 },
        quiet,
      );
      expect(Date.now() - forced).toBeLessThan(PROBE_TIMEOUT_MS + 5_000);
      // The API server answers: the request is withdrawn; the rest stays, each part named.
      expect(left).toEqual([
        `tenant namespace ${record!.tenantNamespace}`,
        expect.stringMatching(new RegExp(`^Role and RoleBinding ${record!.tenantNamespace}/pulumi-liqo-consumer `)),
        `ResourceOffer ${record!.tenantNamespace}/${record!.requestName} (the ResourceRequest was withdrawn)`,
        `CertificateSigningRequests labelled peering.pulumi-liqo.dev/remote-cluster-id=${record!.consumerClusterId}`,
      ]);
      expect(
        await b.kc
          .makeApiClient(k8s.CoreV1Api)
          .readNode({ name: record!.virtualNodeName })
          .then(
            () => "present",
            () => "gone",
          ),
      ).toBe("gone");
      record = undefined;
    },
    TEST_BOUND_MS,
  );
});
