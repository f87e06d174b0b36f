/**
 * Edges of a peering's life on real clusters: a share of free capacity that the provider's agent
 * recomputes when capacity changes (and the consumer's node follows), a `Cluster` that refuses to
 * be uninstalled while peerings use it, and an unpeer with the provider's auth service
 * unreachable, which fails naming it unless forced.
 */
import * as k8s from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { clusterOf, setProfile, type LabState } from "../../local-cluster/lab.js";
import {
  ensurePeeringTokenSecret,
  forgePeeringToken,
  revokePeeringToken,
} from "../../provider/authentication/tokens.js";
import { uninstallCluster } from "../../provider/cluster/install.js";
import { deleteOptional, PROBE_TIMEOUT_MS } from "../../provider/kube/client.js";
import { createPeering, deletePeering, type PeeringRecord } from "../../provider/peering/peering.js";
import { progressTo } from "../../provider/peering/progress.js";
import { provider as clusterResource, type ClusterOutputs } from "../../provider/resources/cluster.js";
import { poll } from "../../provider/wait/poll.js";
import { adminConfig, installForPeering, type InstalledCluster } from "../../harness/install.js";
import { sharedLab } from "../../harness/labs.js";

const quiet = progressTo(() => undefined);
const WORKER = "worker-edges";

/** A real-looking node of the provider, whose allocatable capacity the test sets. */
async function setWorker(a: InstalledCluster, cpu: string, memory: string, pods: string): Promise<void> {
  const core = a.kc.makeApiClient(k8s.CoreV1Api);
  const existing = await core.readNode({ name: WORKER }).catch(() => undefined);
  if (!existing)
    await core.createNode({
      body: {
        metadata: { name: WORKER },
        status: { capacity: { cpu, memory, pods }, allocatable: { cpu, memory, pods } },
      },
    });
  else
    await core.patchNodeStatus(
      { name: WORKER, body: { status: { capacity: { cpu, memory, pods }, allocatable: { cpu, memory, pods } } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
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
  const token = forgePeeringToken();

  beforeAll(async () => {
    lab = await sharedLab();
    a = await installForPeering(clusterOf(lab, "a"));
    b = await installForPeering(clusterOf(lab, "b"));
    await ensurePeeringTokenSecret(a.kc, { tokenId: token.tokenId, secretHash: token.secretHash });
    await setWorker(a, "8", "16Gi", "110");
    record = await createPeering(
      {
        consumerKubeconfig: readFileSync(b.cluster.kubeconfig, "utf8"),
        provider: { clusterId: a.clusterId, authUrl: a.cluster.authUrl, authCaCert: a.caPem, token: token.token },
        resources: { sharePercent: 50 },
        timeoutMs: 90_000,
      },
      quiet,
    );
  });

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
    await deleteOptional(() => a.kc.makeApiClient(k8s.CoreV1Api).deleteNode({ name: WORKER }));
    await revokePeeringToken(a.kc, token.tokenId);
    await uninstallCluster(adminConfig(b.cluster));
    await uninstallCluster(adminConfig(a.cluster));
  });

  test(
    "GIVEN a share of free capacity WHEN the provider's capacity changes beyond the threshold THEN the offer is " +
      "recomputed and the virtual node follows",
    async () => {
      expect(record!.offer).toEqual({ cpu: "4", memory: "8Gi", pods: 55 });
      await setWorker(a, "16", "32Gi", "110");
      const core = b.kc.makeApiClient(k8s.CoreV1Api);
      // The provider's agent republishes within a second; the consumer's heartbeat follows within ~10 s.
      const capacity = await poll(
        { step: "test", object: `Node ${record!.virtualNodeName} resized`, endpoint: b.cluster.apiServerUrl },
        { timeoutMs: 45_000, intervalMs: 500 },
        async () => {
          const node = await core.readNode({ name: record!.virtualNodeName });
          return node.status?.capacity?.["cpu"] === "8"
            ? { done: true, value: node.status.capacity }
            : { done: false, state: JSON.stringify(node.status?.capacity) };
        },
      );
      expect(capacity).toEqual({ cpu: "8", memory: "16Gi", pods: "55" });
    },
  );

  test("GIVEN peerings using both clusters WHEN their Cluster resources are deleted THEN each refuses, naming the peering", async () => {
    await expect(clusterResource.delete!(b.clusterId, clusterProps(b))).rejects.toThrow(
      /Cluster "b" .* is still used by: outgoing peering to a .*set force: true/,
    );
    await expect(clusterResource.delete!(a.clusterId, clusterProps(a))).rejects.toThrow(
      new RegExp(`Cluster "a" .* is still used by: incoming peering from consumer ${b.clusterId}`),
    );
  });

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
  );
});
