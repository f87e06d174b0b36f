/**
 * A share of a provider with no free capacity (no node in cluster a) is an empty offer: the
 * peering stands, so that the node grows when capacity frees up, and its status says why the
 * node can run no pod, on create and on refresh, without counting as drift for `pulumi up`.
 */
import * as k8s from "@kubernetes/client-node";
import { clusterOf, type LabState } from "../../local-cluster/lab.js";
import { ensurePeeringTokenSecret, forgePeeringToken, revokePeeringToken } from "../../provider/authentication/tokens.js";
import { uninstallCluster } from "../../provider/cluster/install.js";
import { provider as peering, peeringChanges, type PeeringInputs, type PeeringOutputs } from "../../provider/resources/peering.js";
import { adminConfig, installForPeering, type InstalledCluster } from "../support/install.js";
import { sharedLab } from "../support/labs.js";

describe("an empty offer", () => {
  let lab: LabState;
  let a: InstalledCluster;
  let b: InstalledCluster;

  beforeAll(async () => {
    lab = await sharedLab();
    a = await installForPeering(clusterOf(lab, "a"));
    b = await installForPeering(clusterOf(lab, "b"));
  });

  afterAll(async () => {
    await uninstallCluster(adminConfig(b.cluster));
    await uninstallCluster(adminConfig(a.cluster));
  });

  test("GIVEN a provider with no free capacity WHEN a share of it is peered THEN the peering stands with a status naming the empty offer, refresh keeps it, and up sees no drift", async () => {
    expect((await a.kc.makeApiClient(k8s.CoreV1Api).listNode()).items).toEqual([]);
    const token = forgePeeringToken();
    await ensurePeeringTokenSecret(a.kc, { tokenId: token.tokenId, secretHash: token.secretHash });
    const inputs: PeeringInputs = {
      consumerKubeconfig: b.kubeconfig,
      consumerClusterId: b.clusterId,
      provider: { clusterId: a.clusterId, authUrl: a.cluster.authUrl, authCaCert: a.caPem, token: token.token },
      resources: { sharePercent: 50 },
      timeoutSeconds: 90,
    };
    let outs: PeeringOutputs | undefined;
    try {
      const created = await peering.create!(inputs);
      const made = created.outs!;
      outs = made;
      const emptyStatus = /^Ready, with an empty offer: the provider offers no cpu, no memory, no pods \(cpu 0, memory 0, pods 0\): the virtual node can run no pod/;
      expect(made.status).toMatch(emptyStatus);
      const node = await b.kc.makeApiClient(k8s.CoreV1Api).readNode({ name: made.virtualNodeName! });
      expect(node.status?.capacity).toEqual({ cpu: "0", memory: "0", pods: "0" });

      const refreshed = (await peering.read!(created.id, made)).props!;
      expect(refreshed.status).toMatch(emptyStatus);
      expect(peeringChanges(refreshed, inputs).changed).toEqual([]);
    } finally {
      if (outs) await peering.delete!("b-to-a", { ...outs, force: true });
      await revokePeeringToken(a.kc, token.tokenId);
    }
    expect(await b.kc.makeApiClient(k8s.CoreV1Api).listNode()).toEqual(expect.objectContaining({ items: [] }));
  });
});
