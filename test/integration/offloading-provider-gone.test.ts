/**
 * A namespace offloading whose provider is gone, on the shared lab: b peers with a, offloads a
 * namespace and runs a pod there on a; then a's API server refuses every connection from b's
 * agent and from pulumi's side (a firewall rule that resets them, as a stopped API server does,
 * and leaves the lab usable). The withdrawal without force fails within seconds naming a, its URL,
 * the cause and force, changing nothing; b's agent reports a Unreachable and backing off; with
 * force, b's side goes within seconds (the pod removed at once, never left Terminating) and what
 * stays on a is listed. With the path back, that is found on a, and the remedy the list gives
 * (deleting the RemoteNamespace there) removes it. Nothing is left.
 */
import * as k8s from "@kubernetes/client-node";
import {
  ABANDONED_VIRTUAL_NODES_ANNOTATION,
  API_GROUP,
  API_VERSION,
  NAMESPACE_OFFLOADING_NAME,
  type NamespaceOffloading,
} from "../../core/api/index.js";
import { API_SERVER_PORT } from "../../local-cluster/control-plane.js";
import { PROBE_TIMEOUT_MS } from "../../core/kube/client.js";
import { withdrawNamespace } from "../../core/offloading/namespace-offloading.js";
import { remoteNamespaceName } from "../../core/offloading/reflection.js";
import { poll } from "../../core/wait/poll.js";
import { offloadNamespace, podtoolSpec } from "../../harness/offloading.js";
import { releaseSharedLab, sharedLab } from "../../harness/labs.js";
import { uninstallClusters } from "../../harness/install.js";
import { firewallRule } from "../support/firewall.js";
import { projectTraces } from "../../harness/leaks.js";
import { peerPair, quietProgress, unpeerPair, type Pair } from "../support/tunnel-pair.js";

/** Each test's bound: a peering, an offloaded pod, and a withdrawal refused while the provider is gone. */
const TEST_BOUND_MS = 8 * 60_000;
/** The bound of this file's clean-up: the peering's removal and both uninstalls. */
const AFTER_ALL_BOUND_MS = 300_000;

const NAMESPACE = "pantry";
const group = { group: API_GROUP, version: API_VERSION };
/** A refusal takes one short look (a reset answers at once) and a few calls to b. */
const REFUSED_WITHIN_MS = PROBE_TIMEOUT_MS + 5_000;
/** A forced withdrawal: the look, the pod removed, and b's agent letting the object go on its next pass. */
const FORCED_WITHIN_MS = 30_000;
/** b's agent finds a gone on its next pass (10 s apart while nothing is pending) and says so. */
const AGENT_NOTICES_MS = 30_000;

/** Resolves when `check` holds, polled each second up to `timeoutMs`, naming `what` on failure. */
function until<T>(what: string, endpoint: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  return poll({ step: "test", object: what, endpoint }, { timeoutMs, intervalMs: 1_000 }, async () => {
    const value = await check();
    return value === undefined ? { done: false, state: "not yet" } : { done: true, value };
  });
}

describe("a namespace offloading whose provider is gone (shared lab)", () => {
  let pair: Pair | undefined;

  afterAll(async () => {
    if (pair) {
      await unpeerPair(pair).catch(() => undefined);
      await uninstallClusters([pair.b, pair.a], { keepDefinitions: true });
    }
    await releaseSharedLab();
  }, AFTER_ALL_BOUND_MS);

  test(
    "GIVEN a namespace offloaded to a with a pod there WHEN a refuses every connection THEN withdrawing fails within seconds " +
      "naming a and force, changing nothing, and b's agent reports a Unreachable; WITH force b's side goes at once and what " +
      "stays on a is listed, which its remedy removes once a is back",
    async () => {
      const lab = await sharedLab();
      pair = await peerPair(lab);
      const { a, b, record } = pair;
      const bCore = pair.consumer.kc.makeApiClient(k8s.CoreV1Api);
      const bCustom = pair.consumer.kc.makeApiClient(k8s.CustomObjectsApi);
      const aCore = pair.provider.kc.makeApiClient(k8s.CoreV1Api);
      const remoteNamespace = remoteNamespaceName(NAMESPACE, pair.consumer.clusterId, "suffixed");
      await offloadNamespace(pair.consumer.kc, NAMESPACE, remoteNamespace, record.virtualNodeName);
      await bCore.createNamespacedPod({
        namespace: NAMESPACE,
        body: { metadata: { name: "jar" }, spec: podtoolSpec(record.virtualNodeName) },
      });
      await until(`pod jar made on a in ${remoteNamespace}`, a.apiServerUrl, 90_000, async () =>
        (await aCore.listNamespacedPod({ namespace: remoteNamespace })).items.length === 1 ? true : undefined,
      );
      const offloading = async (): Promise<NamespaceOffloading | undefined> =>
        (await bCustom
          .getNamespacedCustomObject({
            ...group,
            plural: "namespaceoffloadings",
            namespace: NAMESPACE,
            name: NAMESPACE_OFFLOADING_NAME,
          })
          .catch(() => undefined)) as NamespaceOffloading | undefined;

      // a's API server resets every connection from b (its agent) and from the host (these steps).
      const rules = [b.address, lab.hostAddress].map((source) =>
        firewallRule(a.netns, [
          "INPUT",
          "-s",
          source,
          "-p",
          "tcp",
          "--dport",
          String(API_SERVER_PORT),
          "-j",
          "REJECT",
          "--reject-with",
          "tcp-reset",
        ]),
      );
      try {
        for (const rule of rules) await rule.insert();

        // Without force: fails within seconds, naming a, the URL, the cause and force; nothing changed.
        const started = Date.now();
        const refused = await withdrawNamespace(
          pair.consumer.kc,
          NAMESPACE,
          { force: false, timeoutMs: 60_000 },
          quietProgress,
        ).then(
          () => "resolved",
          (error: Error) => error.message,
        );
        expect(Date.now() - started).toBeLessThan(REFUSED_WITHIN_MS);
        expect(refused).toContain(`offloading: provider a is unreachable: API server ${a.apiServerUrl}: connection `);
        expect(refused).toContain(
          "Nothing was changed. If the provider is gone for good, set force: true on the NamespaceOffloading",
        );
        const kept = await offloading();
        expect(kept?.metadata.deletionTimestamp).toBeUndefined();
        expect(kept?.metadata.annotations?.[ABANDONED_VIRTUAL_NODES_ANNOTATION]).toBeUndefined();
        expect(
          (await bCore.readNamespacedPod({ name: "jar", namespace: NAMESPACE })).metadata?.deletionTimestamp,
        ).toBeUndefined();

        // b's agent backs off from a and says so in the offloading's status.
        const report = await until("b's agent reporting a Unreachable", b.apiServerUrl, AGENT_NOTICES_MS, async () =>
          (await offloading())?.status?.remotes?.find((r) => r.phase === "Unreachable"),
        );
        expect(report.message).toMatch(/^provider a cannot be reached: .*connection /);
        expect(report.message).toContain("the consumer's agent tries again after a pause that grows to 30 s");

        // With force: b's side goes within seconds; what stays on a is listed.
        const forcedAt = Date.now();
        const left = await withdrawNamespace(
          pair.consumer.kc,
          NAMESPACE,
          { force: true, timeoutMs: FORCED_WITHIN_MS },
          quietProgress,
        );
        expect(Date.now() - forcedAt).toBeLessThan(FORCED_WITHIN_MS);
        expect(left.map((l) => [l.provider.providerName, ...l.left])).toEqual([
          [
            "a",
            `namespace ${remoteNamespace} and the RemoteNamespace ${record.tenantNamespace}/${remoteNamespace} that asked for it`,
            `the ConfigMaps and Secrets reflected into ${remoteNamespace} (labelled ${API_GROUP}/reflected=true)`,
            `the pods offloaded there (${NAMESPACE}/jar) and their OffloadedPods in ${record.tenantNamespace}`,
          ],
        ]);
        expect(await offloading()).toBeUndefined();
        expect((await bCore.listNamespacedPod({ namespace: NAMESPACE })).items).toEqual([]);
      } finally {
        for (const rule of rules) await rule.remove();
      }

      // a is back: what was listed is there, and the remedy the list gives removes it all.
      expect((await aCore.readNamespace({ name: remoteNamespace })).metadata?.name).toBe(remoteNamespace);
      await pair.provider.kc.makeApiClient(k8s.CustomObjectsApi).deleteNamespacedCustomObject({
        ...group,
        plural: "remotenamespaces",
        namespace: record.tenantNamespace,
        name: remoteNamespace,
      });
      await until(`namespace ${remoteNamespace} removed from a`, a.apiServerUrl, 90_000, async () =>
        (await aCore.readNamespace({ name: remoteNamespace }).catch(() => undefined)) ? undefined : true,
      );
      await bCore.deleteNamespace({ name: NAMESPACE });
      await unpeerPair(pair);
      await uninstallClusters([b, a]);
      pair = undefined;
      expect(await projectTraces(b.kubeconfig)).toEqual([]);
      expect(await projectTraces(a.kubeconfig)).toEqual([]);
    },
    TEST_BOUND_MS,
  );
});
