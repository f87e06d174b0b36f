/**
 * Faults answered at once and in words, on real clusters. Faults that will not heal end a wait
 * with the reason the other side gave: a provider whose quota controller and certificate signer are
 * stopped (its kube-controller-manager paused) and a tunnel asking for a UDP port that the provider's gateway
 * already serves; neither waits out the operation's 300 s deadline, and neither leaves anything
 * behind. A share of a provider with no free capacity is an empty offer: the peering stands, so
 * that the node grows when capacity frees up, and its status says why the node can run no pod,
 * on create and on refresh, without counting as drift for `pulumi up`.
 */
import * as k8s from "@kubernetes/client-node";
import { MANAGED_BY, MANAGED_BY_LABEL, REMOTE_CLUSTER_LABEL, SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { removeTenant } from "../../core/authentication/tenant.js";
import { ensurePeeringTokenSecret, forgePeeringToken, revokePeeringToken } from "../../core/authentication/tokens.js";
import { clusterOf, type ClusterState, type LabState } from "../../local-cluster/lab.js";
import { applyTunnelEndpoint, deleteTunnelEndpoint, getTunnelEndpoint } from "../../core/network-fabric/endpoints.js";
import { ensureTunnel, type TunnelSides } from "../../core/network-fabric/tunnel.js";
import { deleteTunnel } from "../../core/network-fabric/tunnel-delete.js";
import {
  forgeTunnelEndpointSpec,
  TUNNEL_DEFAULTS,
  tunnelEndpointName,
  type TunnelParty,
  type TunnelSettings,
} from "../../core/network-fabric/tunnel-plan.js";
import { releasePeeringClaim } from "../../core/peering/claim.js";
import {
  pulumiProvider as peering,
  peeringChanges,
  type PeeringInputs,
  type PeeringOutputs,
} from "../../core/resources/peering.js";
import { getIdentityKubeconfig } from "../../core/authentication/stored-identity.js";
import { createPeering } from "../../core/peering/peering.js";
import { progressTo } from "../../core/operation/progress.js";
import { poll } from "../../core/wait/poll.js";
import { VIRTUAL_NODE_LABEL } from "../../core/virtual-node/node.js";
import { installForPeering, uninstallClusters, type InstalledCluster } from "../../harness/install.js";
import { allOrFirstFailure } from "../../harness/settle.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { tunnelTraces } from "../../harness/leaks.js";
import { setCordoned } from "../../local-cluster/pods.js";

/** Each test's bound: a peering against a provider in fault, each step with its own deadline. */
const TEST_BOUND_MS = 4 * 60_000;
/** The bound of this file's set-up and clean-up: both clusters' installs, or their uninstall. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS + 240_000;

const quiet = progressTo(() => undefined);
/** The deadline a user gets by default: each fault must end far inside it. */
const DEFAULT_DEADLINE_MS = 300_000;

/** The PID of `component` of `cluster`, as the lab recorded it. */
function pidOf(cluster: ClusterState, component: string): number {
  const record = [...cluster.processes].reverse().find((p) => p.name === component);
  if (!record) throw new Error(`cluster ${cluster.name} has no ${component} process recorded`);
  return record.pid;
}

/** The time `body` takes to reject, and its error. */
async function timedRejection(body: Promise<unknown>): Promise<{ error: Error; ms: number }> {
  const started = Date.now();
  try {
    await body;
  } catch (error) {
    return { error: error as Error, ms: Date.now() - started };
  }
  throw new Error("expected a rejection, got success");
}

describe("faults answered at once and in words", () => {
  let lab: LabState;
  let a: InstalledCluster;
  let b: InstalledCluster;

  beforeAll(async () => {
    lab = await sharedLab();
    [a, b] = await allOrFirstFailure([installForPeering(clusterOf(lab, "a")), installForPeering(clusterOf(lab, "b"))]);
  }, HOOK_BOUND_MS);

  afterAll(async () => {
    await uninstallClusters([b.cluster, a.cluster], { keepDefinitions: true });
  }, HOOK_BOUND_MS);

  test(
    "GIVEN a provider whose kube-controller-manager does not run (no quota controller, no certificate signer) WHEN a " +
      "consumer peers THEN it fails within 60 s (not the 300 s deadline) with the auth service's reason, and nothing of " +
      "the attempt stays",
    async () => {
      const token = forgePeeringToken();
      await ensurePeeringTokenSecret(a.kc, { tokenId: token.tokenId, secretHash: token.secretHash });
      const controllerManager = pidOf(a.cluster, "kube-controller-manager");
      process.kill(controllerManager, "SIGSTOP");
      try {
        const attempt = createPeering(
          {
            consumerKubeconfig: b.kubeconfig,
            provider: { clusterId: a.clusterId, authUrl: a.cluster.authUrl, authCaCert: a.caPem, token: token.token },
            resources: { pods: 5 },
            timeoutMs: DEFAULT_DEADLINE_MS,
          },
          quiet,
        );
        const { error, ms } = await timedRejection(attempt);
        // The tenant's quota comes before any right or certificate: it is what finds the controllers stopped.
        expect(error.message).toMatch(
          /quota controller did not count ResourceQuota pulumi-liqo-tenant-\S+\/pulumi-liqo-consumer within 20 s: is kube-controller-manager running/,
        );
        expect(error.message).toContain(a.cluster.authUrl.replace(/\/$/, ""));
        expect(error.message).not.toMatch(/deadline reached/);
        expect(ms).toBeLessThan(60_000);
        // No identity on the consumer; no CSR on the provider that a signer coming back could still sign.
        expect(await getIdentityKubeconfig(b.kc, a.clusterId)).toBeUndefined();
        const csrs = await a.kc.makeApiClient(k8s.CertificatesV1Api).listCertificateSigningRequest({
          labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY},${REMOTE_CLUSTER_LABEL}=${b.clusterId}`,
        });
        expect(csrs.items.map((c) => c.metadata?.name)).toEqual([]);
      } finally {
        process.kill(controllerManager, "SIGCONT");
        await releasePeeringClaim(b.kc, a.clusterId);
        await removeTenant(a.kc, b.clusterId);
        await revokePeeringToken(a.kc, token.tokenId);
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a provider's gateway that already serves a UDP port WHEN an in-band tunnel asks it to serve there THEN the " +
      "wait ends within 20 s naming the port and the tunnel holding it, and removing it leaves nothing",
    async () => {
      const port = 51835;
      const party = (cluster: InstalledCluster): TunnelParty => ({
        clusterId: cluster.clusterId,
        clusterName: cluster.cluster.name,
      });
      const settings: TunnelSettings = {
        ...TUNNEL_DEFAULTS,
        server: "provider",
        serverAddress: a.cluster.publicAddress,
        port,
        behindNat: [],
      };
      // Another tunnel of a, served on that port: a third cluster that a's admin peered in-band.
      const third: TunnelParty = { clusterId: "00000000000000ee", clusterName: "x" };
      const holderRef = { namespace: SYSTEM_NAMESPACE, name: tunnelEndpointName(third.clusterId) };
      const sides: TunnelSides = {
        consumer: { kc: b.kc, namespace: SYSTEM_NAMESPACE, party: party(b) },
        provider: { kc: a.kc, namespace: SYSTEM_NAMESPACE, party: party(a) },
      };
      const before = { a: await tunnelTraces(a.cluster), b: await tunnelTraces(b.cluster) };
      try {
        await applyTunnelEndpoint(
          a.kc,
          holderRef,
          forgeTunnelEndpointSpec("provider", { consumer: third, provider: party(a) }, settings, {}),
          "test",
        );
        await poll(
          { step: "test", object: `TunnelEndpoint ${holderRef.name} served`, endpoint: a.cluster.apiServerUrl },
          { timeoutMs: 30_000, intervalMs: 250 },
          async () => {
            const holder = await getTunnelEndpoint(a.kc, holderRef, "test");
            return holder?.status?.interfaceName
              ? { done: true, value: undefined }
              : { done: false, state: JSON.stringify(holder?.status ?? {}) };
          },
        );

        const { error, ms } = await timedRejection(ensureTunnel(sides, settings, DEFAULT_DEADLINE_MS, quiet));
        expect(error.message).toMatch(
          new RegExp(
            `gateway refused the spec: refused spec.listenPort: UDP port ${port} is already served on this gateway by the tunnel to "x"`,
          ),
        );
        expect(error.message).toContain(a.cluster.apiServerUrl);
        expect(ms).toBeLessThan(20_000);
      } finally {
        await deleteTunnel(sides, { force: false, timeoutMs: 60_000 }, quiet);
        await deleteTunnelEndpoint(a.kc, holderRef, "test");
        await poll(
          { step: "test", object: `TunnelEndpoint ${holderRef.name} taken down`, endpoint: a.cluster.apiServerUrl },
          { timeoutMs: 60_000, intervalMs: 250 },
          async () =>
            (await getTunnelEndpoint(a.kc, holderRef, "test"))
              ? { done: false, state: "still there" }
              : { done: true, value: undefined },
        );
      }
      expect(await tunnelTraces(a.cluster)).toEqual(before.a);
      expect(await tunnelTraces(b.cluster)).toEqual(before.b);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a provider with no free capacity WHEN a share of it is peered THEN the peering stands with a status naming the " +
      "empty offer, refresh keeps it, and up sees no drift",
    async () => {
      // No free capacity: every real node of a is cordoned, so none can take an offloaded pod.
      const aNodes = (await a.kc.makeApiClient(k8s.CoreV1Api).listNode()).items.map((n) => n.metadata!.name!);
      expect(aNodes.length).toBeGreaterThan(0);
      await setCordoned(a.kc.makeApiClient(k8s.CoreV1Api), aNodes, true);
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
        const emptyStatus =
          /^Ready, with an empty offer: the provider offers no cpu, no memory, no pods \(cpu 0, memory 0, pods 0\): the virtual node can run no pod/;
        expect(made.status).toMatch(emptyStatus);
        const node = await b.kc.makeApiClient(k8s.CoreV1Api).readNode({ name: made.virtualNodeName! });
        expect(node.status?.capacity).toEqual({ cpu: "0", memory: "0", pods: "0" });

        const refreshed = (await peering.read!(created.id, made)).props!;
        expect(refreshed.status).toMatch(emptyStatus);
        expect(peeringChanges(refreshed, inputs).changed).toEqual([]);
      } finally {
        if (outs) await peering.delete!("b-to-a", { ...outs, force: true });
        await revokePeeringToken(a.kc, token.tokenId);
        await setCordoned(a.kc.makeApiClient(k8s.CoreV1Api), aNodes, false);
      }
      const bNodes = await b.kc.makeApiClient(k8s.CoreV1Api).listNode({ labelSelector: `${VIRTUAL_NODE_LABEL}=true` });
      expect(bNodes.items).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
