/**
 * Resource metrics of offloaded pods, end to end on the shared lab: metrics-server on the provider
 * reads its kubelets; the consumer's virtual node serves what the provider's metrics API says of
 * each offloaded pod as a kubelet's `/metrics/resource`; the consumer's metrics-server scrapes it,
 * so `kubectl top pod` and a HorizontalPodAutoscaler work for an app that knows nothing of it.
 */
import * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { AGENT_NAME, COMPONENT_LABEL, KUBELET_PORT } from "../../core/cluster/agent-components.js";
import { remoteNamespaceName } from "../../core/offloading/reflection.js";
import { poll } from "../../core/wait/poll.js";
import { imageReference } from "../../local-cluster/node-images.js";
import { kubectl } from "../../local-cluster/pods.js";
import { releaseSharedLab, sharedLab } from "../../harness/labs.js";
import { uninstallClusters } from "../../harness/install.js";
import { deleteNamespaceAndWait, offloadNamespace, runningPods } from "../../harness/offloading.js";
import { httpsAnswer } from "../support/probes.js";
import { peerPair, quietProgress, unpeerPair, type Pair } from "../support/tunnel-pair.js";
import { TUNNEL_DEFAULTS } from "../../core/network-fabric/tunnel-plan.js";
import { ensureTunnel } from "../../core/network-fabric/tunnel.js";

const TEST_BOUND_MS = 12 * 60_000;
const AFTER_ALL_BOUND_MS = 300_000;
const NAMESPACE = "metered";

/** Deployment `busy`: one podtool pod asking for 100m of CPU and allowed 200m, as a chart ships it (no node selector, no toleration). */
const busy: k8s.V1Deployment = {
  metadata: { name: "busy" },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: "busy" } },
    template: {
      metadata: { labels: { app: "busy" } },
      spec: {
        containers: [
          {
            name: "podtool",
            image: imageReference("podtool"),
            imagePullPolicy: "Never",
            resources: { requests: { cpu: "100m", memory: "16Mi" }, limits: { cpu: "200m", memory: "64Mi" } },
          },
        ],
      },
    },
  },
};

/** Scales `busy` between 1 and 3 to keep its pods at half the CPU they ask for; down at once when they idle. */
const autoscaler: k8s.V2HorizontalPodAutoscaler = {
  metadata: { name: "busy" },
  spec: {
    scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "busy" },
    minReplicas: 1,
    maxReplicas: 3,
    metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } } }],
    behavior: { scaleDown: { stabilizationWindowSeconds: 0 } },
  },
};

describe("resource metrics of offloaded pods (shared lab)", () => {
  let pair: Pair | undefined;

  afterAll(async () => {
    if (pair) {
      await deleteNamespaceAndWait(pair.consumer.kc, NAMESPACE).catch(() => undefined);
      await unpeerPair(pair).catch(() => undefined);
      await uninstallClusters([pair.b, pair.a], { keepDefinitions: true });
    }
    await releaseSharedLab();
  }, AFTER_ALL_BOUND_MS);

  test(
    "GIVEN a Deployment in a namespace offloaded remote WHEN its pod runs and then burns CPU THEN kubectl top pod shows " +
      "its CPU and memory on the consumer, an HPA scales it to 3 on the virtual node and back to 1; a token the API " +
      "server does not vouch for, or a user without nodes/metrics, gets no metrics; the consumer's identity reads " +
      "no metrics outside its namespaces on the provider",
    async () => {
      // An offer with room for what the pods ask: up to 3 of 100m and 16Mi.
      pair = await peerPair(await sharedLab(), { resources: { cpu: "1", memory: "1Gi", pods: 10 } });
      // With the tunnel, as a user runs it: an offloaded pod shows its address only once it is up.
      await ensureTunnel(
        pair.sides,
        { server: "provider", serverAddress: pair.a.publicAddress, ...TUNNEL_DEFAULTS, behindNat: [] },
        120_000,
        quietProgress,
      );
      const { b, record } = pair;
      const remoteNamespace = remoteNamespaceName(NAMESPACE, pair.consumer.clusterId, "suffixed");
      await offloadNamespace(pair.consumer.kc, NAMESPACE, remoteNamespace, record.virtualNodeName, "remote");
      await pair.consumer.kc
        .makeApiClient(k8s.AppsV1Api)
        .createNamespacedDeployment({ namespace: NAMESPACE, body: busy });
      const [pod] = await runningPods(pair.consumer.kc, NAMESPACE, "app=busy", 1);
      const name = pod!.metadata!.name!;
      expect(pod!.spec!.nodeName).toBe(record.virtualNodeName);

      // kubectl top pod: the provider's metrics-server reads the pod twice, then the consumer's reads the virtual node twice.
      const top = await poll(
        { step: "test", object: `kubectl top pod ${NAMESPACE}/${name}`, endpoint: b.apiServerUrl },
        { timeoutMs: 240_000, intervalMs: 5_000 },
        async () =>
          kubectl(b, ["top", "pod", "-n", NAMESPACE, name, "--no-headers"]).then(
            (out) => ({ done: true, value: out.trim() }),
            (error: Error) => ({ done: false, state: error.message }),
          ),
      );
      const [shownName, cpu, memory] = top.split(/\s+/);
      expect(shownName).toBe(name);
      expect(cpu).toMatch(/^\d+m$/);
      expect(memory).toMatch(/^[1-9]\d*Mi$/);

      // Under load (one pod burning what its limit lets it), the HPA scales the Deployment to 3 on the virtual node.
      await pair.consumer.kc
        .makeApiClient(k8s.AutoscalingV2Api)
        .createNamespacedHorizontalPodAutoscaler({ namespace: NAMESPACE, body: autoscaler });
      const burning = kubectl(b, ["exec", "-n", NAMESPACE, name, "--", "/podtool", "burn", "150"]);
      const scaledTo = (replicas: number, timeoutMs: number) =>
        poll(
          { step: "test", object: `Deployment ${NAMESPACE}/busy at ${replicas} replicas`, endpoint: b.apiServerUrl },
          { timeoutMs, intervalMs: 2_000 },
          async () => {
            const live = await pair!.consumer.kc
              .makeApiClient(k8s.AppsV1Api)
              .readNamespacedDeployment({ name: "busy", namespace: NAMESPACE });
            return live.spec?.replicas === replicas
              ? { done: true, value: undefined }
              : { done: false, state: `${live.spec?.replicas} replicas` };
          },
        );
      await scaledTo(3, 150_000);
      const pods = await runningPods(pair.consumer.kc, NAMESPACE, "app=busy", 3);
      expect(new Set(pods.map((p) => p.spec?.nodeName))).toEqual(new Set([record.virtualNodeName]));
      expect(await burning).toContain("burned");
      // Idle again: back to 1.
      await scaledTo(1, 240_000);

      // The endpoint, to strangers: a forged bearer token, and a real one of a user that may not read node metrics.
      const agentPod = (
        await pair.consumer.kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({
          namespace: SYSTEM_NAMESPACE,
          labelSelector: `${COMPONENT_LABEL}=${AGENT_NAME}`,
        })
      ).items.find((p) => p.status?.podIP)!;
      const metricsUrl = `https://${agentPod.status!.podIP}:${KUBELET_PORT}/metrics/resource`;
      expect(await httpsAnswer(b.netns, metricsUrl, { token: "forged.token.value" })).toBe(
        "401 the bearer token is not one this cluster's API server vouches for",
      );
      const defaultToken = (
        await pair.consumer.kc.makeApiClient(k8s.CoreV1Api).createNamespacedServiceAccountToken({
          name: "default",
          namespace: NAMESPACE,
          body: { spec: { audiences: [], expirationSeconds: 600 } },
        })
      ).status!.token!;
      expect(await httpsAnswer(b.netns, metricsUrl, { token: defaultToken })).toBe(
        `403 user system:serviceaccount:${NAMESPACE}:default may not get nodes/metrics of any virtual node here`,
      );

      // On the provider, the consumer's identity reads pod metrics of its own namespace only.
      const asConsumer = pair.sides.provider.kc.makeApiClient(k8s.CustomObjectsApi);
      const metricsOf = (namespace: string) =>
        asConsumer
          .listNamespacedCustomObject({ group: "metrics.k8s.io", version: "v1beta1", namespace, plural: "pods" })
          .then(
            () => 200,
            (error: { code?: number }) => error.code,
          );
      expect([await metricsOf(remoteNamespace), await metricsOf("kube-system")]).toEqual([200, 403]);
    },
    TEST_BOUND_MS,
  );
});
