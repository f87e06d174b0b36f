/**
 * Volumes that follow their pods, end to end on the shared lab: a StatefulSet as a chart ships it
 * (no node selector, no toleration) with claims of class `pulumi-liqo`, in a namespace offloaded
 * with the default placement. Its pods go to the virtual node (only there are such claims served);
 * b's agent asks a for each claim, a makes one of its default StorageClass (its local-path
 * provisioner), and b's claims show Bound. Each pod writes a file, is deleted, comes back on the
 * virtual node and reads it. A claim a cannot serve (ReadWriteMany) gives its pod a condition naming
 * why. b's identity can neither take a's own claim by name, nor mount it in a pod it asks for, nor
 * choose a's storage class. Withdrawing the namespace with the StatefulSet running leaves no claim
 * or volume on a; b's claims stay until deleted (as a StatefulSet's always do), and the volumes
 * made for them go with them.
 */
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  OFFLOADED_STORAGE_CLASS,
  tenantRequestName,
  type OffloadedPod,
  type OffloadingAnswer,
  type ReflectedClaim,
} from "../../core/api/index.js";
import { offeredStorageOf } from "../../core/offloading/claim-reflection.js";
import { OFFLOADED_CONDITION, remoteNamespaceName } from "../../core/offloading/reflection.js";
import { withdrawNamespace } from "../../core/offloading/namespace-offloading.js";
import { poll } from "../../core/wait/poll.js";
import { imageReference } from "../../local-cluster/node-images.js";
import { kubectl } from "../../local-cluster/pods.js";
import { releaseSharedLab, sharedLab } from "../../harness/labs.js";
import { scaleAgent, uninstallClusters } from "../../harness/install.js";
import { deleteNamespaceAndWait, offloadNamespace, podtoolSpec, runningPods } from "../../harness/offloading.js";
import { peerPair, quietProgress, unpeerPair, type Pair } from "../support/tunnel-pair.js";
import { TUNNEL_DEFAULTS } from "../../core/network-fabric/tunnel-plan.js";
import { ensureTunnel } from "../../core/network-fabric/tunnel.js";

const TEST_BOUND_MS = 12 * 60_000;
const AFTER_ALL_BOUND_MS = 300_000;
const NAMESPACE = "ledger";
const group = { group: API_GROUP, version: API_VERSION };

/** StatefulSet `db`: 2 podtool pods, each with its own claim `data` of the offloaded class, mounted at /data. */
const statefulSet: k8s.V1StatefulSet = {
  metadata: { name: "db" },
  spec: {
    serviceName: "db",
    replicas: 2,
    selector: { matchLabels: { app: "db" } },
    template: {
      metadata: { labels: { app: "db" } },
      spec: {
        containers: [
          {
            name: "podtool",
            image: imageReference("podtool"),
            imagePullPolicy: "Never",
            volumeMounts: [{ name: "data", mountPath: "/data" }],
          },
        ],
      },
    },
    volumeClaimTemplates: [
      {
        metadata: { name: "data" },
        spec: {
          storageClassName: OFFLOADED_STORAGE_CLASS,
          accessModes: ["ReadWriteOnce"],
          resources: { requests: { storage: "16Mi" } },
        },
      },
    ],
  },
};

/** What a test that waits on claims shows when it fails: both sides' claims and volumes, and both agents' last lines. */
async function showClaims({ a, b }: Pair): Promise<void> {
  for (const [cluster, args] of [
    [b, ["get", "pvc,pv,pod", "-n", NAMESPACE, "-o", "wide"]],
    [b, ["get", "events", "-n", NAMESPACE]],
    [a, ["get", "reflectedclaims,pvc", "-A", "-o", "yaml"]],
    [b, ["logs", "-n", "pulumi-liqo-system", "deploy/pulumi-liqo-agent", "--tail", "40"]],
    [a, ["logs", "-n", "pulumi-liqo-system", "deploy/pulumi-liqo-agent", "--tail", "40"]],
  ] as const)
    console.log(
      `${cluster.name}: kubectl ${args.join(" ")}\n`,
      await kubectl(cluster, [...args]).catch((e: Error) => e.message),
    );
}

describe("volumes that follow their pods (shared lab)", () => {
  let pair: Pair | undefined;

  afterAll(async () => {
    if (pair) {
      await scaleAgent(pair.b, 1).catch(() => undefined);
      await deleteNamespaceAndWait(pair.consumer.kc, NAMESPACE).catch(() => undefined);
      await unpeerPair(pair).catch(() => undefined);
      await uninstallClusters([pair.b, pair.a], { keepDefinitions: true });
    }
    await releaseSharedLab();
  }, AFTER_ALL_BOUND_MS);

  test(
    "GIVEN a StatefulSet of 2 with claims of class pulumi-liqo in a namespace offloaded by default WHEN it runs THEN its " +
      "pods run on the virtual node, a holds each claim in its default class and b's show Bound; a file written survives " +
      "each pod's deletion; a ReadWriteMany claim gives its pod a condition naming why; b's identity can neither take " +
      "nor mount a's own claim nor choose a's class; withdrawing with the StatefulSet running leaves no claim or volume on a",
    async () => {
      pair = await peerPair(await sharedLab());
      await ensureTunnel(
        pair.sides,
        { server: "provider", serverAddress: pair.a.publicAddress, ...TUNNEL_DEFAULTS, behindNat: [] },
        120_000,
        quietProgress,
      );
      const { a, b, record } = pair;
      const [aCore, bCore] = [pair.provider.kc, pair.consumer.kc].map((kc) => kc.makeApiClient(k8s.CoreV1Api));
      const remoteNamespace = remoteNamespaceName(NAMESPACE, pair.consumer.clusterId, "suffixed");
      const offered = offeredStorageOf(
        (await pair.provider.kc.makeApiClient(k8s.StorageV1Api).listStorageClass()).items,
      );
      expect(offered).toBeDefined();
      await offloadNamespace(pair.consumer.kc, NAMESPACE, remoteNamespace, record.virtualNodeName);
      await bCore.createNamespacedService({
        namespace: NAMESPACE,
        body: { metadata: { name: "db" }, spec: { clusterIP: "None", selector: { app: "db" } } },
      });
      const apps = pair.consumer.kc.makeApiClient(k8s.AppsV1Api);
      await apps.createNamespacedStatefulSet({ namespace: NAMESPACE, body: statefulSet });
      const first = await runningPods(pair.consumer.kc, NAMESPACE, "app=db", 2).catch(async (error: unknown) => {
        await showClaims(pair!);
        throw error;
      });
      expect(first.map((p) => p.spec!.nodeName)).toEqual([record.virtualNodeName, record.virtualNodeName]);

      // b's claims Bound to the volumes its agent made; a's in its default class, Bound where the pods run.
      const claims = await bCore.listNamespacedPersistentVolumeClaim({ namespace: NAMESPACE });
      expect(claims.items.map((c) => [c.metadata!.name, c.status?.phase, c.spec?.volumeName]).sort()).toEqual(
        ["data-db-0", "data-db-1"].map((name) => {
          const uid = claims.items.find((c) => c.metadata!.name === name)!.metadata!.uid!;
          return [name, "Bound", `pulumi-liqo-${uid}`];
        }),
      );
      const held = await aCore.listNamespacedPersistentVolumeClaim({ namespace: remoteNamespace });
      expect(held.items.map((c) => [c.metadata!.name, c.spec?.storageClassName, c.status?.phase]).sort()).toEqual([
        ["data-db-0", offered!.storageClass, "Bound"],
        ["data-db-1", offered!.storageClass, "Bound"],
      ]);

      // Each pod writes its file; deleted, it comes back on the virtual node (its volume's node) and reads it.
      const podtool = (pod: string, ...args: string[]) =>
        kubectl(b, ["exec", "-n", NAMESPACE, pod, "--", "/podtool", ...args]);
      for (const pod of ["db-0", "db-1"]) await podtool(pod, "write", "/data/who", `written by ${pod}`);
      await bCore.deleteNamespacedPod({ name: "db-0", namespace: NAMESPACE });
      await bCore.deleteNamespacedPod({ name: "db-1", namespace: NAMESPACE });
      const before = new Set(first.map((p) => p.metadata!.uid));
      const again = await poll(
        { step: "test", object: "db-0 and db-1 made again and Running", endpoint: b.apiServerUrl },
        { timeoutMs: 180_000, intervalMs: 1_000 },
        async () => {
          const pods = (await bCore.listNamespacedPod({ namespace: NAMESPACE, labelSelector: "app=db" })).items;
          const fresh = pods.filter((p) => !before.has(p.metadata!.uid) && p.status?.phase === "Running");
          return fresh.length === 2
            ? { done: true, value: fresh }
            : { done: false, state: pods.map((p) => `${p.metadata!.name} ${p.status?.phase}`).join(", ") };
        },
      );
      expect(again.map((p) => p.spec!.nodeName)).toEqual([record.virtualNodeName, record.virtualNodeName]);
      for (const pod of ["db-0", "db-1"])
        expect((await podtool(pod, "read", "/data/who")).trim()).toBe(`written by ${pod}`);

      // A claim a does not serve (shared by many nodes): its pod is told why, and a makes nothing.
      await bCore.createNamespacedPersistentVolumeClaim({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "shared" },
          spec: {
            storageClassName: OFFLOADED_STORAGE_CLASS,
            accessModes: ["ReadWriteMany"],
            resources: { requests: { storage: "16Mi" } },
          },
        },
      });
      await bCore.createNamespacedPod({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "reader" },
          spec: {
            containers: [{ name: "podtool", image: imageReference("podtool"), imagePullPolicy: "Never" }],
            volumes: [{ name: "shared", persistentVolumeClaim: { claimName: "shared" } }],
          },
        },
      });
      const told = await poll(
        { step: "test", object: `pod ${NAMESPACE}/reader told why its claim is not served`, endpoint: b.apiServerUrl },
        { timeoutMs: 120_000, intervalMs: 1_000 },
        async () => {
          const pod = await bCore.readNamespacedPod({ name: "reader", namespace: NAMESPACE });
          const condition = pod.status?.conditions?.find((c) => c.type === OFFLOADED_CONDITION);
          return condition ? { done: true, value: condition } : { done: false, state: pod.status?.phase ?? "" };
        },
      );
      expect(told).toMatchObject({ status: "False", reason: "AccessModeRefused" });
      expect(told.message).toContain("ReadWriteMany");
      expect(
        (await bCore.readNamespacedPersistentVolumeClaim({ name: "shared", namespace: NAMESPACE })).status?.phase,
      ).toBe("Pending");
      expect(
        (await aCore.listNamespacedPersistentVolumeClaim({ namespace: remoteNamespace })).items.map(
          (c) => c.metadata!.name,
        ),
      ).not.toContain("shared");
      await bCore.deleteNamespacedPod({ name: "reader", namespace: NAMESPACE, gracePeriodSeconds: 0 });
      await bCore.deleteNamespacedPersistentVolumeClaim({ name: "shared", namespace: NAMESPACE });

      // Attacks, as b's identity (b's agent stopped, so that it withdraws none of them first): a claim
      // of a's own in the remote namespace can neither be taken by name nor mounted; a request naming
      // a class and a volume gets a's class and a new volume.
      await aCore.createNamespacedPersistentVolumeClaim({
        namespace: remoteNamespace,
        body: {
          metadata: { name: "vault" },
          spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "16Mi" } } },
        },
      });
      const vault = await aCore.readNamespacedPersistentVolumeClaim({ name: "vault", namespace: remoteNamespace });
      await scaleAgent(b, 0);
      const asB = pair.sides.provider.kc.makeApiClient(k8s.CustomObjectsApi);
      const inTenant = { ...group, namespace: record.tenantNamespace };
      const claimRequest = (name: string, claim: Record<string, unknown>): ReflectedClaim => ({
        apiVersion: API_GROUP_VERSION,
        kind: "ReflectedClaim",
        metadata: { name: tenantRequestName(remoteNamespace, name), namespace: record.tenantNamespace },
        spec: {
          namespace: remoteNamespace,
          claim: { name, storage: "16Mi", accessModes: ["ReadWriteOnce"], ...claim },
        },
      });
      await asB.createNamespacedCustomObject({
        ...inTenant,
        plural: "reflectedclaims",
        body: claimRequest("vault", {}),
      });
      await asB.createNamespacedCustomObject({
        ...inTenant,
        plural: "reflectedclaims",
        body: claimRequest("chosen", { storageClassName: "admins-only", volumeName: vault.spec?.volumeName ?? "pv-x" }),
      });
      const mounting: OffloadedPod = {
        apiVersion: API_GROUP_VERSION,
        kind: "OffloadedPod",
        metadata: { name: tenantRequestName(remoteNamespace, "thief"), namespace: record.tenantNamespace },
        spec: {
          namespace: remoteNamespace,
          name: "thief",
          consumerUid: "forged",
          pod: {
            ...podtoolSpec("x"),
            nodeSelector: undefined,
            tolerations: undefined,
            volumes: [{ name: "vault", persistentVolumeClaim: { claimName: "vault" } }],
          },
        },
      };
      await asB.createNamespacedCustomObject({ ...inTenant, plural: "offloadedpods", body: mounting });
      const answerOf = (plural: string, name: string) =>
        poll(
          { step: "test", object: `${plural} ${name} answered`, endpoint: a.apiServerUrl },
          { timeoutMs: 60_000, intervalMs: 500 },
          async () => {
            const live = (await pair!.provider.kc
              .makeApiClient(k8s.CustomObjectsApi)
              .getNamespacedCustomObject({ ...inTenant, plural, name })) as { status?: OffloadingAnswer };
            return live.status?.phase ? { done: true, value: live.status } : { done: false, state: "no answer" };
          },
        );
      expect(await answerOf("reflectedclaims", tenantRequestName(remoteNamespace, "vault"))).toMatchObject({
        phase: "Refused",
        reason: "NameTaken",
      });
      expect(await answerOf("offloadedpods", tenantRequestName(remoteNamespace, "thief"))).toMatchObject({
        phase: "Refused",
        reason: "ClaimNotHeld",
      });
      expect(await answerOf("reflectedclaims", tenantRequestName(remoteNamespace, "chosen"))).toMatchObject({
        phase: "Accepted",
      });
      const chosen = await aCore.readNamespacedPersistentVolumeClaim({ name: "chosen", namespace: remoteNamespace });
      expect([chosen.spec?.storageClassName, chosen.spec?.volumeName]).toEqual([offered!.storageClass, undefined]);
      const vaultAfter = await aCore.readNamespacedPersistentVolumeClaim({ name: "vault", namespace: remoteNamespace });
      expect([vaultAfter.metadata?.uid, vaultAfter.metadata?.labels]).toEqual([
        vault.metadata?.uid,
        vault.metadata?.labels,
      ]);
      expect(
        (await aCore.listNamespacedPod({ namespace: remoteNamespace })).items.map((p) => p.metadata!.name),
      ).not.toContain("thief");
      for (const [plural, name] of [
        ["reflectedclaims", "vault"],
        ["reflectedclaims", "chosen"],
        ["offloadedpods", "thief"],
      ] as const)
        await asB.deleteNamespacedCustomObject({ ...inTenant, plural, name: tenantRequestName(remoteNamespace, name) });
      await aCore.deleteNamespacedPersistentVolumeClaim({ name: "vault", namespace: remoteNamespace });
      await scaleAgent(b, 1);

      // Withdrawn with the StatefulSet running: a keeps no claim, and no volume, of b's.
      await withdrawNamespace(pair.consumer.kc, NAMESPACE, { force: false, timeoutMs: 180_000 }, quietProgress);
      await poll(
        { step: "test", object: `no claim or volume of ${remoteNamespace} left on a`, endpoint: a.apiServerUrl },
        { timeoutMs: 120_000, intervalMs: 1_000 },
        async () => {
          const volumes = (await aCore.listPersistentVolume()).items.filter(
            (v) => v.spec?.claimRef?.namespace === remoteNamespace,
          );
          const namespace = await aCore.readNamespace({ name: remoteNamespace }).catch(() => undefined);
          return !namespace && volumes.length === 0
            ? { done: true, value: undefined }
            : { done: false, state: `${volumes.length} volumes, namespace ${namespace ? "there" : "gone"}` };
        },
      );
      // b's claims are the StatefulSet's, and stay until deleted; the volumes b's agent made go with them.
      await apps.deleteNamespacedStatefulSet({ name: "db", namespace: NAMESPACE });
      for (const name of ["data-db-0", "data-db-1"])
        await bCore.deleteNamespacedPersistentVolumeClaim({ name, namespace: NAMESPACE });
      await poll(
        { step: "test", object: "no volume of b's agent left on b", endpoint: b.apiServerUrl },
        { timeoutMs: 120_000, intervalMs: 1_000 },
        async () => {
          const left = (await bCore.listPersistentVolume({ labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}` })).items;
          return left.length === 0
            ? { done: true, value: undefined }
            : { done: false, state: left.map((v) => `${v.metadata!.name} ${v.status?.phase}`).join(", ") };
        },
      );
    },
    TEST_BOUND_MS,
  );
});
