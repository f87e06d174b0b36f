/**
 * Scale: many pods on one virtual node, and many consumers of one provider.
 *
 * Pods: on a lab of a provider `a` (as many nodes as the pods need, each admitting 250) and a
 * consumer `b`, b peered with a and a namespace offloaded; a Deployment of pause pods grown from 0
 * to N, 100 at a time, on a directly, then on b through the virtual node, each timed to all Running. During the
 * offloaded scale-up: the two agents' CPU seconds and peak memory, and the requests they made of
 * each API server (counted by the servers: bench/api-requests.ts), per pod. At that size: how long
 * a consumer's change takes to reach the provider (a ConfigMap the pods read, edited; a pod deleted).
 *
 * Consumers: on a lab of a provider and C consumers, each consumer in turn peers, makes a tunnel
 * and offloads a namespace with one pod. Then the provider's agent and gateway idle, and each
 * consumer's change reaching the provider, with all of them in place.
 */
import * as k8s from "@kubernetes/client-node";
import { consumerUserName } from "../core/api/names.js";
import { GATEWAY_NAME } from "../core/cluster/agent-components.js";
import { ensureTunnel } from "../core/network-fabric/tunnel.js";
import { deleteTunnel } from "../core/network-fabric/tunnel-delete.js";
import { TUNNEL_DEFAULTS } from "../core/network-fabric/tunnel-plan.js";
import type { OffloadedPod } from "../core/api/index.js";
import { listOffloading } from "../core/offloading/objects.js";
import { remoteNamespaceName } from "../core/offloading/reflection.js";
import { progressTo } from "../core/operation/progress.js";
import { createPeering, deletePeering } from "../core/peering/peering.js";
import type { PeeringRecord } from "../core/peering/peering-plan.js";
import { VIRTUAL_NODE_TAINT } from "../core/virtual-node/node.js";
import { poll } from "../core/wait/poll.js";
import { offloadNamespace } from "../harness/offloading.js";
import { preparePeering, tunnelSidesOf, type PeeringPair } from "../harness/peering-pair.js";
import { clusterOf, type ClusterRequest, type ClusterState } from "../local-cluster/lab.js";
import { imageReference } from "../local-cluster/node-images.js";
import { MAX_PODS_PER_NODE } from "../local-cluster/plan.js";
import { kubectl } from "../local-cluster/pods.js";
import { agentProcess, componentProcessIds, processUsage, watchUsage, type WindowUsage } from "./agent-usage.js";
import { countedRequests, startCountingRequests, stopCountingRequests } from "./api-requests.js";
import {
  formatSeries,
  formatTarget,
  ratio,
  series,
  target,
  timed,
  type Log,
  type SectionResult,
  type Series,
} from "./figures.js";
import { privateLabs, type LabRunner } from "./labs.js";
import { createDeployment, scaleTime, settle } from "./offloading.js";
import {
  formatStepStages,
  NATIVE_STAGES,
  nativeStages,
  OFFLOADED_STAGES,
  offloadedStages,
  stepStages,
  type StepStages,
} from "./scale-stages.js";

const NAMESPACE = "scale";
const CONFIG = "scale-config";
const quiet = progressTo(() => undefined);
/** Pods each lab node runs besides the bench's (the project's, DNS, the CNI's). */
const SYSTEM_PODS_PER_NODE = 10;
/** Changes timed per figure. */
const CHANGES = 3;
/** Pods added at a time, on the provider directly and offloaded alike (bench/offloading.ts `scaleTime`). */
const SCALE_STEP = 100;

/** The pause pods of Deployment `web`, reading ConfigMap `scale-config`; on the virtual node `virtualNode` when given. */
function pauseSpec(virtualNode?: string): k8s.V1PodSpec {
  return {
    ...(virtualNode
      ? {
          nodeSelector: { "kubernetes.io/hostname": virtualNode },
          tolerations: [{ key: VIRTUAL_NODE_TAINT.key, operator: "Exists" }],
        }
      : {}),
    terminationGracePeriodSeconds: 1,
    containers: [
      {
        name: "pause",
        image: imageReference("pause"),
        imagePullPolicy: "Never",
        envFrom: [{ configMapRef: { name: CONFIG } }],
      },
    ],
  };
}

/** Namespace `scale` of `kc`'s cluster with ConfigMap `scale-config` and Deployment `web` of no replicas yet. */
async function prepareNamespace(kc: k8s.KubeConfig, spec: k8s.V1PodSpec, createNamespace: boolean): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  if (createNamespace) await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  await core.createNamespacedConfigMap({
    namespace: NAMESPACE,
    body: { metadata: { name: CONFIG }, data: { GENERATION: "0" } },
  });
  await createDeployment(kc, NAMESPACE, spec);
}

/** The pods of Deployment `web` in `namespace`. */
async function webPods(kc: k8s.KubeConfig, namespace: string): Promise<k8s.V1Pod[]> {
  return (await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace, labelSelector: "app=web" })).items;
}

/** Seconds from a step on the consumer to what it must change on the provider, seen there (100 ms looks). */
async function reachTime(what: string, change: () => Promise<void>, reached: () => Promise<boolean>): Promise<number> {
  const { seconds } = await timed(async () => {
    await change();
    await poll(
      { step: "bench", object: what, endpoint: "the provider" },
      { timeoutMs: 120_000, intervalMs: 100 },
      async () => ((await reached()) ? { done: true, value: undefined } : { done: false, state: "not yet" }),
    );
  });
  return seconds;
}

/**
 * How long a consumer's changes take to reach the provider: ConfigMap `scale-config` edited (its
 * copy beside the provider's pods changes), and one of its pods deleted (the provider's is deleted).
 */
async function changeTimes(
  consumer: k8s.KubeConfig,
  provider: k8s.KubeConfig,
  remoteNamespace: string,
  round: number,
): Promise<{ configMap: number; podDeletion: number }> {
  const [local, remote] = [consumer.makeApiClient(k8s.CoreV1Api), provider.makeApiClient(k8s.CoreV1Api)];
  const generation = `${Date.now()}-${round}`;
  const configMap = await reachTime(
    `ConfigMap ${remoteNamespace}/${CONFIG} at ${generation}`,
    async () =>
      void (await local.patchNamespacedConfigMap(
        { name: CONFIG, namespace: NAMESPACE, body: { data: { GENERATION: generation } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      )),
    async () =>
      (await remote.readNamespacedConfigMap({ name: CONFIG, namespace: remoteNamespace })).data?.["GENERATION"] ===
      generation,
  );
  const pods = await webPods(consumer, NAMESPACE);
  const victim = pods.find((p) => p.status?.phase === "Running" && !p.metadata?.deletionTimestamp)!.metadata!.name!;
  const podDeletion = await reachTime(
    `pod ${remoteNamespace}/${victim} deleted`,
    async () => void (await local.deleteNamespacedPod({ name: victim, namespace: NAMESPACE })),
    async () => {
      const there = await remote.readNamespacedPod({ name: victim, namespace: remoteNamespace }).catch(() => undefined);
      return there === undefined || there.metadata?.deletionTimestamp !== undefined;
    },
  );
  return { configMap, podDeletion };
}

/** The nodes provider `a` needs for `pods` pods beside its own, each admitting {@link MAX_PODS_PER_NODE}. */
export function providerNodesFor(pods: number): ClusterRequest {
  const nodes = Math.ceil((pods + SYSTEM_PODS_PER_NODE) / (MAX_PODS_PER_NODE - SYSTEM_PODS_PER_NODE));
  // Small enough for kubelet's default (110 a node): the plain cluster the smoke run shares.
  return pods + SYSTEM_PODS_PER_NODE <= 110 ? { name: "a" } : { name: "a", nodes, maxPods: MAX_PODS_PER_NODE };
}

/** A usage figure pair (CPU seconds, peak MiB) of each group. */
const usageSeries = (usage: readonly WindowUsage[], during: string): Series[] =>
  usage.flatMap((u) => [
    series(`${u.name}: CPU ${during}`, "s", [u.cpuSeconds]),
    series(`${u.name}: peak memory ${during}`, "MiB", [u.peakMiB]),
  ]);

/** Pods: `count` pause pods on one virtual node against the same made natively. */
async function podsOnOneVirtualNode(count: number, log: Log, labs: LabRunner): Promise<SectionResult> {
  return labs([providerNodesFor(count), { name: "b" }], {}, async (lab) => {
    const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
    log(`scale: ${count} pods; provider a has ${a.nodes.length} node(s)`);
    const pair = await preparePeering(a, b, { pods: count + 10 });
    let record: PeeringRecord | undefined;
    try {
      record = await createPeering(pair.request, quiet);
      const [provider, consumer] = [pair.provider.kc, pair.consumer.kc];
      const remoteNamespace = remoteNamespaceName(NAMESPACE, pair.consumer.clusterId, "suffixed");
      await prepareNamespace(provider, pauseSpec(), true);
      await offloadNamespace(consumer, NAMESPACE, remoteNamespace, record.virtualNodeName);
      await prepareNamespace(consumer, pauseSpec(record.virtualNodeName), false);
      await startCountingRequests(provider, [consumerUserName(pair.consumer.clusterId)]);
      await startCountingRequests(consumer, []);

      const direct = await scaleTime(provider, a, NAMESPACE, count, SCALE_STEP);
      log(`scale: ${count} pods on a directly: ${direct.toFixed(1)} s`);
      const nativeSteps = stepStages(nativeStages(await webPods(provider, NAMESPACE)), NATIVE_STAGES, SCALE_STEP);
      formatStepStages("scale: on a directly", nativeSteps, NATIVE_STAGES).forEach((line) => log(line));
      await kubectl(a, ["scale", "-n", NAMESPACE, "deployment/web", "--replicas=0"]);
      await settle(provider, a, NAMESPACE, 0);

      const agents = [
        { name: "consumer agent", pids: [(await agentProcess(consumer, "b")).pid] },
        { name: "provider agent", pids: [(await agentProcess(provider, "a")).pid] },
      ];
      const requestsBefore = [await countedRequests(b), await countedRequests(a)];
      const watching = await watchUsage(agents);
      const offloaded = await scaleTime(consumer, b, NAMESPACE, count, SCALE_STEP);
      const usage = watching.stop();
      const requests = [
        (await countedRequests(b)) - requestsBefore[0]!,
        (await countedRequests(a)) - requestsBefore[1]!,
      ];
      log(`scale: ${count} pods offloaded from b: ${offloaded.toFixed(1)} s; requests ${requests.join(" / ")}`);
      const offloadedSteps = stepStages(
        offloadedStages(
          await webPods(consumer, NAMESPACE),
          (await listOffloading<OffloadedPod>(provider, "offloadedpods")) ?? [],
          await webPods(provider, remoteNamespace),
        ),
        OFFLOADED_STAGES,
        SCALE_STEP,
      );
      formatStepStages("scale: offloaded", offloadedSteps, OFFLOADED_STAGES).forEach((line) => log(line));

      const changes = [];
      for (let round = 1; round <= CHANGES; round++)
        changes.push(await changeTimes(consumer, provider, remoteNamespace, round));
      await settle(consumer, b, NAMESPACE, count);
      const idle = await processUsage(
        agents.map((agent) => ({ cluster: agent.name, pid: agent.pids[0]! })),
        10,
      );
      const directSeries = series(`${count} pause pods Running, made on the provider directly`, "s", [direct]);
      const offloadedSeries = series(`${count} pause pods Running on the consumer, offloaded`, "s", [offloaded]);
      const configMapSeries = series(
        `at ${count} pods: a consumer's ConfigMap edit seen on the provider`,
        "s",
        changes.map((c) => c.configMap),
      );
      const deletionSeries = series(
        `at ${count} pods: a consumer's pod deletion seen on the provider`,
        "s",
        changes.map((c) => c.podDeletion),
      );
      const memoryAtSize = idle.map((agent) =>
        series(`${agent.cluster}: memory with ${count} pods offloaded, idle`, "MiB", [agent.rssMiB]),
      );
      const perPod = (n: number): number => Math.round((n / count) * 100) / 100;
      return {
        series: [
          directSeries,
          offloadedSeries,
          ...usageSeries(usage, `while ${count} pods were offloaded`),
          ...memoryAtSize,
          series(`consumer agent: requests of its API server per pod offloaded`, "requests", [perPod(requests[0]!)]),
          series(`provider agent and consumer identity: requests of the provider's per pod`, "requests", [
            perPod(requests[1]!),
          ]),
          configMapSeries,
          deletionSeries,
        ],
        targets: [
          target(`${count} offloaded pods Running ≤ 1.5 × native`, ratio(offloadedSeries, directSeries), "max", 1.5),
          ...usage.map((u) =>
            target(`${u.name} under 150 MiB with ${count} pods offloaded (peak)`, u.peakMiB, "max", 150),
          ),
          target(`a consumer's ConfigMap edit reaches the provider within 5 s (worst)`, configMapSeries.max, "max", 5),
          target(`a consumer's pod deletion reaches the provider within 5 s (worst)`, deletionSeries.max, "max", 5),
        ],
        details: {
          usage,
          idle,
          requests,
          changes,
          providerNodes: a.nodes.length,
          steps: { native: nativeSteps, offloaded: offloadedSteps } satisfies Record<string, StepStages[]>,
        },
      };
    } finally {
      await stopCountingRequests(pair.provider.kc);
      await stopCountingRequests(pair.consumer.kc);
      await kubectl(b, ["delete", "namespace", NAMESPACE, "--wait=false", "--ignore-not-found"]);
      if (record)
        await deletePeering(pair.consumerKubeconfig, record, pair.auth, { force: true, timeoutMs: 600_000 }, quiet);
      await pair.cleanup();
      await kubectl(a, ["delete", "namespace", NAMESPACE, "--ignore-not-found", "--timeout=300s"]);
    }
  });
}

/** The lab's cluster names: the provider `a`, then a consumer per letter from `b`. */
export const consumerNames = (consumers: number): string[] =>
  Array.from({ length: consumers }, (_, i) => String.fromCharCode("b".charCodeAt(0) + i));

/** One consumer of the provider, with its peering, tunnel and offloaded namespace. */
interface Consumer {
  readonly cluster: ClusterState;
  readonly pair: PeeringPair;
  record?: PeeringRecord;
  sides?: Awaited<ReturnType<typeof tunnelSidesOf>>;
  remoteNamespace?: string;
}

/** Consumers: `count` consumer clusters of one provider, each peered, tunnelled and offloading one pod. */
async function consumersOfOneProvider(count: number, idle: number, log: Log, labs: LabRunner): Promise<SectionResult> {
  const names = consumerNames(count);
  return labs([{ name: "a" }, ...names.map((name) => ({ name }))], {}, async (lab) => {
    const a = clusterOf(lab, "a");
    const consumers: Consumer[] = [];
    try {
      const setUp: number[] = [];
      for (const name of names) {
        const cluster = clusterOf(lab, name);
        const { seconds } = await timed(async () => {
          const consumer: Consumer = { cluster, pair: await preparePeering(a, cluster, { pods: 10 }) };
          consumers.push(consumer);
          const { pair } = consumer;
          consumer.record = await createPeering(pair.request, quiet);
          consumer.sides = await tunnelSidesOf(
            { ...pair.consumer, name },
            { ...pair.provider, name: "a" },
            consumer.record,
          );
          await ensureTunnel(
            consumer.sides,
            // Each tunnel the provider serves takes a port of its own.
            {
              server: "provider",
              serverAddress: a.publicAddress,
              ...TUNNEL_DEFAULTS,
              port: TUNNEL_DEFAULTS.port + consumers.length - 1,
              behindNat: [],
            },
            180_000,
            quiet,
          );
          consumer.remoteNamespace = remoteNamespaceName(NAMESPACE, pair.consumer.clusterId, "suffixed");
          await offloadNamespace(
            pair.consumer.kc,
            NAMESPACE,
            consumer.remoteNamespace,
            consumer.record.virtualNodeName,
          );
          await prepareNamespace(pair.consumer.kc, pauseSpec(consumer.record.virtualNodeName), false);
          await kubectl(cluster, ["scale", "-n", NAMESPACE, "deployment/web", "--replicas=1"]);
          await settle(pair.consumer.kc, cluster, NAMESPACE, 1);
        });
        setUp.push(seconds);
        log(
          `scale: consumer ${name} (${consumers.length} of ${count}) peered, tunnelled and offloading: ${seconds.toFixed(1)} s`,
        );
      }
      const provider = consumers[0]!.pair.provider.kc;
      const providerGroups = [
        { name: `provider agent, ${count} consumers`, pids: [(await agentProcess(provider, "a")).pid] },
        { name: `provider gateway, ${count} tunnels`, pids: await componentProcessIds(provider, "a", GATEWAY_NAME) },
      ];
      log(`scale: ${count} consumers in place: watching the provider's agent and gateway idle for ${idle} s`);
      const watching = await watchUsage(providerGroups);
      await new Promise((resolve) => setTimeout(resolve, idle * 1000));
      const idleUsage = watching.stop();
      const changes = [];
      for (const [i, consumer] of consumers.entries())
        changes.push(await changeTimes(consumer.pair.consumer.kc, provider, consumer.remoteNamespace!, i));
      const configMapSeries = series(
        `${count} consumers: each one's ConfigMap edit seen on the provider`,
        "s",
        changes.map((c) => c.configMap),
      );
      const deletionSeries = series(
        `${count} consumers: each one's pod deletion seen on the provider`,
        "s",
        changes.map((c) => c.podDeletion),
      );
      return {
        series: [
          series(`a consumer's peering, tunnel and offloaded pod, the n-th of ${count}`, "s", setUp),
          ...usageSeries(idleUsage, `idle ${idle} s`),
          configMapSeries,
          deletionSeries,
        ],
        targets: [
          target(`provider agent under 150 MiB with ${count} consumers (peak)`, idleUsage[0]!.peakMiB, "max", 150),
          target(
            `each consumer's ConfigMap edit reaches the provider within 5 s (worst)`,
            configMapSeries.max,
            "max",
            5,
          ),
          target(`each consumer's pod deletion reaches the provider within 5 s (worst)`, deletionSeries.max, "max", 5),
        ],
        details: { setUp, idleUsage, changes },
      };
    } finally {
      // Every consumer unpeered before any cleanup, which uninstalls the provider too.
      for (const { pair, record, sides, cluster } of consumers) {
        await kubectl(cluster, ["delete", "namespace", NAMESPACE, "--wait=false", "--ignore-not-found"]);
        if (sides) await deleteTunnel(sides, { force: true, timeoutMs: 120_000 }, quiet).catch(() => undefined);
        if (record)
          await deletePeering(pair.consumerKubeconfig, record, pair.auth, { force: true, timeoutMs: 300_000 }, quiet);
      }
      for (const { pair } of consumers) await pair.cleanup();
    }
  });
}

/** The scale figures: `pods` pods on one virtual node, and `consumers` consumers of one provider. */
export async function benchScale(
  pods: number,
  consumers: number,
  idle: number,
  log: Log,
  labs: LabRunner = privateLabs,
): Promise<SectionResult> {
  // The consumers first: the shorter half, and the one with more steps that may fail. Each half's
  // figures are logged as soon as they are taken: a failure in the other half keeps them.
  const told = (half: SectionResult): SectionResult => {
    for (const s of half.series) log(`scale: ${formatSeries(s)}`);
    for (const t of half.targets) log(`scale: ${formatTarget(t)}`);
    return half;
  };
  const many = told(await consumersOfOneProvider(consumers, idle, log, labs));
  const onePeering = told(await podsOnOneVirtualNode(pods, log, labs));
  return {
    series: [...onePeering.series, ...many.series],
    targets: [...onePeering.targets, ...many.targets],
    details: { pods: onePeering.details, consumers: many.details },
  };
}
