/**
 * Offloading at scale: on a lab of two clusters of one node each, b peered with a and a namespace
 * of b offloaded to a, `kubectl scale --replicas=N` of a Deployment of podtool pods on the virtual
 * node, timed until all N are Running on b; against the same Deployment scaled on a directly,
 * side by side in the same run. Then the two agents' memory and CPU while those pods run idle.
 */
import * as k8s from "@kubernetes/client-node";
import { remoteNamespaceName } from "../core/offloading/reflection.js";
import { createPeering, deletePeering } from "../core/peering/peering.js";
import type { PeeringRecord } from "../core/peering/peering-plan.js";
import { progressTo } from "../core/operation/progress.js";
import { poll } from "../core/wait/poll.js";
import { clusterOf, type ClusterState } from "../local-cluster/lab.js";
import { kubectl } from "../local-cluster/pods.js";
import { offloadNamespace, podtoolSpec } from "../harness/offloading.js";
import { preparePeering } from "../harness/peering-pair.js";
import { agentProcess, processUsage } from "./agent-usage.js";
import { ratio, series, target, timed, type Log, type SectionResult } from "./figures.js";
import { privateLabs, type LabRunner } from "./labs.js";

const NAMESPACE = "bench";
const quiet = progressTo(() => undefined);

/** Waits until `namespace` of `cluster` has `count` pods of `app=web` Running (none left, for 0). */
export async function settle(
  kc: k8s.KubeConfig,
  cluster: ClusterState,
  namespace: string,
  count: number,
): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await poll(
    { step: "bench", object: `${count} pods Running in ${cluster.name}/${namespace}`, endpoint: cluster.apiServerUrl },
    // A list of hundreds of pods every 500 ms would load the API server the figures are taken on.
    { timeoutMs: 20 * 60_000, intervalMs: Math.max(500, count * 4) },
    async () => {
      const pods = (await core.listNamespacedPod({ namespace, labelSelector: "app=web" })).items;
      const running = pods.filter((p) => p.status?.phase === "Running" && !p.metadata?.deletionTimestamp).length;
      const done = count === 0 ? pods.length === 0 : running === count;
      return done ? { done: true, value: undefined } : { done: false, state: `${running} Running of ${pods.length}` };
    },
  );
}

/**
 * Seconds from the first `kubectl scale` of Deployment `web` to all its `count` pods Running. It
 * grows by `step` pods at a time, each step Running before the next, as hundreds of pods started
 * at once on these 2 cores overload the nodes' runtimes (contexts' deadlines pass: the figure would
 * be the machine's, not the product's).
 */
export async function scaleTime(
  kc: k8s.KubeConfig,
  cluster: ClusterState,
  namespace: string,
  count: number,
  step = count,
): Promise<number> {
  const { seconds } = await timed(async () => {
    for (let replicas = Math.min(step, count); ; replicas = Math.min(replicas + step, count)) {
      await kubectl(cluster, ["scale", "-n", namespace, "deployment/web", `--replicas=${replicas}`]);
      await settle(kc, cluster, namespace, replicas);
      if (replicas === count) break;
    }
  });
  return seconds;
}

/** Creates Deployment `web` (no replicas yet) of pods with `spec` in `namespace`. */
export async function createDeployment(kc: k8s.KubeConfig, namespace: string, spec: k8s.V1PodSpec): Promise<void> {
  await kc.makeApiClient(k8s.AppsV1Api).createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name: "web" },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: "web" } },
        template: { metadata: { labels: { app: "web" } }, spec },
      },
    },
  });
}

/** The offloading figures: `count` pods offloaded against `count` scheduled directly, `rounds` times each, then `idle` seconds of usage. */
export async function benchOffloading(
  count: number,
  rounds: number,
  idle: number,
  log: Log,
  labs: LabRunner = privateLabs,
): Promise<SectionResult> {
  return labs([{ name: "a" }, { name: "b" }], {}, async (lab) => {
    const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
    const pair = await preparePeering(a, b, { pods: count + 10 });
    let record: PeeringRecord | undefined;
    try {
      record = await createPeering(pair.request, quiet);
      const [provider, consumer] = [pair.provider.kc, pair.consumer.kc];
      await provider.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } });
      const plain = podtoolSpec(record.virtualNodeName);
      await createDeployment(provider, NAMESPACE, { containers: plain.containers });
      const remoteNamespace = remoteNamespaceName(NAMESPACE, pair.consumer.clusterId, "suffixed");
      await offloadNamespace(consumer, NAMESPACE, remoteNamespace, record.virtualNodeName);
      await createDeployment(consumer, NAMESPACE, plain);
      const direct: number[] = [];
      const offloaded: number[] = [];
      for (let round = 1; round <= rounds; round++) {
        direct.push(await scaleTime(provider, a, NAMESPACE, count));
        log(`round ${round}: ${count} pods on a directly: ${direct.at(-1)!.toFixed(1)} s`);
        await kubectl(a, ["scale", "-n", NAMESPACE, "deployment/web", "--replicas=0"]);
        await settle(provider, a, NAMESPACE, 0);
        offloaded.push(await scaleTime(consumer, b, NAMESPACE, count));
        log(`round ${round}: ${count} pods offloaded from b: ${offloaded.at(-1)!.toFixed(1)} s`);
        if (round < rounds) {
          await kubectl(b, ["scale", "-n", NAMESPACE, "deployment/web", "--replicas=0"]);
          await settle(consumer, b, NAMESPACE, 0);
        }
      }
      log(`${count} offloaded pods running: watching both agents idle for ${idle} s`);
      const usage = await processUsage([await agentProcess(consumer, "b"), await agentProcess(provider, "a")], idle);
      await kubectl(b, ["scale", "-n", NAMESPACE, "deployment/web", "--replicas=0"]);
      await settle(consumer, b, NAMESPACE, 0);
      const directSeries = series(`${count} pods Running, scheduled on the provider directly`, "s", direct);
      const offloadedSeries = series(`${count} pods Running on the consumer, offloaded`, "s", offloaded);
      const [consumerAgent, providerAgent] = usage;
      return {
        series: [
          directSeries,
          offloadedSeries,
          series(`consumer agent memory, ${count} offloaded pods idle`, "MiB", [consumerAgent!.rssMiB]),
          series(`consumer agent CPU, ${count} offloaded pods idle`, "%", [consumerAgent!.cpuPercent]),
          series(`provider agent memory, ${count} offloaded pods idle`, "MiB", [providerAgent!.rssMiB]),
          series(`provider agent CPU, ${count} offloaded pods idle`, "%", [providerAgent!.cpuPercent]),
        ],
        targets: [
          target(`${count} offloaded pods Running ≤ 1.5 × direct`, ratio(offloadedSeries, directSeries), "max", 1.5),
        ],
        details: { usage },
      };
    } finally {
      // The namespace's offloading goes with it (its finalizer withdraws it from a first).
      await kubectl(b, ["delete", "namespace", NAMESPACE, "--wait=false", "--ignore-not-found"]);
      if (record)
        await deletePeering(pair.consumerKubeconfig, record, pair.auth, { force: true, timeoutMs: 300_000 }, quiet);
      await pair.cleanup();
      // The provider's namespace too: the lab may be one that outlives this run (the suite's shared lab).
      await kubectl(a, ["delete", "namespace", NAMESPACE, "--ignore-not-found", "--timeout=120s"]);
    }
  });
}
