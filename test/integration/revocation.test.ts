/**
 * A peering whose identity the provider revoked shows it, on real clusters: consumer b's identity
 * on provider a is revoked at a's auth service with b's own certificate (as anyone holding it can);
 * b's virtual node goes NotReady within one heartbeat, saying why; reading the peering reports
 * `identity revoked` instead of failing; peering again with the same token brings it back Ready.
 */
import * as k8s from "@kubernetes/client-node";
import { HEARTBEAT_INTERVAL_MS } from "../../agent/heartbeat.js";
import { clusterOf } from "../../local-cluster/lab.js";
import { createPeering, deletePeering, readPeering, type PeeringRecord } from "../../core/peering/peering.js";
import { progressTo } from "../../core/operation/progress.js";
import { IDENTITY_REVOKED, IDENTITY_REVOKED_REASON } from "../../core/authentication/revoked.js";
import { poll } from "../../core/wait/poll.js";
import { sharedLab } from "../../harness/labs.js";
import { preparePeering } from "../../harness/peering-pair.js";
import { revokeHeldIdentity, waitForReadyStatus } from "../support/revoke.js";

/** Each test's bound: a peering, its identity revoked, and the node going NotReady. */
const TEST_BOUND_MS = 6 * 60_000;

const quiet = progressTo(() => undefined);
/** One heartbeat: the pass that follows the revocation starts within an interval; give it a few seconds to run on a loaded machine. */
const ONE_HEARTBEAT_MS = HEARTBEAT_INTERVAL_MS + 5_000;

describe("a revoked identity", () => {
  test(
    "GIVEN b peered with a WHEN b's identity is revoked at a's auth service THEN b's node goes NotReady within one " +
      "heartbeat saying why, reading reports identity revoked, and peering again makes it Ready",
    async () => {
      const lab = await sharedLab();
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      const { provider, consumer, consumerKubeconfig, auth, request, cleanup } = await preparePeering(a, b, {
        cpu: "2",
        memory: "4Gi",
        pods: 20,
      });
      let record: PeeringRecord | undefined;
      try {
        record = await createPeering(request, quiet);
        expect(await revokeHeldIdentity(consumer.kc, provider.clusterId, auth)).toEqual({
          revoked: true,
          tenantNamespace: record.tenantNamespace,
        });

        const started = Date.now();
        const nodeName = record.virtualNodeName;
        const condition = await waitForReadyStatus(consumer.kc, nodeName, "False", ONE_HEARTBEAT_MS);
        expect(Date.now() - started).toBeLessThan(ONE_HEARTBEAT_MS);
        expect(condition.reason).toBe(IDENTITY_REVOKED_REASON);
        expect(condition.message).toMatch(
          new RegExp(
            `^${IDENTITY_REVOKED}: provider a at ${a.apiServerUrl.replace(/[.]/g, "\\.")} refused the consumer's identity \\(HTTP 403 `,
          ),
        );

        const drift = await readPeering(consumerKubeconfig, record);
        expect(drift.gone).toBe(false);
        expect(drift.problems[0]).toMatch(new RegExp(`^${IDENTITY_REVOKED}: provider a `));
        expect(drift.problems).toContain(`virtual node ${nodeName}: Ready=False (${IDENTITY_REVOKED_REASON})`);

        // What pulumi up does with a revoked peering: its steps again, authentication included, with the same token.
        record = await createPeering(request, quiet);
        const repeered = new Date();
        expect((await readPeering(consumerKubeconfig, record)).problems).toEqual([]);
        // And the heartbeat agrees: its next post with the new identity says Ready.
        const core = consumer.kc.makeApiClient(k8s.CoreV1Api);
        await poll(
          { step: "test", object: `Node ${nodeName} Ready, posted by the heartbeat`, endpoint: b.apiServerUrl },
          { timeoutMs: 3 * ONE_HEARTBEAT_MS, intervalMs: 500 },
          async () => {
            const ready = (await core.readNode({ name: nodeName })).status?.conditions?.find((c) => c.type === "Ready");
            const posted = new Date(ready?.lastHeartbeatTime ?? 0);
            return ready?.status === "True" && posted > repeered
              ? { done: true, value: undefined }
              : { done: false, state: `Ready=${ready?.status} at ${posted.toISOString()} (${ready?.message})` };
          },
        );
      } finally {
        if (record)
          await deletePeering(consumerKubeconfig, record, auth, { force: true, timeoutMs: 20_000 }, quiet).catch(
            () => undefined,
          );
        await cleanup({ keepDefinitions: true });
      }
    },
    TEST_BOUND_MS,
  );
});
