/**
 * In-band peering on real clusters (the shared lab) under the `gateway-only` profile: neither the host nor the
 * other cluster reaches a cluster's auth service, only the gateways' UDP ports are open. Out-of-band
 * therefore fails fast, naming the auth service; in-band builds the tunnel first and the
 * consumer's agent authenticates and negotiates through it, then the node is Ready and pods talk
 * through the tunnel. Delete leaves nothing of the peering on either side.
 */
import * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE, tenantNamespace } from "../../core/api/index.js";
import { ensurePeeringTokenSecret, forgePeeringToken } from "../../core/authentication/tokens.js";
import { loadKubeconfig } from "../../core/kube/client.js";
import { Cidr } from "../../core/net/cidr.js";
import {
  createInBandPeering,
  deleteInBandPeering,
  providerTunnelIp,
  readInBandPeering,
} from "../../core/peering/in-band.js";
import { getIdentityKubeconfig } from "../../core/authentication/stored-identity.js";
import { getOutgoingPeering } from "../../core/virtual-node/outgoing-peering.js";
import { createPeering } from "../../core/peering/peering.js";
import { progressTo } from "../../core/operation/progress.js";
import { TUNNEL_DEFAULTS, type TunnelSettings } from "../../core/network-fabric/tunnel-plan.js";
import { AUTH_SERVICE_PORT } from "../../local-cluster/control-plane.js";
import { addPodAddress, clusterOf, type LabState } from "../../local-cluster/lab.js";
import type { ClusterState } from "../../local-cluster/state.js";
import { installForPeering, uninstallClusters } from "../../harness/install.js";
import { withSharedLabProfile } from "../../harness/labs.js";
import { tunnelTraces } from "../../harness/leaks.js";
import { pingReplies } from "../support/probes.js";
import { IN_BAND_CREATE_STEPS } from "../support/in-band-steps.js";

/** Each test's bound: the shared lab, an in-band peering through the tunnel, and its removal. */
const TEST_BOUND_MS = 10 * 60_000;

describe("in-band peering under the gateway-only profile", () => {
  test(
    "GIVEN clusters whose auth services only the tunnel reaches WHEN peered out-of-band THEN it fails fast naming the " +
      "auth service; WHEN peered in-band THEN identity, offer, node and tunnel traffic all work, and delete leaves nothing",
    async () => {
      await withSharedLabProfile("gateway-only", async (lab) => {
        const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
        try {
          await peerInBand(lab, a, b);
        } finally {
          await uninstallClusters([b, a], { keepDefinitions: true });
        }
      });
    },
    TEST_BOUND_MS,
  );
});

/** The test's body: out-of-band fails fast, in-band peers, traffic flows, a resize, delete leaves nothing of the peering. */
async function peerInBand(lab: LabState, a: ClusterState, b: ClusterState): Promise<void> {
  const provider = await installForPeering(a);
  const consumer = await installForPeering(b);
  const lines: string[] = [];
  const progress = progressTo((line) => lines.push(line));

  // Out-of-band: the auth service cannot be reached from here; the error says where and what to do.
  const token = forgePeeringToken();
  await ensurePeeringTokenSecret(provider.kc, { tokenId: token.tokenId, secretHash: token.secretHash });
  const outOfBand = createPeering(
    {
      consumerKubeconfig: consumer.kubeconfig,
      provider: {
        clusterId: provider.clusterId,
        authUrl: a.authUrl,
        authCaCert: provider.caPem,
        token: token.token,
      },
      resources: { pods: 5 },
      timeoutMs: 300_000,
    },
    progress,
  );
  await expect(outOfBand).rejects.toThrow(
    new RegExp(`authentication: timed out after 15 s .*${a.authUrl.replaceAll(".", "\\.")}.*approach: "in-band"`),
  );
  expect(await getIdentityKubeconfig(consumer.kc, provider.clusterId)).toBeUndefined();

  // In-band: tunnel first, then the agent of b authenticates and negotiates through it.
  const tunnel: TunnelSettings = {
    server: "provider",
    serverAddress: a.publicAddress,
    ...TUNNEL_DEFAULTS,
    behindNat: [],
  };
  const request = {
    consumerKubeconfig: consumer.kubeconfig,
    providerKubeconfig: provider.kubeconfig,
    authPort: AUTH_SERVICE_PORT,
    tunnel,
    resources: { cpu: "1", memory: "2Gi", pods: 5 },
    timeoutMs: 120_000,
  };
  try {
    lines.length = 0;
    const record = await createInBandPeering(request, progress);
    // The tunnel's own steps count inside the first.
    expect(lines.map((line) => line.split(":")[0])).toEqual(IN_BAND_CREATE_STEPS);
    expect(record.offer).toEqual({ cpu: "1", memory: "2Gi", pods: 5 });
    const node = await consumer.kc.makeApiClient(k8s.CoreV1Api).readNode({ name: "liqo-a" });
    expect(node.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");

    // The identity points at the provider's API server inside the tunnel, and works from b's namespace only.
    const ip = providerTunnelIp(
      { me: { clusterId: consumer.clusterId } as never, them: { clusterId: provider.clusterId } as never },
      tunnel,
    );
    const identity = loadKubeconfig((await getIdentityKubeconfig(consumer.kc, provider.clusterId))!, "identity");
    expect(identity.getCurrentCluster()?.server).toBe(`https://${ip}:6443`);
    expect(identity.getCurrentCluster()?.tlsServerName).toBe("kubernetes.default");
    expect((await getOutgoingPeering(consumer.kc, provider.clusterId))?.status?.phase).toBe("Negotiated");
    // The one-time token is gone on both sides once used.
    const secretNames = async (kc: k8s.KubeConfig): Promise<string[]> =>
      (await kc.makeApiClient(k8s.CoreV1Api).listNamespacedSecret({ namespace: SYSTEM_NAMESPACE })).items.map(
        (s) => s.metadata!.name!,
      );
    expect((await secretNames(consumer.kc)).filter((n) => n.startsWith("in-band-token-"))).toEqual([]);
    expect((await secretNames(provider.kc)).filter((n) => n.startsWith("peering-token-"))).toEqual([
      `peering-token-${token.tokenId}`,
    ]);

    // Pods talk through the tunnel.
    const [aPod, bPod] = [Cidr.parse(a.podCidr).nth(60), Cidr.parse(b.podCidr).nth(60)];
    await addPodAddress(lab, "a", aPod);
    await addPodAddress(lab, "b", bPod);
    expect(await pingReplies(b.netns, bPod, aPod)).toMatch(/3 received/);
    expect(await pingReplies(a.netns, aPod, bPod)).toMatch(/3 received/);
    expect((await readInBandPeering(consumer.kubeconfig, provider.kubeconfig, record, tunnel)).problems).toEqual([]);

    // A new request is renegotiated through the tunnel, in place.
    const resized = await createInBandPeering(
      { ...request, resources: { cpu: "2", memory: "2Gi", pods: 5 } },
      progress,
    );
    expect(resized.offer).toEqual({ cpu: "2", memory: "2Gi", pods: 5 });
    expect(
      (await consumer.kc.makeApiClient(k8s.CoreV1Api).readNode({ name: "liqo-a" })).status?.capacity?.["cpu"],
    ).toBe("2");
  } finally {
    await deleteInBandPeering(consumer.kubeconfig, provider.kubeconfig, undefined, 60_000, progress);
  }
  expect(
    await consumer.kc
      .makeApiClient(k8s.CoreV1Api)
      .readNode({ name: "liqo-a" })
      .then(
        () => "present",
        () => "gone",
      ),
  ).toBe("gone");
  expect(await getOutgoingPeering(consumer.kc, provider.clusterId)).toBeUndefined();
  expect(await getIdentityKubeconfig(consumer.kc, provider.clusterId)).toBeUndefined();
  expect(
    await provider.kc
      .makeApiClient(k8s.CoreV1Api)
      .readNamespace({ name: tenantNamespace(consumer.clusterId) })
      .then(
        () => "present",
        () => "gone",
      ),
  ).toBe("gone");
  for (const cluster of [a, b]) expect(await tunnelTraces(cluster)).toEqual([]);
}
