/**
 * A `Cluster` without `agent.image` in a cluster where no agent runs: its install fails within
 * seconds (not at its timeout), naming the input and what the cluster showed (no agent Deployment,
 * no Lease, or a stale one); what it made stands and is recorded, and the same install with the
 * image finishes it, keeping the cluster's id.
 */
import * as k8s from "@kubernetes/client-node";
import { AGENT_LEASE, SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { AGENT_NAME } from "../../core/cluster/agent-components.js";
import { AGENT_APPEARANCE_GRACE_MS } from "../../core/cluster/agent.js";
import { installCluster, madeBefore } from "../../core/cluster/lifecycle.js";
import { readOptional } from "../../core/kube/client.js";
import { microTime } from "../../core/kube/time.js";
import { clusterOf } from "../../local-cluster/lab.js";
import { adminConfig, installWithAgentPods, podInstallRequest, uninstallCluster } from "../../harness/install.js";
import { sharedLab } from "../../harness/labs.js";

/** Each test's bound: the refused install (seconds), then an install with the agent and its uninstall. */
const TEST_BOUND_MS = 4 * 60_000;

/** The timeout the install is given: far above what its answer may take, so only the early answer passes. */
const INSTALL_TIMEOUT_MS = 120_000;
/** How soon the install must answer: the grace an already-running agent gets, and a few looks more. */
const ANSWER_WITHIN_MS = AGENT_APPEARANCE_GRACE_MS + 10_000;

describe("a Cluster without agent.image where no agent runs", () => {
  test(
    "GIVEN no agent in the cluster WHEN installed without agent.image THEN it fails within seconds naming agent.image and " +
      "what it found (no Deployment, no Lease; then a stale Lease), deploys nothing, and the install with the image finishes it",
    async () => {
      const cluster = clusterOf(await sharedLab(), "a");
      const kc = adminConfig(cluster);
      const apps = kc.makeApiClient(k8s.AppsV1Api);
      const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
      const { agent: _agent, ...withoutImage } = podInstallRequest(cluster, { timeoutMs: INSTALL_TIMEOUT_MS });
      /** Runs the install without an image; resolves its error and how long it took to come. */
      const failedInstall = async (): Promise<{ error: Error; ms: number }> => {
        const started = performance.now();
        const error = await installCluster(withoutImage).then(
          () => new Error("the install without agent.image succeeded, with no agent in the cluster"),
          (caught: unknown) => caught as Error,
        );
        return { error, ms: performance.now() - started };
      };
      try {
        // The shared lab may hold the install an earlier file left for the next one (its agent pods
        // running): this test's GIVEN is a cluster with none, so it removes that first.
        await uninstallCluster(cluster, { keepDefinitions: true });
        // Nothing at all: no Deployment, no Lease.
        const first = await failedInstall();
        expect(first.error.message).toMatch(
          /^cluster: agent Lease .* at https:\/\/\S+ failed: agent\.image is not set/,
        );
        expect(first.error.message).toContain(`no Deployment ${SYSTEM_NAMESPACE}/${AGENT_NAME}`);
        expect(first.error.message).toContain(`no agent Lease ${SYSTEM_NAMESPACE}/${AGENT_LEASE}`);
        expect(first.ms).toBeLessThan(ANSWER_WITHIN_MS);
        // What it made is handed back for the state (the cluster's identity), and no agent was half-deployed.
        const made = madeBefore(first.error);
        expect(made?.clusterId).toMatch(/^[0-9a-f]{16}$/);
        expect(
          await readOptional(() => apps.readNamespacedDeployment({ name: AGENT_NAME, namespace: SYSTEM_NAMESPACE })),
        ).toBeUndefined();

        // A Lease an agent left when it stopped, five minutes ago.
        const renewTime = microTime(new Date(Date.now() - 300_000)) as unknown as k8s.V1MicroTime;
        await coordination.createNamespacedLease({
          namespace: SYSTEM_NAMESPACE,
          body: {
            metadata: { name: AGENT_LEASE },
            spec: { holderIdentity: "gone", leaseDurationSeconds: 30, renewTime },
          },
        });
        const second = await failedInstall();
        expect(second.error.message).toContain("agent.image is not set");
        expect(second.error.message).toContain(`a stale agent Lease ${SYSTEM_NAMESPACE}/${AGENT_LEASE} (last renewed`);
        expect(second.ms).toBeLessThan(ANSWER_WITHIN_MS);
        expect(madeBefore(second.error)?.clusterId).toBe(made?.clusterId);

        // The same install with the image, as the next `pulumi up` with agent.image set: it finishes, same id.
        const installed = await installWithAgentPods(cluster, { timeoutMs: 180_000 });
        expect(installed.clusterId).toBe(made?.clusterId);
      } finally {
        await uninstallCluster(cluster, { keepDefinitions: true });
      }
    },
    TEST_BOUND_MS,
  );
});
