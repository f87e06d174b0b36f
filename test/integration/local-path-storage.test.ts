/**
 * Every local cluster has storage, as most clusters do (local-cluster/local-path-storage.ts): a
 * claim that names no class gets the default one, `local-path`, waits for its first pod, is made on
 * that pod's node as a directory of the node's own, keeps what a pod wrote for the next pod, and
 * goes, volume and directory, with the claim. On the shared lab's cluster `a`.
 */
import { existsSync, readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { deleteOptional, readOptional } from "../../core/kube/client.js";
import { poll } from "../../core/wait/poll.js";
import { adminConfig } from "../../harness/install.js";
import { releaseSharedLab, sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { deleteNamespaceAndWait } from "../../harness/offloading.js";
import { clusterOf } from "../../local-cluster/lab.js";
import { STORAGE_CLASS } from "../../local-cluster/local-path-storage.js";
import { imageReference } from "../../local-cluster/node-images.js";
import { nodePaths } from "../../local-cluster/node-plan.js";

/** The test's bound: two pods started and finished, a volume made and removed by helper pods. */
const TEST_BOUND_MS = 5 * 60_000;
const CLAIM = "data";
/** Where the pods mount the claim. */
const MOUNT = "/data";

/** A pod that runs `script` in the storage image (the one image of the lab with a shell) with the claim at /data, once. */
const shellPod = (name: string, script: string): k8s.V1Pod => ({
  metadata: { name },
  spec: {
    restartPolicy: "Never",
    containers: [
      {
        name: "sh",
        image: imageReference("local-path-provisioner"),
        imagePullPolicy: "Never",
        command: ["sh", "-c", script],
        volumeMounts: [{ name: "data", mountPath: MOUNT }],
      },
    ],
    volumes: [{ name: "data", persistentVolumeClaim: { claimName: CLAIM } }],
  },
});

describe("local-path storage (shared lab)", () => {
  afterAll(async () => {
    await releaseSharedLab();
  }, SHARED_LAB_BOUND_MS);

  test(
    "GIVEN a claim without a class WHEN a pod writes to it, is deleted, and another pod reads it THEN the claim " +
      "has the default class local-path, is Pending until the first pod and then Bound to a volume on that " +
      "pod's node under the node's own directory; the second pod reads what the first wrote; deleting the " +
      "claim removes the volume and its directory",
    async () => {
      const lab = await sharedLab();
      const cluster = clusterOf(lab, "a");
      const kc = adminConfig(cluster);
      const core = kc.makeApiClient(k8s.CoreV1Api);
      const endpoint = cluster.apiServerUrl;
      const namespace = `storage-${randomBytes(3).toString("hex")}`;
      const proof = `written ${randomBytes(6).toString("hex")}`;
      let volume: { name: string; path: string } | undefined;
      const podDone = (name: string) =>
        poll(
          { step: "test", object: `pod ${namespace}/${name} Succeeded`, endpoint },
          { timeoutMs: 120_000, intervalMs: 500 },
          async () => {
            const pod = await core.readNamespacedPod({ namespace, name });
            const phase = pod.status?.phase;
            if (phase === "Failed")
              return { failed: true, reason: `pod ${name} failed: ${JSON.stringify(pod.status?.containerStatuses)}` };
            return phase === "Succeeded"
              ? { done: true, value: pod }
              : {
                  done: false,
                  state: `${phase}; ${(pod.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.message ?? ""}`).join(", ")}`,
                };
          },
        );
      const podGone = async (name: string) => {
        await deleteOptional(() => core.deleteNamespacedPod({ namespace, name }));
        await poll(
          { step: "test", object: `pod ${namespace}/${name} gone`, endpoint },
          { timeoutMs: 60_000, intervalMs: 500 },
          async () =>
            (await readOptional(() => core.readNamespacedPod({ namespace, name })))
              ? { done: false, state: "still there" }
              : { done: true, value: undefined },
        );
      };
      try {
        await core.createNamespace({ body: { metadata: { name: namespace } } });
        const claim = await core.createNamespacedPersistentVolumeClaim({
          namespace,
          body: {
            metadata: { name: CLAIM },
            spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "16Mi" } } },
          },
        });
        // The API server's DefaultStorageClass admission gave it the default class.
        expect(claim.spec?.storageClassName).toBe(STORAGE_CLASS);

        // The volume controller looked at it and waits for a pod: Pending, no volume.
        await poll(
          { step: "test", object: `claim ${namespace}/${CLAIM}: WaitForFirstConsumer event`, endpoint },
          { timeoutMs: 60_000, intervalMs: 500 },
          async () => {
            const events = await core.listNamespacedEvent({
              namespace,
              fieldSelector: `involvedObject.kind=PersistentVolumeClaim,involvedObject.name=${CLAIM}`,
            });
            return events.items.some((e) => e.reason === "WaitForFirstConsumer")
              ? { done: true, value: undefined }
              : { done: false, state: events.items.map((e) => e.reason).join(", ") || "no event" };
          },
        );
        const waiting = await core.readNamespacedPersistentVolumeClaim({ namespace, name: CLAIM });
        expect(waiting.status?.phase).toBe("Pending");
        expect(waiting.spec?.volumeName ?? "").toBe("");

        // The first pod: the claim is bound to a volume made on the pod's node, where the pod writes.
        await core.createNamespacedPod({ namespace, body: shellPod("writer", `echo "${proof}" > ${MOUNT}/proof`) });
        const writer = await podDone("writer");
        const bound = await core.readNamespacedPersistentVolumeClaim({ namespace, name: CLAIM });
        expect(bound.status?.phase).toBe("Bound");
        const pv = await core.readPersistentVolume({ name: bound.spec!.volumeName! });
        const node = cluster.nodes.find((n) => n.name === writer.spec?.nodeName)!;
        expect(node).toBeDefined();
        expect(pv.spec).toMatchObject({ storageClassName: STORAGE_CLASS, persistentVolumeReclaimPolicy: "Delete" });
        expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values).toEqual([
          node.name,
        ]);
        volume = { name: pv.metadata!.name!, path: pv.spec!.hostPath!.path };
        expect(volume.path).toBe(join(nodePaths(node.dir).volumes, `${volume.name}_${namespace}_${CLAIM}`));
        expect(readFileSync(join(volume.path, "proof"), "utf8")).toBe(`${proof}\n`);

        // The first pod gone, a second one with the same claim reads what it wrote.
        await podGone("writer");
        await core.createNamespacedPod({ namespace, body: shellPod("reader", `cat ${MOUNT}/proof`) });
        await podDone("reader");
        expect(await core.readNamespacedPodLog({ namespace, name: "reader" })).toBe(`${proof}\n`);
        await podGone("reader");

        // The claim deleted: its volume goes (reclaim policy Delete), and a helper pod removes the directory.
        await core.deleteNamespacedPersistentVolumeClaim({ namespace, name: CLAIM });
        const { name, path } = volume;
        await poll(
          { step: "test", object: `volume ${name} and its directory ${path} gone`, endpoint },
          { timeoutMs: 120_000, intervalMs: 500 },
          async () => {
            const left = await readOptional(() => core.readPersistentVolume({ name }));
            return left || existsSync(path)
              ? {
                  done: false,
                  state: `volume ${left ? left.status?.phase : "gone"}, directory ${existsSync(path) ? "there" : "gone"}`,
                }
              : { done: true, value: undefined };
          },
        );
      } finally {
        await deleteNamespaceAndWait(kc, namespace);
        if (volume) await deleteOptional(() => core.deletePersistentVolume({ name: volume!.name }));
      }
    },
    TEST_BOUND_MS,
  );
});
