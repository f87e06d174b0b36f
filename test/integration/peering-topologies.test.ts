/**
 * Peering topologies on real clusters with their real agents, without the Pulumi engine: two
 * clusters peering each other at once, one provider serving two consumers (tenant isolation, one
 * leaving while the other stays), a virtual node outliving the node lifecycle controller's grace
 * period on the agent's heartbeat alone, and bad input (wrong token, revoked token, unreachable
 * auth service) failing with a precise message and leaving nothing behind.
 *
 * One private lab of three clusters x, y, z (grace period 20 s) serves every test; it is removed
 * after the last test, also when a test or the lab's start fails.
 */
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  API_VERSION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  SYSTEM_NAMESPACE,
  tenantNamespace,
} from "../../core/api/index.js";
import {
  ensurePeeringTokenSecret,
  forgePeeringToken,
  parsePeeringToken,
  revokePeeringToken,
} from "../../core/authentication/tokens.js";
import { loadKubeconfig } from "../../core/kube/client.js";
import { statusOf } from "../../core/kube/errors.js";
import { getIdentityKubeconfig, identitySecretName } from "../../core/authentication/stored-identity.js";
import { listOutgoingPeerings } from "../../core/virtual-node/outgoing-peering.js";
import { createPeering, deletePeering, readPeering, type PeeringRecord } from "../../core/peering/peering.js";
import { progressTo } from "../../core/operation/progress.js";
import { NODE_LEASE_NAMESPACE, VIRTUAL_NODE_LABEL, nodeReadiness } from "../../core/virtual-node/node.js";
import { poll } from "../../core/wait/poll.js";
import { clusterOf, type LabState } from "../../local-cluster/lab.js";
import { installForPeering, uninstallClusters, type InstalledCluster } from "../../harness/install.js";
import { allOrFirstFailure } from "../../harness/settle.js";
import { holdLab, type HeldLab } from "../../harness/labs.js";

/** Each test's bound: peerings made and removed at once among the lab's clusters. */
const TEST_BOUND_MS = 6 * 60_000;

/** The node lifecycle controller's grace period in the lab. */
const GRACE_SECONDS = 20;
const RESOURCES = { cpu: "2", memory: "4Gi", pods: 20 } as const;
const TENANT_PREFIX = "pulumi-liqo-tenant-";

const quiet = progressTo(() => undefined);

/** A live peering and what it takes to remove it. */
interface Live {
  readonly consumer: InstalledCluster;
  readonly provider: InstalledCluster;
  readonly record: PeeringRecord;
}

/**
 * What a test creates, so that its `finally` removes it: tokens on providers, and peerings not
 * deleted yet (deleted with force, so that a broken provider does not keep the consumer dirty).
 */
class Created {
  private readonly tokens: { provider: InstalledCluster; tokenId: string }[] = [];
  private readonly peerings: Live[] = [];

  /** Forges a token and stores its record on `provider`. */
  async token(provider: InstalledCluster): Promise<ReturnType<typeof forgePeeringToken>> {
    const token = forgePeeringToken();
    this.tokens.push({ provider, tokenId: token.tokenId });
    await ensurePeeringTokenSecret(provider.kc, { tokenId: token.tokenId, secretHash: token.secretHash });
    return token;
  }

  /** Peers `consumer` with `provider` through a fresh token. */
  async peer(consumer: InstalledCluster, provider: InstalledCluster, timeoutMs = 90_000): Promise<Live> {
    const token = await this.token(provider);
    const record = await createPeering(
      {
        consumerKubeconfig: consumer.kubeconfig,
        provider: {
          clusterId: provider.clusterId,
          authUrl: provider.cluster.authUrl,
          authCaCert: provider.caPem,
          token: token.token,
        },
        resources: RESOURCES,
        timeoutMs,
      },
      quiet,
    );
    const live = { consumer, provider, record };
    this.peerings.push(live);
    return live;
  }

  /** Unpeers (without force: the provider must answer) and forgets the peering. */
  async unpeer(live: Live): Promise<string[]> {
    const left = await deletePeering(
      live.consumer.kubeconfig,
      live.record,
      { authUrl: live.provider.cluster.authUrl, authCaCert: live.provider.caPem },
      { force: false, timeoutMs: 30_000 },
      quiet,
    );
    this.peerings.splice(this.peerings.indexOf(live), 1);
    return left;
  }

  /** Removes whatever is still recorded; throws the first failure after trying everything. */
  async cleanUp(): Promise<void> {
    const failures: unknown[] = [];
    for (const live of this.peerings.splice(0)) {
      await deletePeering(
        live.consumer.kubeconfig,
        live.record,
        { authUrl: live.provider.cluster.authUrl, authCaCert: live.provider.caPem },
        { force: true, timeoutMs: 30_000 },
        quiet,
      ).catch((e: unknown) => failures.push(e));
    }
    for (const { provider, tokenId } of this.tokens.splice(0)) {
      await revokePeeringToken(provider.kc, tokenId).catch((e: unknown) => failures.push(e));
    }
    if (failures.length > 0) throw failures[0];
  }
}

/** Everything of a peering a cluster may hold, on either side; all empty when nothing is left. */
async function peeringObjects(kc: k8s.KubeConfig): Promise<Record<string, string[]>> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  const namespaces = await core.listNamespace();
  const secrets = await core.listNamespacedSecret({ namespace: SYSTEM_NAMESPACE });
  const nodes = await core.listNode({ labelSelector: `${VIRTUAL_NODE_LABEL}=true` });
  const leases = await coordination.listNamespacedLease({
    namespace: NODE_LEASE_NAMESPACE,
    labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
  });
  return {
    tenantNamespaces: namespaces.items.map((n) => n.metadata!.name!).filter((n) => n.startsWith(TENANT_PREFIX)),
    outgoingPeerings: (await listOutgoingPeerings(kc)).map((p) => p.metadata.name ?? "(unnamed)"),
    identitySecrets: secrets.items.map((s) => s.metadata!.name!).filter((n) => n.startsWith("identity-")),
    virtualNodes: nodes.items.map((n) => n.metadata!.name!),
    nodeLeases: leases.items.map((l) => l.metadata!.name!),
  };
}

const NOTHING = { tenantNamespaces: [], outgoingPeerings: [], identitySecrets: [], virtualNodes: [], nodeLeases: [] };

/** Waits until `installed` holds nothing of any peering (tenant namespaces take a while to terminate). */
async function waitForNothingLeft(installed: InstalledCluster): Promise<void> {
  await poll(
    {
      step: "test",
      object: `no peering objects in cluster ${installed.cluster.name}`,
      endpoint: installed.cluster.apiServerUrl,
    },
    { timeoutMs: 90_000, intervalMs: 500 },
    async () => {
      const found = await peeringObjects(installed.kc);
      const empty = Object.values(found).every((names) => names.length === 0);
      return empty ? { done: true, value: undefined } : { done: false, state: JSON.stringify(found) };
    },
  );
  expect(await peeringObjects(installed.kc)).toEqual(NOTHING);
}

/** Whether namespace `name` exists in the cluster (in any phase). */
async function namespaceExists(kc: k8s.KubeConfig, name: string): Promise<boolean> {
  return kc
    .makeApiClient(k8s.CoreV1Api)
    .readNamespace({ name })
    .then(
      () => true,
      (error: unknown) => {
        if (statusOf(error) === 404) return false;
        throw error;
      },
    );
}

/** The HTTP status a call ends with: 200 when it succeeds. */
async function statusOfCall(call: () => Promise<unknown>): Promise<number | undefined> {
  return call().then(
    () => 200,
    (error: unknown) => statusOf(error),
  );
}

/** The virtual node's Lease renewTime, in ms since the epoch (0 when there is none). */
async function leaseRenewedAt(kc: k8s.KubeConfig, nodeName: string): Promise<number> {
  const lease = await kc
    .makeApiClient(k8s.CoordinationV1Api)
    .readNamespacedLease({ name: nodeName, namespace: NODE_LEASE_NAMESPACE });
  const renewTime = lease.spec?.renewTime as unknown;
  return renewTime ? new Date(renewTime as string | Date).getTime() : 0;
}

/** The virtual node's Ready condition lastHeartbeatTime in ms (0 when there is none). */
function heartbeatOf(node: k8s.V1Node): number {
  const at = node.status?.conditions?.find((c) => c.type === "Ready")?.lastHeartbeatTime as unknown;
  return at ? new Date(at as string | Date).getTime() : 0;
}

describe("peering topologies on real clusters (private lab x, y, z)", () => {
  let lab: LabState | undefined;
  let x: InstalledCluster;
  let y: InstalledCluster;
  let z: InstalledCluster;
  let held: HeldLab | undefined;

  beforeAll(async () => {
    held = await holdLab([{ name: "x" }, { name: "y" }, { name: "z" }], {
      nodeMonitorGracePeriodSeconds: GRACE_SECONDS,
    });
    lab = held.lab;
    [x, y, z] = await allOrFirstFailure(["x", "y", "z"].map((name) => installForPeering(clusterOf(held!.lab, name))));
  }, 600_000);

  afterAll(async () => {
    try {
      if (lab) await uninstallClusters(["x", "y", "z"].map((name) => clusterOf(lab!, name)));
    } finally {
      await held?.release();
    }
  }, 600_000);

  test(
    "GIVEN clusters x and y WHEN x->y and y->x are peered at once and then both unpeered THEN both virtual nodes are " +
      "Ready, and afterwards nothing is left on either",
    async () => {
      const created = new Created();
      try {
        const [xToY, yToX] = await allOrFirstFailure([created.peer(x, y), created.peer(y, x)]);
        expect(xToY!.record.virtualNodeName).toBe("liqo-y");
        expect(yToX!.record.virtualNodeName).toBe("liqo-x");
        expect(xToY!.record.tenantNamespace).toBe(tenantNamespace(x.clusterId));
        expect(yToX!.record.tenantNamespace).toBe(tenantNamespace(y.clusterId));
        for (const [consumer, node] of [
          [x, "liqo-y"],
          [y, "liqo-x"],
        ] as const) {
          const readiness = nodeReadiness(await consumer.kc.makeApiClient(k8s.CoreV1Api).readNode({ name: node }));
          expect({ cluster: consumer.cluster.name, node, ...readiness }).toEqual({
            cluster: consumer.cluster.name,
            node,
            ready: true,
            state: "Ready=True (PeeringActive)",
          });
        }
        // Each cluster is consumer and provider at once: both readings are clean.
        expect((await readPeering(x.kubeconfig, xToY!.record)).problems).toEqual([]);
        expect((await readPeering(y.kubeconfig, yToX!.record)).problems).toEqual([]);
        expect(await namespaceExists(y.kc, tenantNamespace(x.clusterId))).toBe(true);
        expect(await namespaceExists(x.kc, tenantNamespace(y.clusterId))).toBe(true);

        expect(await allOrFirstFailure([created.unpeer(xToY!), created.unpeer(yToX!)])).toEqual([[], []]);
        await waitForNothingLeft(x);
        await waitForNothingLeft(y);
      } finally {
        await created.cleanUp();
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN provider z WHEN consumers x and y peer at once THEN z holds two tenants, each identity reads only its own " +
      "tenant, and unpeering x leaves y->z working",
    async () => {
      const created = new Created();
      try {
        const [xToZ, yToZ] = await allOrFirstFailure([created.peer(x, z), created.peer(y, z)]);
        const tenantX = tenantNamespace(x.clusterId);
        const tenantY = tenantNamespace(y.clusterId);
        expect((await peeringObjects(z.kc)).tenantNamespaces.sort()).toEqual([tenantX, tenantY].sort());

        // Each consumer's identity, as its agent reads it from the consumer's own Secret.
        const identityText = async (consumer: InstalledCluster): Promise<string> => {
          const text = await getIdentityKubeconfig(consumer.kc, z.clusterId);
          if (!text)
            throw new Error(
              `consumer ${consumer.cluster.name} has no Secret ${SYSTEM_NAMESPACE}/${identitySecretName(z.clusterId)}`,
            );
          return text;
        };
        const asX = loadKubeconfig(await identityText(x), "x's identity on z").makeApiClient(k8s.CustomObjectsApi);
        const asY = loadKubeconfig(await identityText(y), "y's identity on z").makeApiClient(k8s.CustomObjectsApi);
        const listRequests = (api: k8s.CustomObjectsApi, namespace: string) => () =>
          api.listNamespacedCustomObject({
            group: API_GROUP,
            version: API_VERSION,
            namespace,
            plural: "resourcerequests",
          });
        const readOffer = (api: k8s.CustomObjectsApi, namespace: string, name: string) => () =>
          api.getNamespacedCustomObject({
            group: API_GROUP,
            version: API_VERSION,
            namespace,
            plural: "resourceoffers",
            name,
          });
        expect({
          xListsOwnRequests: await statusOfCall(listRequests(asX, tenantX)),
          yListsOwnRequests: await statusOfCall(listRequests(asY, tenantY)),
          xListsYsRequests: await statusOfCall(listRequests(asX, tenantY)),
          yListsXsRequests: await statusOfCall(listRequests(asY, tenantX)),
          xReadsYsOffer: await statusOfCall(readOffer(asX, tenantY, yToZ!.record.requestName)),
          yReadsXsOffer: await statusOfCall(readOffer(asY, tenantX, xToZ!.record.requestName)),
        }).toEqual({
          xListsOwnRequests: 200,
          yListsOwnRequests: 200,
          xListsYsRequests: 403,
          yListsXsRequests: 403,
          xReadsYsOffer: 403,
          yReadsXsOffer: 403,
        });

        // x leaves; y stays.
        expect(await created.unpeer(xToZ!)).toEqual([]);
        const unpeeredAt = Date.now();
        await poll(
          { step: "test", object: `Namespace ${tenantX} gone`, endpoint: z.cluster.apiServerUrl },
          { timeoutMs: 60_000 },
          async () =>
            (await namespaceExists(z.kc, tenantX))
              ? { done: false, state: "still there" }
              : { done: true, value: undefined },
        );
        await waitForNothingLeft(x);
        expect((await peeringObjects(z.kc)).tenantNamespaces).toEqual([tenantY]);
        // The agent of y is still beating for its node after x left: a renewal later than the unpeer.
        await poll(
          {
            step: "test",
            object: `Lease ${yToZ!.record.virtualNodeName} renewed after x's unpeer`,
            endpoint: y.cluster.apiServerUrl,
          },
          { timeoutMs: 30_000, intervalMs: 500 },
          async () => {
            const renewed = await leaseRenewedAt(y.kc, yToZ!.record.virtualNodeName);
            return renewed > unpeeredAt
              ? { done: true, value: undefined }
              : { done: false, state: `renewed at ${new Date(renewed).toISOString()}` };
          },
        );
        const drift = await readPeering(y.kubeconfig, yToZ!.record);
        expect(drift).toEqual({ problems: [], offer: { ...RESOURCES }, gone: false });
        expect(
          nodeReadiness(await y.kc.makeApiClient(k8s.CoreV1Api).readNode({ name: yToZ!.record.virtualNodeName })).ready,
        ).toBe(true);
        expect(await statusOfCall(listRequests(asY, tenantY))).toBe(200);

        expect(await created.unpeer(yToZ!)).toEqual([]);
        await waitForNothingLeft(y);
        await waitForNothingLeft(z);
      } finally {
        await created.cleanUp();
      }
    },
    TEST_BOUND_MS,
  );

  test(
    `GIVEN a lab whose node grace period is ${GRACE_SECONDS} s WHEN x peers with z THEN the virtual node stays Ready for ` +
      `35 s after creation and its Lease keeps being renewed`,
    async () => {
      const created = new Created();
      try {
        const live = await created.peer(x, z);
        const nodeName = live.record.virtualNodeName;
        const core = x.kc.makeApiClient(k8s.CoreV1Api);
        const createdAt = new Date(
          (await core.readNode({ name: nodeName })).metadata!.creationTimestamp as unknown as string,
        ).getTime();
        const holdUntil = createdAt + 35_000;
        const renewals = new Set<number>();
        const heartbeats = new Set<number>();
        // Checks every second until 35 s after creation, failing at the first look that is not Ready.
        await poll(
          {
            step: "test",
            object: `Node ${nodeName} Ready until ${new Date(holdUntil).toISOString()}`,
            endpoint: x.cluster.apiServerUrl,
          },
          { timeoutMs: 60_000, intervalMs: 1_000 },
          async () => {
            const node = await core.readNode({ name: nodeName });
            const readiness = nodeReadiness(node);
            const seenAt = Date.now();
            if (!readiness.ready || readiness.state !== "Ready=True (PeeringActive)") {
              return {
                failed: true,
                reason: `${readiness.state} ${Math.round((seenAt - createdAt) / 1000)} s after creation: ${JSON.stringify(node.status?.conditions)}`,
              };
            }
            renewals.add(await leaseRenewedAt(x.kc, nodeName));
            heartbeats.add(heartbeatOf(node));
            return seenAt >= holdUntil
              ? { done: true, value: undefined }
              : { done: false, state: `Ready, ${Math.round((seenAt - createdAt) / 1000)} s after creation` };
          },
        );
        // The agent's heartbeat, not just the initial status: renewals well past the grace period.
        const sorted = [...renewals].sort((a, b) => a - b);
        expect(sorted.length).toBeGreaterThanOrEqual(3);
        expect(sorted[sorted.length - 1]! - createdAt).toBeGreaterThan(GRACE_SECONDS * 1000);
        // The Ready condition is re-posted every 20 s (the Lease carries liveness), and its timestamps
        // are whole seconds: the first re-post can read exactly 20 s after creation.
        expect(Math.max(...heartbeats) - createdAt).toBeGreaterThanOrEqual(GRACE_SECONDS * 1000);
        expect((await readPeering(x.kubeconfig, live.record)).problems).toEqual([]);

        expect(await created.unpeer(live)).toEqual([]);
        await waitForNothingLeft(x);
        await waitForNothingLeft(z);
      } finally {
        await created.cleanUp();
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN provider z WHEN x presents a wrong token, a revoked token, or an unreachable auth URL THEN createPeering fails " +
      "naming the auth service and why, within its timeout, and nothing exists on either side",
    async () => {
      const created = new Created();
      const request = (authUrl: string, token: string, timeoutMs: number) =>
        createPeering(
          {
            consumerKubeconfig: x.kubeconfig,
            provider: { clusterId: z.clusterId, authUrl, authCaCert: z.caPem, token },
            resources: RESOURCES,
            timeoutMs,
          },
          quiet,
        );
      const failureOf = (promise: Promise<unknown>): Promise<Error> =>
        promise.then(
          () => {
            throw new Error("createPeering succeeded where it should have failed");
          },
          (error: Error) => error,
        );
      const expectNothingOnEitherSide = async (): Promise<void> => {
        expect(await namespaceExists(z.kc, tenantNamespace(x.clusterId))).toBe(false);
        expect(await peeringObjects(z.kc)).toEqual(NOTHING);
        expect(await peeringObjects(x.kc)).toEqual(NOTHING);
      };
      try {
        await waitForNothingLeft(x);
        await waitForNothingLeft(z);

        // Wrong token: the id of a stored token with another secret.
        const stored = await created.token(z);
        // The secret as the token parser reads it: base64url may hold "_", so the token is not split on it.
        const wrong = `plt_${stored.tokenId}_${parsePeeringToken(forgePeeringToken().token)!.secret}`;
        const wrongError = await failureOf(request(z.cluster.authUrl, wrong, 30_000));
        expect(wrongError.message).toContain(z.cluster.authUrl);
        expect(wrongError.message).toContain(
          "refused, HTTP 403: peering token refused: unknown, revoked or wrong token",
        );
        expect(wrongError.message).not.toContain(wrong);
        await expectNothingOnEitherSide();

        // Revoked token: valid until revoked, refused after.
        const revoked = await created.token(z);
        expect(await revokePeeringToken(z.kc, revoked.tokenId)).toBe(true);
        const revokedError = await failureOf(request(z.cluster.authUrl, revoked.token, 30_000));
        expect(revokedError.message).toContain(z.cluster.authUrl);
        expect(revokedError.message).toContain(
          "refused, HTTP 403: peering token refused: unknown, revoked or wrong token",
        );
        await expectNothingOnEitherSide();

        // Unreachable: a closed port on the provider's lab address.
        const usable = await created.token(z);
        const closed = `https://${z.cluster.publicAddress}:9`;
        const timeoutMs = 8_000;
        const started = Date.now();
        const unreachable = await failureOf(request(closed, usable.token, timeoutMs));
        const elapsed = Date.now() - started;
        expect(elapsed).toBeLessThan(timeoutMs + 3_000);
        expect(unreachable.message).toContain(`host ${z.cluster.publicAddress}, port 9`);
        expect(unreachable.message).toContain(closed);
        expect(unreachable.message).toMatch(/timed out after [\d.]+ s/);
        await expectNothingOnEitherSide();
      } finally {
        await created.cleanUp();
      }
    },
    TEST_BOUND_MS,
  );
});
