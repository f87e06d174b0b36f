/**
 * The compatibility matrix's one scenario, on one combination of consumer release, provider
 * release and kube-proxy mode: two local clusters with load balancers; the matrix program
 * (bench/programs/matrix: the README's program and label-selected offloading) up through the real
 * `pulumi` CLI; an unmodified two-tier app whose tiers call each other across the peering, both
 * ways; then destroy with the app running, and nothing of the project left in either cluster.
 * Each step is timed; the first that fails ends the run and is reported with its error.
 */
import * as k8s from "@kubernetes/client-node";
import { dirname, join } from "node:path";
import { DEFAULT_AGENT_IMAGE } from "../../core/cluster/agent-image.js";
import { placementOf } from "../../core/offloading/pod-placement.js";
import { poll } from "../../core/wait/poll.js";
import { adminConfig } from "../../harness/install.js";
import { withLab } from "../../harness/labs.js";
import { projectTraces } from "../../harness/leaks.js";
import { PulumiWorkspace, setConfig } from "../../harness/pulumi.js";
import { clusterOf, type ClusterState, type LabState } from "../../local-cluster/lab.js";
import { imageReference } from "../../local-cluster/node-images.js";
import { kubectl } from "../../local-cluster/pods.js";
import type { CniKind, KubeProxyMode } from "../../local-cluster/plan.js";

const PROGRAM = join(dirname(require.resolve("pulumi-liqo/package.json")), "bench", "programs", "matrix");
/** The namespace of b the app runs in, offloaded by the program's selector once labelled. */
const APP_NAMESPACE = "shop";
/** The label the program's NamespaceOffloading selects. */
const OFFLOAD_LABEL = { matrix: "offloaded" };
/** How long a step that waits on the clusters may take on a loaded 2-core machine. */
const STEP_TIMEOUT_MS = 180_000;

/** One combination of the matrix. */
export interface Combination {
  /** The consumer's (cluster b's) Kubernetes minor release, e.g. `1.35`. */
  readonly consumer: string;
  /** The provider's (cluster a's). */
  readonly provider: string;
  /** Both clusters' kube-proxy mode. */
  readonly kubeProxy: KubeProxyMode;
  /** Both clusters' CNI. */
  readonly cni: CniKind;
}

/** How a combination's run went. */
export interface Outcome {
  readonly combination: Combination;
  readonly passed: boolean;
  /** Wall time of the whole run, lab included, in seconds. */
  readonly seconds: number;
  /** Each step that ran, with its seconds. */
  readonly steps: readonly { readonly name: string; readonly seconds: number }[];
  /** The step that failed and its error's first line, when one did. */
  readonly failed?: { readonly step: string; readonly error: string };
  /** How the consumer placed the app's pods (the program's `podPlacement` output). */
  readonly podPlacement?: string;
}

/** A Deployment and Service of podtool pods as a chart ships them: nothing about nodes or peerings. */
function tier(name: string): k8s.KubernetesObject[] {
  const labels = { app: name };
  return [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace: APP_NAMESPACE },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name, image: imageReference("podtool"), imagePullPolicy: "Never" }] },
        },
      },
    } as k8s.KubernetesObject,
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: APP_NAMESPACE },
      spec: { selector: labels, ports: [{ port: 8080 }] },
    } as k8s.KubernetesObject,
  ];
}

/** The running pod of tier `app` in b, once it runs (on the virtual node when `offloaded`). */
async function runningTier(b: ClusterState, app: string, offloaded: boolean): Promise<k8s.V1Pod> {
  const core = adminConfig(b).makeApiClient(k8s.CoreV1Api);
  return poll(
    {
      step: "matrix",
      object: `tier ${app} Running in b${offloaded ? " on the virtual node" : ""}`,
      endpoint: b.apiServerUrl,
    },
    { timeoutMs: STEP_TIMEOUT_MS, intervalMs: 1_000 },
    async () => {
      const pods = (await core.listNamespacedPod({ namespace: APP_NAMESPACE, labelSelector: `app=${app}` })).items;
      const running = pods.find((pod) => pod.status?.phase === "Running");
      const where = (pod: k8s.V1Pod): boolean => (pod.spec?.nodeName?.startsWith("liqo-") ?? false) === offloaded;
      if (running && !where(running))
        throw new Error(`tier ${app} runs on ${running.spec?.nodeName}, not where it must`);
      return running
        ? { done: true, value: running }
        : { done: false, state: pods.map((p) => p.status?.phase).join(", ") };
    },
  );
}

/** `podtool tcp <service>:8080` in `pod` of b, retried until answered; resolves who answered. */
function callFrom(b: ClusterState, pod: string, service: string): Promise<string> {
  return poll(
    { step: "matrix", object: `${pod} calling ${service}`, endpoint: b.apiServerUrl },
    { timeoutMs: STEP_TIMEOUT_MS, intervalMs: 1_000 },
    async () => {
      const out = await kubectl(b, [
        "exec",
        "-n",
        APP_NAMESPACE,
        pod,
        "--",
        "/podtool",
        "tcp",
        `${service}:8080`,
      ]).catch((error: Error) => ({ failed: error.message.split("\n")[0] ?? "" }));
      return typeof out === "string" ? { done: true, value: out } : { done: false, state: out.failed };
    },
  );
}

/** The scenario's steps on a lab that is up; `step` times each and names the one that fails. */
async function scenario(
  lab: LabState,
  step: <T>(name: string, body: () => Promise<T>) => Promise<T>,
  placed: (mechanism: string) => void,
): Promise<void> {
  const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
  const workspace = await PulumiWorkspace.create(PROGRAM, "matrix");
  try {
    await setConfig(workspace, [
      ["aKubeconfig", a.kubeconfig],
      ["bKubeconfig", b.kubeconfig],
      ["agentImage", DEFAULT_AGENT_IMAGE],
    ]);
    await step("pulumi up", () => workspace.ok(["up", "--yes", "--skip-preview"]));
    placed((await workspace.ok(["stack", "output", "podPlacement"])).stdout.trim());
    const objects = k8s.KubernetesObjectApi.makeApiClient(adminConfig(b));
    const core = adminConfig(b).makeApiClient(k8s.CoreV1Api);
    // The app's data tier runs in b before the namespace is offloaded; its web tier is created after.
    await step("app: data tier in b", async () => {
      await core.createNamespace({ body: { metadata: { name: APP_NAMESPACE } } });
      for (const object of tier("db")) await objects.create(object);
      await runningTier(b, "db", false);
    });
    await step("offloading by label", async () => {
      await core.patchNamespace(
        { name: APP_NAMESPACE, body: { metadata: { labels: OFFLOAD_LABEL } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      await poll(
        { step: "matrix", object: `pods of ${APP_NAMESPACE} placed remote (a dry-run pod)`, endpoint: b.apiServerUrl },
        { timeoutMs: STEP_TIMEOUT_MS, intervalMs: 1_000 },
        async () => {
          const probe = await core.createNamespacedPod({
            namespace: APP_NAMESPACE,
            body: {
              metadata: { name: "probe" },
              spec: { containers: [{ name: "c", image: imageReference("podtool") }] },
            },
            dryRun: "All",
          });
          const placement = placementOf(probe.spec!);
          return placement === "remote" ? { done: true, value: undefined } : { done: false, state: placement };
        },
      );
    });
    const web = await step("app: web tier offloaded to a", async () => {
      for (const object of tier("web")) await objects.create(object);
      return runningTier(b, "web", true);
    });
    const db = await runningTier(b, "db", false);
    await step("b calls a (db → web Service)", async () => {
      const answer = await callFrom(b, db.metadata!.name!, "web");
      if (!answer.includes("web-")) throw new Error(`web's Service was answered by ${answer.trim()}`);
    });
    await step("a calls b (web → db Service)", async () => {
      const answer = await callFrom(b, web.metadata!.name!, "db");
      if (!answer.includes("db-")) throw new Error(`db's Service was answered by ${answer.trim()}`);
    });
    await step("destroy with the app running", async () => {
      await workspace.ok(["destroy", "--yes", "--skip-preview"]);
      const left = [...(await projectTraces(a.kubeconfig)), ...(await projectTraces(b.kubeconfig))];
      if (left.length > 0) throw new Error(`left behind: ${left.join(", ")}`);
    });
  } finally {
    workspace.dispose();
  }
}

/** Runs the scenario on `combination` in a lab of its own, removed afterwards; never throws. */
export async function runCombination(combination: Combination): Promise<Outcome> {
  const started = performance.now();
  const steps: { name: string; seconds: number }[] = [];
  let current = "clusters";
  let podPlacement: string | undefined;
  const step = async <T>(name: string, body: () => Promise<T>): Promise<T> => {
    current = name;
    const from = performance.now();
    const value = await body();
    steps.push({ name, seconds: (performance.now() - from) / 1000 });
    return value;
  };
  const seconds = (): number => (performance.now() - started) / 1000;
  try {
    const requests = [
      { name: "a", kubernetes: combination.provider, kubeProxyMode: combination.kubeProxy, cni: combination.cni },
      { name: "b", kubernetes: combination.consumer, kubeProxyMode: combination.kubeProxy, cni: combination.cni },
    ];
    const labStarted = performance.now();
    await withLab(requests, { loadBalancer: "metallb" }, async (lab) => {
      steps.push({ name: "clusters", seconds: (performance.now() - labStarted) / 1000 });
      await scenario(lab, step, (mechanism) => (podPlacement = mechanism));
    });
    return { combination, passed: true, seconds: seconds(), steps, ...(podPlacement ? { podPlacement } : {}) };
  } catch (error) {
    // The first two lines: what failed, and the first of what it said (a pulumi error's diagnostics).
    const lines = ((error as Error).message ?? String(error)).split("\n").filter((line) => line.trim());
    const said = lines.slice(0, 2).join(" ").slice(0, 300);
    return {
      combination,
      passed: false,
      seconds: seconds(),
      steps,
      failed: { step: current, error: said },
      ...(podPlacement ? { podPlacement } : {}),
    };
  }
}
