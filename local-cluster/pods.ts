/**
 * Real pods in local clusters, for the tests and the demo: kubectl against a cluster, podtool pods
 * (an echo server that names itself, and a client) on chosen nodes, commands run in them, and the
 * node chores of a cluster's admin (cordon, a further image name).
 */
import * as k8s from "@kubernetes/client-node";
import { spawn } from "node:child_process";
import { run, type CommandError } from "../host/exec.js";
import { statusOf } from "../core/kube/errors.js";
import { poll } from "../core/wait/poll.js";
import { adminConfig } from "./inspect.js";
import type { ClusterState } from "./lab.js";
import { nodeBinaries } from "./node.js";
import { imageReference } from "./node-images.js";

/** The namespace the podtool pods run in. */
export const POD_NAMESPACE = "default";

/** Runs kubectl against `cluster` (the admin kubeconfig). */
export function kubectl(cluster: ClusterState, args: readonly string[]): Promise<string> {
  return run("kubectl", ["--kubeconfig", cluster.kubeconfig, ...args]);
}

/** The core API of `cluster`, as its admin. */
export function coreOf(cluster: ClusterState): k8s.CoreV1Api {
  return adminConfig(cluster).makeApiClient(k8s.CoreV1Api);
}

/**
 * Gives image `from` the further reference `to` in the containerd of every node of `cluster`: a
 * "new" image for a rolling update, without building one.
 */
export async function tagImageOnNodes(cluster: ClusterState, from: string, to: string): Promise<void> {
  const { ctr } = nodeBinaries();
  for (const node of cluster.nodes)
    await run(ctr, ["--address", node.containerdSocket, "-n", "k8s.io", "images", "tag", "--force", from, to]);
}

/** Cordons (or uncordons) nodes, as `kubectl cordon` does. */
export async function setCordoned(core: k8s.CoreV1Api, names: readonly string[], cordoned: boolean): Promise<void> {
  for (const name of names)
    await core.patchNode(
      { name, body: { spec: { unschedulable: cordoned || null } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
}

/** Name of the podtool pod on node `index` of `cluster`. */
export const podName = (cluster: ClusterState, index: number): string => `podtool-${cluster.name}-n${index}`;

/**
 * Creates a podtool pod (`serve`, TCP 8080) bound to node `index`, unless it is there, and resolves
 * it once Running with an address.
 */
export async function runPodtool(cluster: ClusterState, index: number): Promise<k8s.V1Pod> {
  const api = coreOf(cluster);
  const name = podName(cluster, index);
  // A new cluster's controller manager makes the namespace's default ServiceAccount a moment after
  // it starts; admission refuses pods until it exists.
  await poll(
    {
      step: `cluster ${cluster.name}`,
      object: `ServiceAccount ${POD_NAMESPACE}/default`,
      endpoint: cluster.apiServerUrl,
    },
    { timeoutMs: 60_000, intervalMs: 200 },
    async () =>
      (await api.readNamespacedServiceAccount({ name: "default", namespace: POD_NAMESPACE }).catch(() => undefined))
        ? { done: true, value: undefined }
        : { done: false, state: "not made yet" },
  );
  await api
    .createNamespacedPod({
      namespace: POD_NAMESPACE,
      body: {
        metadata: { name, labels: { app: "podtool", node: `n${index}` } },
        spec: {
          nodeName: `${cluster.name}-n${index}`,
          containers: [{ name: "podtool", image: imageReference("podtool"), imagePullPolicy: "Never" }],
        },
      },
    })
    .catch((error: unknown) => {
      // Already there (a demo run again): the same pod serves.
      if (statusOf(error) !== 409) throw error;
    });
  return poll(
    { step: `cluster ${cluster.name}`, object: `pod ${name}`, endpoint: cluster.apiServerUrl },
    { timeoutMs: 60_000, intervalMs: 200 },
    async () => {
      const pod = await api.readNamespacedPod({ name, namespace: POD_NAMESPACE });
      return pod.status?.phase === "Running" && pod.status.podIP
        ? { done: true, value: pod }
        : {
            done: false,
            state: `${pod.status?.phase ?? "no phase"} ${JSON.stringify(pod.status?.containerStatuses?.[0]?.state ?? {})}`,
          };
    },
  );
}

/**
 * `podtool <command> <target>` in the pod on node `index`, retried until it succeeds within
 * `timeoutMs` (new Service rules, routes or a tunnel take a moment); resolves its output.
 */
export function podtoolFrom(
  cluster: ClusterState,
  index: number,
  command: "tcp" | "udp" | "ping",
  target: string,
  timeoutMs = 30_000,
): Promise<string> {
  return poll(
    {
      step: `cluster ${cluster.name}`,
      object: `podtool ${command} ${target} from ${podName(cluster, index)}`,
      endpoint: cluster.apiServerUrl,
    },
    { timeoutMs, intervalMs: 250 },
    async () => {
      const out = await kubectl(cluster, ["exec", podName(cluster, index), "--", "/podtool", command, target]).catch(
        (error: CommandError) => ({ failed: error.stderr }),
      );
      return typeof out === "string" ? { done: true, value: out } : { done: false, state: out.failed.trim() };
    },
  );
}

/** What `podtool flow` prints (toolchain/podtool/main.go): times in milliseconds from the flow's start. */
export interface FlowReport {
  /** ICMP echoes sent (one every 200 ms) and answered. */
  readonly sent: number;
  readonly received: number;
  /** The longest stretch of unanswered echoes, when it began and when the echo that ended it was sent (0: none did). */
  readonly longestGapMs: number;
  readonly gapFromMs: number;
  readonly resumedAtMs: number;
  /** Answers to echoes sent after the longest gap began. */
  readonly answeredAfterGap: number;
  /** `echoed` when the TCP connection opened at the start and left idle carried a line there and back at the end. */
  readonly tcp: string;
}

/** A `podtool flow` under way: when its connection is up, and its report at its end. */
export interface RunningFlow {
  /** Resolves once the flow's TCP connection is open and its echoes are being sent. */
  readonly started: Promise<void>;
  /** Its report, some `seconds` after it started. */
  readonly report: Promise<FlowReport>;
}

/**
 * `podtool flow <host> <seconds>` in the podtool pod on node `index`: a flow in flight (an ICMP
 * echo every 200 ms, an idle TCP connection to the host's port 8081 written at the end). Both of
 * its promises reject when it could not start (no TCP connection); whoever breaks the path waits
 * for {@link RunningFlow.started}, since how long an exec takes to start depends on the machine's load.
 */
export function podtoolFlow(cluster: ClusterState, index: number, host: string, seconds: number): RunningFlow {
  const pod = podName(cluster, index);
  const child = spawn(
    "kubectl",
    ["--kubeconfig", cluster.kubeconfig, "exec", pod, "--", "/podtool", "flow", host, String(seconds)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  let markStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    if (/^started$/m.test(stdout)) markStarted();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const report = new Promise<FlowReport>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0)
        return reject(new Error(`podtool flow ${host} from ${pod} failed (exit ${code}): ${stderr.trim()}`));
      resolve(JSON.parse(stdout.trim().split("\n").pop()!) as FlowReport);
    });
  });
  return { started: Promise.race([started, report.then(() => undefined)]), report };
}
