/**
 * A `Cluster` without `podCidr` and `serviceCidr`, through its resource's own check, create and read
 * on real clusters: on the shared lab it reads both (the pod range the cluster declares in its
 * kubeadm-config, as kubeadm-built clusters do, and the API server's default ServiceCIDR), shows
 * them and where they came from in its outputs, records them, and peers; a node that joins with a
 * range outside the pod CIDR is what a refresh then reports. On a cluster whose nodes carry no pod
 * CIDR and that declares none (as EKS with the VPC CNI), preview's check and create both fail naming
 * `podCidr`, and create writes nothing.
 */
import * as k8s from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { ensurePeeringTokenSecret, forgePeeringToken, revokePeeringToken } from "../../core/authentication/tokens.js";
import { DEFAULT_AGENT_IMAGE } from "../../core/cluster/agent-image.js";
import { DEFAULT_GATEWAY_PORT } from "../../core/cluster/install-plan.js";
import { getClusterIdentity } from "../../core/cluster/install.js";
import { Cidr } from "../../core/net/cidr.js";
import { createPeering, deletePeering, type PeeringRecord } from "../../core/peering/peering.js";
import { progressTo } from "../../core/operation/progress.js";
import { pulumiProvider as cluster, type ClusterInputs } from "../../core/resources/cluster.js";
import { AUTH_SERVICE_PORT } from "../../local-cluster/control-plane.js";
import { clusterOf, type ClusterState } from "../../local-cluster/lab.js";
import { adminConfig, installForPeering, uninstallClusters } from "../../harness/install.js";
import { sharedLab, withLab } from "../../harness/labs.js";
import { projectTraces } from "../../harness/leaks.js";

/** Each test's bound: a Cluster's check and create on the shared lab, or a private lab's start for a cluster without pod CIDRs. */
const TEST_BOUND_MS = 5 * 60_000;

/** A Node made through the API (no kubelet behind it): what a refresh sees of a node that joined. */
const JOINED_NODE = "cidr-detection-joined";

/** A Cluster's inputs for a lab cluster as the tests deploy it (agent pods on the lab's node ports), no CIDRs. */
const inputsWithoutCidrs = (c: ClusterState): ClusterInputs => ({
  name: c.name,
  kubeconfig: readFileSync(c.kubeconfig, "utf8"),
  apiServerUrl: c.apiServerUrl,
  agent: { image: DEFAULT_AGENT_IMAGE, exposure: "NodePort", nodePort: AUTH_SERVICE_PORT },
  gateway: { exposure: "NodePort", nodePort: DEFAULT_GATEWAY_PORT },
  timeoutSeconds: 180,
});

describe("a Cluster's CIDRs detected", () => {
  test(
    "GIVEN the shared lab's cluster a and no CIDRs in its inputs WHEN checked and created THEN both are detected, " +
      "shown with their source, recorded, and b peers with it",
    async () => {
      const lab = await sharedLab();
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      const inputs = inputsWithoutCidrs(a);
      let record: PeeringRecord | undefined;
      let tokenId: string | undefined;
      let authCaCert = "";
      try {
        expect((await cluster.check!({} as ClusterInputs, inputs)).failures).toEqual([]);
        const outs = (await cluster.create!(inputs)).outs!;
        authCaCert = outs.authCaCert;

        // What the cluster declares: the whole pod range its nodes' /24s are cut from, and its service range.
        const core = adminConfig(a).makeApiClient(k8s.CoreV1Api);
        expect(outs.podCidr).toBe(a.podCidr);
        expect(outs.serviceCidr).toBe(a.serviceCidr);
        expect(outs.detectedFrom).toEqual({
          podCidr: "kubeadm's networking.podSubnet (kube-system/kubeadm-config)",
          serviceCidr: "ServiceCIDR kubernetes",
        });
        expect(outs.nodesOutsidePodCidr).toEqual([]);
        const identity = await getClusterIdentity(adminConfig(a));
        expect([identity?.podCidr, identity?.serviceCidr]).toEqual([outs.podCidr, outs.serviceCidr]);

        // A node that joins with a range outside it: a refresh (the resource's read) names it; once it is gone, none.
        const outside = "192.0.2.0/24";
        expect(Cidr.parse(outs.podCidr!).overlaps(Cidr.parse(outside))).toBe(false);
        await core.createNode({
          body: { metadata: { name: JOINED_NODE }, spec: { podCIDR: outside, podCIDRs: [outside] } },
        });
        try {
          const refreshed = await cluster.read!(outs.clusterId, outs);
          expect(refreshed.props?.nodesOutsidePodCidr).toEqual([`${JOINED_NODE} ${outside}`]);
          expect(refreshed.props?.podCidr).toBe(outs.podCidr);
        } finally {
          await core.deleteNode({ name: JOINED_NODE });
        }
        expect((await cluster.read!(outs.clusterId, outs)).props?.nodesOutsidePodCidr).toEqual([]);

        // It peers as any cluster does: b consumes from it with a token and its outputs.
        const consumer = await installForPeering(b);
        const token = forgePeeringToken();
        tokenId = token.tokenId;
        await ensurePeeringTokenSecret(adminConfig(a), { tokenId: token.tokenId, secretHash: token.secretHash });
        record = await createPeering(
          {
            consumerKubeconfig: consumer.kubeconfig,
            provider: {
              clusterId: outs.clusterId,
              authUrl: outs.authUrl,
              authCaCert: outs.authCaCert,
              token: token.token,
            },
            resources: { cpu: "1", memory: "1Gi", pods: 5 },
            timeoutMs: 90_000,
          },
          progressTo(() => {}),
        );
        expect(record.offer).toEqual({ cpu: "1", memory: "1Gi", pods: 5 });
        const node = await adminConfig(b).makeApiClient(k8s.CoreV1Api).readNode({ name: record.virtualNodeName });
        expect(node.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
      } finally {
        try {
          // Unpeered as a Peering's delete does: both sides reachable, so no force.
          if (record)
            await deletePeering(
              readFileSync(b.kubeconfig, "utf8"),
              record,
              { authUrl: a.authUrl, authCaCert },
              { force: false, timeoutMs: 60_000 },
              progressTo(() => {}),
            );
        } finally {
          if (tokenId) await revokePeeringToken(adminConfig(a), tokenId);
          await uninstallClusters([b, a]);
        }
      }
      for (const c of [a, b]) expect(await projectTraces(c.kubeconfig)).toEqual([]);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a cluster whose nodes carry no pod CIDR (as EKS with the VPC CNI) WHEN checked and created without podCidr " +
      "THEN both fail naming podCidr, and nothing is written",
    async () => {
      // A private lab: the shared lab's nodes carry their ranges, and a Node's spec.podCIDR cannot be removed.
      await withLab([{ name: "e", nodePodCidrs: false }], {}, async (lab) => {
        const e = clusterOf(lab, "e");
        const core = adminConfig(e).makeApiClient(k8s.CoreV1Api);
        expect((await core.listNode()).items.map((n) => n.spec?.podCIDRs ?? [])).toEqual([[]]);
        const inputs = inputsWithoutCidrs(e);
        const named = new RegExp(
          "^podCidr: could not be detected: none of its 1 node\\(s\\) has spec\\.podCIDRs, .*EKS with the VPC CNI.*; " +
            "set podCidr to the range pods take addresses from$",
        );

        // Preview: check reads the cluster and names the input; the service CIDR it could read is not named.
        const checked = await cluster.check!({} as ClusterInputs, inputs);
        expect((checked.failures ?? []).map((f) => f.reason)).toEqual([expect.stringMatching(named)]);
        // The way out the message names: with podCidr given, check passes.
        expect((await cluster.check!({} as ClusterInputs, { ...inputs, podCidr: "10.100.0.0/16" })).failures).toEqual(
          [],
        );

        // Create (a cluster not readable at preview): the same, before anything is written.
        await expect(cluster.create!(inputs)).rejects.toThrow(
          /^cluster e \(https:\/\/\S+\): podCidr could not be detected: /,
        );
        await expect(core.readNamespace({ name: SYSTEM_NAMESPACE })).rejects.toMatchObject({ code: 404 });
      });
    },
    TEST_BOUND_MS,
  );
});
