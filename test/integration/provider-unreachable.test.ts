/**
 * A provider with no path to its API server is not reported healthy, on real clusters: b peers
 * with a, then a drops every packet b sends to its API server (the consumer's agent gets no
 * answer, not even a refusal). b's virtual node goes NotReady with reason ProviderUnreachable,
 * naming a's API server and the cause, once no heartbeat call has reached a for
 * PROVIDER_UNREACHABLE_AFTER_MS, and not before; its Lease goes on being renewed meanwhile. With
 * the path back, the next heartbeat makes it Ready. Unpeer and uninstall leave nothing behind.
 */
import * as k8s from "@kubernetes/client-node";
import { HEARTBEAT_INTERVAL_MS, PROVIDER_CALL_TIMEOUT_MS } from "../../agent/heartbeat.js";
import { PROVIDER_UNREACHABLE_AFTER_MS, PROVIDER_UNREACHABLE_REASON } from "../../agent/readiness.js";
import { clusterOf, type ClusterState } from "../../local-cluster/lab.js";
import { API_SERVER_PORT } from "../../local-cluster/control-plane.js";
import { createPeering, deletePeering, type PeeringRecord } from "../../core/peering/peering.js";
import { progressTo } from "../../core/operation/progress.js";
import { NODE_LEASE_NAMESPACE } from "../../core/virtual-node/node.js";
import { sharedLab } from "../../harness/labs.js";
import { firewallRule } from "../support/firewall.js";
import { projectTraces } from "../../harness/leaks.js";
import { preparePeering } from "../../harness/peering-pair.js";
import { waitForReadyStatus } from "../support/revoke.js";

/** Each test's bound: a peering, the node going NotReady while its packets are dropped, and Ready again. */
const TEST_BOUND_MS = 8 * 60_000;

const quiet = progressTo(() => undefined);
/** One heartbeat pass while the provider is out of reach: the pause, then a call cut at its timeout. */
const ONE_PASS_MS = HEARTBEAT_INTERVAL_MS + PROVIDER_CALL_TIMEOUT_MS;
/**
 * What a loaded 2-core machine adds to a heartbeat pass and to the test's noticing its write: the
 * agent's timers fire late and the API server answers slowly. 5 s was once not enough (the node
 * went NotReady 60,009 ms after the cut, against a 60,000 ms bound, beside another file's pulumi runs).
 */
const LOADED_MACHINE_SLACK_MS = 20_000;
/** The last call that reached the provider was at most one pass before the cut, the one that notices at most one pass after the bound. */
const NOT_READY_WITHIN_MS = PROVIDER_UNREACHABLE_AFTER_MS + ONE_PASS_MS + LOADED_MACHINE_SLACK_MS;
const NOT_READY_NOT_BEFORE_MS = PROVIDER_UNREACHABLE_AFTER_MS - ONE_PASS_MS;

/** The firewall rule in the provider's namespace that drops what the consumer sends to its API server. */
const dropRule = (consumer: ClusterState): string[] => [
  "INPUT",
  "-s",
  consumer.address,
  "-p",
  "tcp",
  "--dport",
  String(API_SERVER_PORT),
  "-j",
  "DROP",
];

describe("a provider out of reach", () => {
  test(
    "GIVEN b peered with a WHEN a's API server drops b's packets THEN b's node goes NotReady (ProviderUnreachable) within " +
      "the bound and not before, its Lease renewed meanwhile; WHEN the path is back THEN Ready within a heartbeat; nothing is left",
    async () => {
      const lab = await sharedLab();
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      const { consumer, consumerKubeconfig, auth, request, cleanup } = await preparePeering(a, b, {
        cpu: "1",
        memory: "1Gi",
        pods: 5,
      });
      const rule = firewallRule(a.netns, dropRule(b));
      let record: PeeringRecord | undefined;
      try {
        record = await createPeering(request, quiet);
        const nodeName = record.virtualNodeName;

        await rule.insert();
        const cut = Date.now();
        const condition = await waitForReadyStatus(consumer.kc, nodeName, "False", NOT_READY_WITHIN_MS);
        const elapsed = Date.now() - cut;
        expect(elapsed).toBeLessThan(NOT_READY_WITHIN_MS);
        expect(elapsed).toBeGreaterThanOrEqual(NOT_READY_NOT_BEFORE_MS);
        expect(condition.reason).toBe(PROVIDER_UNREACHABLE_REASON);
        expect(condition.message).toContain(`provider a not reached for `);
        expect(condition.message).toContain(
          `at ${a.apiServerUrl}: no answer within ${PROVIDER_CALL_TIMEOUT_MS / 1000} s`,
        );
        // The consumer's side of the heartbeat goes on: the Lease is renewed while the node is NotReady.
        const lease = await consumer.kc
          .makeApiClient(k8s.CoordinationV1Api)
          .readNamespacedLease({ name: nodeName, namespace: NODE_LEASE_NAMESPACE });
        expect(new Date(lease.spec!.renewTime as unknown as string).getTime()).toBeGreaterThan(
          cut + PROVIDER_UNREACHABLE_AFTER_MS - ONE_PASS_MS,
        );

        await rule.remove();
        const back = Date.now();
        const ready = await waitForReadyStatus(consumer.kc, nodeName, "True", ONE_PASS_MS + 5_000);
        expect(Date.now() - back).toBeLessThan(ONE_PASS_MS + 5_000);
        expect(ready.reason).toBe("PeeringActive");
      } finally {
        await rule.remove();
        if (record)
          await deletePeering(consumerKubeconfig, record, auth, { force: true, timeoutMs: 20_000 }, quiet).catch(
            () => undefined,
          );
        await cleanup();
      }
      expect(await rule.present()).toBe(false);
      expect(await projectTraces(b.kubeconfig)).toEqual([]);
      expect(await projectTraces(a.kubeconfig)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
