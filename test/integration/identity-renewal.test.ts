/**
 * A peering outlives its identity, on real clusters and the real agents: a private lab whose
 * agents issue identities of the CSR API's minimum lifetime (600 s, valid 900 s as the signer
 * dates them 5 minutes back) and renew them at 35% of it (15 s after issuance), so that the suite
 * sees renewals without waiting out a lifetime (the bench `renewal` runs the default two thirds
 * against real 600 s identities).
 *
 * - b's identity is replaced again and again while the test keeps calling a's API server with
 *   whatever identity b holds and the heartbeat keeps the node Ready; the OutgoingPeering and a
 *   Peering refresh report the current expiry.
 * - With a's auth service out of b's reach, the renewal fails, is retried, and says so in the
 *   OutgoingPeering's status and the node's condition (Ready, reason IdentityRenewalFailing, with
 *   the expiry) long before the expiry; with the path back, the next try renews and both clear.
 * Unpeer and uninstall leave nothing behind.
 */
import * as k8s from "@kubernetes/client-node";
import { X509Certificate } from "node:crypto";
import { HEARTBEAT_INTERVAL_MS } from "../../agent/heartbeat.js";
import { IDENTITY_RENEWAL_FAILING_REASON } from "../../agent/readiness.js";
import { ATTEMPT_TIMEOUT_MS } from "../../agent/renewal.js";
import { AUTH_SERVICE_PORT } from "../../local-cluster/control-plane.js";
import { clusterOf, type ClusterState } from "../../local-cluster/lab.js";
import { REMOTE_CLUSTER_LABEL, type IdentityStatus } from "../../core/api/index.js";
import { certificateValidity } from "../../core/authentication/identity.js";
import { loadKubeconfig } from "../../core/kube/client.js";
import { describeKubeError } from "../../core/kube/errors.js";
import { getResourceOffer } from "../../core/negotiation/request.js";
import { getIdentityKubeconfig, heldCertificateOf } from "../../core/authentication/stored-identity.js";
import { getOutgoingPeering } from "../../core/virtual-node/outgoing-peering.js";
import { createPeering, deletePeering, type PeeringRecord } from "../../core/peering/peering.js";
import { progressTo } from "../../core/operation/progress.js";
import { pulumiProvider as peeringResource, type PeeringOutputs } from "../../core/resources/peering.js";
import { NODE_LEASE_NAMESPACE, nodeReadiness } from "../../core/virtual-node/node.js";
import { poll } from "../../core/wait/poll.js";
import { withLab } from "../../harness/labs.js";
import { firewallRule } from "../support/firewall.js";
import { projectTraces } from "../../harness/leaks.js";
import { preparePeering, type PeeringPair } from "../../harness/peering-pair.js";
import { waitForReadyStatus } from "../support/revoke.js";

/** Each test's bound: a private lab, and identities of 600 s renewed after 15 s watched over several renewals. */
const TEST_BOUND_MS = 10 * 60_000;

const quiet = progressTo(() => undefined);
const LIFETIME_SECONDS = 600;
/** kube-controller-manager's signer dates certificates 5 minutes back: a 600 s identity is valid for 900 s. */
const BACKDATE_SECONDS = 300;
const FRACTION = 0.35;
/** How often the agent renews here: at 35% of 900 s, which is 15 s after issuance. */
const RENEW_EVERY_MS = (FRACTION * (LIFETIME_SECONDS + BACKDATE_SECONDS) - BACKDATE_SECONDS) * 1000;
/** A failing renewal shows once it is due and its attempt has run out, plus a pass. */
const FAILING_WITHIN_MS = RENEW_EVERY_MS + ATTEMPT_TIMEOUT_MS + 5_000;
/** After the path is back: the longest backoff (30 s), one attempt, a pass. */
const RECOVERED_WITHIN_MS = 30_000 + ATTEMPT_TIMEOUT_MS + 5_000;

/** The identity b holds now: its certificate's serial and expiry, and a client made of it. */
async function heldIdentity(
  pair: PeeringPair,
): Promise<{ serial: string; expiresAt: string; spanSeconds: number; kc: k8s.KubeConfig }> {
  const text = await getIdentityKubeconfig(pair.consumer.kc, pair.provider.clusterId);
  if (!text) throw new Error("test: b holds no identity for a");
  const { certificatePem } = heldCertificateOf(text, "b's identity");
  const validity = certificateValidity(certificatePem);
  return {
    serial: new X509Certificate(certificatePem).serialNumber,
    expiresAt: validity.notAfter.toISOString(),
    spanSeconds: (validity.notAfter.getTime() - validity.notBefore.getTime()) / 1000,
    kc: loadKubeconfig(text, "b's identity"),
  };
}

async function identityStatus(pair: PeeringPair): Promise<IdentityStatus | undefined> {
  return (await getOutgoingPeering(pair.consumer.kc, pair.provider.clusterId))?.status?.identity;
}

/** The rule in a's namespace that refuses what b sends to a's auth service. */
const refuseRule = (consumer: ClusterState): string[] => [
  "INPUT",
  "-s",
  consumer.address,
  "-p",
  "tcp",
  "--dport",
  String(AUTH_SERVICE_PORT),
  "-j",
  "REJECT",
  "--reject-with",
  "tcp-reset",
];

describe("identity renewal", () => {
  test(
    "GIVEN b peered with a, identities of 600 s renewed after 15 s WHEN traffic and heartbeats go on THEN the identity is " +
      "replaced without a failed call or a NotReady node, and the expiry is reported; WHEN a's auth service is out of b's " +
      "reach THEN the failure shows in the status and the node long before the expiry, and clears once it is back; nothing is left",
    async () => {
      let traces: { a: string[]; b: string[]; rule: boolean } | undefined;
      const agentEnvironment = {
        LIQO_IDENTITY_LIFETIME_SECONDS: String(LIFETIME_SECONDS),
        LIQO_IDENTITY_RENEW_FRACTION: String(FRACTION),
      };
      // A host agent: the short identity lifetime is a test setting of the agent's environment, which a
      // `Cluster` (rightly) offers no input for.
      await withLab([{ name: "a" }, { name: "b" }], { hostAgent: true, agentEnvironment }, async (lab) => {
        const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
        const pair = await preparePeering(a, b, { cpu: "1", memory: "1Gi", pods: 5 });
        const core = pair.consumer.kc.makeApiClient(k8s.CoreV1Api);
        const rule = firewallRule(a.netns, refuseRule(b));
        let record: PeeringRecord | undefined;
        try {
          record = await createPeering(pair.request, quiet);
          const location = { tenantNamespace: record.tenantNamespace, name: record.requestName };
          const nodeName = record.virtualNodeName;
          const first = await heldIdentity(pair);
          expect(Date.parse(first.expiresAt) - Date.now()).toBeLessThanOrEqual(LIFETIME_SECONDS * 1000);
          expect(first.spanSeconds).toBe(LIFETIME_SECONDS + BACKDATE_SECONDS);

          // 1. Renewals while the test calls a with whatever b holds, and the node stays Ready.
          const started = Date.now();
          const serials = new Set([first.serial]);
          const failedCalls: string[] = [];
          const notReady: string[] = [];
          /** The identities a call to a succeeded with. */
          const worked = new Set<string>();
          await poll(
            { step: "test", object: "two renewals of b's identity", endpoint: a.authUrl },
            { timeoutMs: 3 * RENEW_EVERY_MS + 2 * ATTEMPT_TIMEOUT_MS, intervalMs: 300 },
            async () => {
              const held = await heldIdentity(pair);
              serials.add(held.serial);
              await getResourceOffer(held.kc, location).then(
                () => void worked.add(held.serial),
                (error: unknown) => void failedCalls.push(describeKubeError(error)),
              );
              const readiness = nodeReadiness(await core.readNode({ name: nodeName }));
              if (!readiness.ready) notReady.push(readiness.state);
              return serials.size >= 3
                ? { done: true, value: undefined }
                : { done: false, state: `${serials.size} identities seen` };
            },
          );
          expect(failedCalls).toEqual([]);
          expect(notReady).toEqual([]);
          // Renewed identities are accepted by a's API server, not only stored.
          expect(worked.size).toBeGreaterThanOrEqual(2);
          const lease = await pair.consumer.kc
            .makeApiClient(k8s.CoordinationV1Api)
            .readNamespacedLease({ name: nodeName, namespace: NODE_LEASE_NAMESPACE });
          expect(new Date(lease.spec!.renewTime as unknown as string).getTime()).toBeGreaterThan(started);
          // Renewal tidies the provider: one CSR of b's is kept, or two while one is being signed.
          const csrs = (
            await pair.provider.kc
              .makeApiClient(k8s.CertificatesV1Api)
              .listCertificateSigningRequest({ labelSelector: `${REMOTE_CLUSTER_LABEL}=${record.consumerClusterId}` })
          ).items;
          expect(csrs.length).toBeLessThanOrEqual(2);

          // The expiry is reported where a user looks: the OutgoingPeering and the Peering's refresh.
          const props = {
            ...pair.request,
            ...record,
            provider: {
              clusterId: pair.provider.clusterId,
              authUrl: pair.auth.authUrl,
              authCaCert: pair.auth.authCaCert,
            },
            status: "Ready",
          } as unknown as PeeringOutputs;
          await poll(
            { step: "test", object: "expiry reported as held", endpoint: b.apiServerUrl },
            { timeoutMs: RENEW_EVERY_MS, intervalMs: 200 },
            async () => {
              const [refreshed, status, held] = [
                (await peeringResource.read!(`${record!.consumerClusterId}-to-a`, props)).props,
                await identityStatus(pair),
                await heldIdentity(pair),
              ];
              const seen = {
                refresh: refreshed?.identityExpiresAt,
                status: status?.expiresAt,
                renewedAt: status?.renewedAt !== undefined,
              };
              return seen.refresh === held.expiresAt && seen.status === held.expiresAt && seen.renewedAt
                ? { done: true, value: undefined }
                : { done: false, state: `${JSON.stringify(seen)} vs ${held.expiresAt}` };
            },
          );

          // 2. a's auth service out of b's reach: the renewal fails, is retried, and says so.
          await rule.insert();
          const cut = Date.now();
          const failing = await poll(
            { step: "test", object: "renewal failures in the OutgoingPeering's status", endpoint: b.apiServerUrl },
            { timeoutMs: FAILING_WITHIN_MS, intervalMs: 200 },
            async () => {
              const status = await identityStatus(pair);
              return (status?.renewalFailures ?? 0) >= 1
                ? { done: true, value: status! }
                : { done: false, state: JSON.stringify(status) };
            },
          );
          expect(Date.now() - cut).toBeLessThan(FAILING_WITHIN_MS);
          expect(failing.renewalError).toContain(a.authUrl);
          expect(failing.renewalError).toMatch(/ECONNRESET|ECONNREFUSED|socket hang up/);
          const condition = await poll(
            { step: "test", object: `Node ${nodeName} saying its renewal fails`, endpoint: b.apiServerUrl },
            { timeoutMs: HEARTBEAT_INTERVAL_MS + 5_000, intervalMs: 200 },
            async () => {
              const ready = (await core.readNode({ name: nodeName })).status?.conditions?.find(
                (c) => c.type === "Ready",
              );
              return ready?.reason === IDENTITY_RENEWAL_FAILING_REASON
                ? { done: true, value: ready }
                : { done: false, state: `${ready?.status} ${ready?.reason}` };
            },
          );
          expect(condition.status).toBe("True");
          expect(condition.message).toContain(`the identity expires at ${failing.expiresAt}`);
          // Long before the expiry: most of the 600 s lifetime is left to fix it.
          expect(Date.parse(failing.expiresAt!) - Date.now()).toBeGreaterThan((LIFETIME_SECONDS * 1000) / 2);
          // Retried: more failures follow, each a backoff apart.
          await poll(
            { step: "test", object: "a second failed try", endpoint: b.apiServerUrl },
            { timeoutMs: 2 * ATTEMPT_TIMEOUT_MS + 5_000, intervalMs: 300 },
            async () => {
              const status = await identityStatus(pair);
              return (status?.renewalFailures ?? 0) >= 2
                ? { done: true, value: undefined }
                : { done: false, state: JSON.stringify(status) };
            },
          );
          const stuck = await heldIdentity(pair);

          await rule.remove();
          const back = Date.now();
          await poll(
            { step: "test", object: "a successful renewal after the path is back", endpoint: b.apiServerUrl },
            { timeoutMs: RECOVERED_WITHIN_MS, intervalMs: 300 },
            async () => {
              const [status, held] = [await identityStatus(pair), await heldIdentity(pair)];
              return held.serial !== stuck.serial && status?.renewalFailures === undefined
                ? { done: true, value: undefined }
                : { done: false, state: JSON.stringify(status) };
            },
          );
          expect(Date.now() - back).toBeLessThan(RECOVERED_WITHIN_MS);
          const ready = await poll(
            { step: "test", object: `Node ${nodeName} PeeringActive again`, endpoint: b.apiServerUrl },
            { timeoutMs: HEARTBEAT_INTERVAL_MS + 5_000, intervalMs: 200 },
            async () => {
              const c = (await core.readNode({ name: nodeName })).status?.conditions?.find((x) => x.type === "Ready");
              return c?.reason === "PeeringActive"
                ? { done: true, value: c }
                : { done: false, state: `${c?.status} ${c?.reason}` };
            },
          );
          expect(ready.status).toBe("True");
          await waitForReadyStatus(pair.consumer.kc, nodeName, "True", 1_000);
        } finally {
          await rule.remove();
          if (record)
            await deletePeering(
              pair.consumerKubeconfig,
              record,
              pair.auth,
              { force: true, timeoutMs: 20_000 },
              quiet,
            ).catch(() => undefined);
          await pair.cleanup();
        }
        traces = {
          a: await projectTraces(a.kubeconfig),
          b: await projectTraces(b.kubeconfig),
          rule: await rule.present(),
        };
      });
      expect(traces).toEqual({ a: [], b: [], rule: false });
    },
    TEST_BOUND_MS,
  );
});
