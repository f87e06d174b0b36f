/**
 * The remote is gone, and the consumer wants out, through the real `pulumi` CLI on a private lab:
 * the provider team's stack and the consumer team's (examples/two-teams: cluster b, its Peering,
 * its Tunnel since `gatewayAddress` is given, and a NamespaceOffloading of each of `shop`, empty,
 * and `cart`, where a Deployment's pods run on the provider). With the provider's kube-apiserver
 * stopped, `pulumi destroy` fails within seconds saying the provider is unreachable, at which URL
 * and why, and that `force` exists, with no stack trace and nothing changed; a refresh records it
 * as the offloadings' status; `force: true` is set by `pulumi up` without the provider; then
 * `pulumi destroy` removes the consumer's side within seconds and lists everything that stays on
 * the provider, and the consumer's pods are gone or Pending with a reason, never Terminating.
 */
import * as k8s from "@kubernetes/client-node";
import { join } from "node:path";
import { clusterOf, readLab, type ClusterState, type LabState } from "../../local-cluster/lab.js";
import {
  ABANDONED_VIRTUAL_NODES_ANNOTATION,
  API_GROUP,
  API_VERSION,
  type NamespaceOffloading,
} from "../../provider/api/index.js";
import { stopProcess } from "../../host/processes.js";
import { adminConfig } from "../../harness/install.js";
import { TEST_LAB_ROOT, withLab } from "../../harness/labs.js";
import { projectTraces, tunnelTraces } from "../support/leaks.js";
import { configureAgentImage, failureSummary, outputsOf, previewOf, PulumiWorkspace } from "../../harness/pulumi.js";
import { podtoolSpec, runningPods } from "../../harness/offloading.js";
import { poll } from "../../provider/wait/poll.js";

const PROVIDER_PROGRAM = join(__dirname, "..", "..", "examples", "two-teams", "provider");
const CONSUMER_PROGRAM = join(__dirname, "..", "..", "examples", "two-teams", "consumer");
/** A stack trace line, as Node prints one. */
const TRACE_LINE = /^\s+at /m;
/** How long a failing or forced destroy may take: seconds of work plus the engine's own start, far below the resources' 300 s deadline. */
const WITHIN_SECONDS_MS = 45_000;
/** How long a destroy without force may take to fail with a provider gone (issue 28: one short look, no wait). */
const REFUSED_WITHIN_MS = 10_000;
/** How long the forced destroy of the offloadings, the tunnel, the peering and cluster b may take (issue 28). */
const FORCED_WITHIN_MS = 30_000;
/** The offloaded namespaces of b: one empty, one with a Deployment's pods running on a. */
const EMPTY_NAMESPACE = "shop";
const BUSY_NAMESPACE = "cart";
const BUSY_REPLICAS = 2;
/** How long the cart's pods may take to settle on b once the destroy is done (harness runningPods has its own deadline). */
const PODS_SETTLED_MS = 30_000;

async function configure(
  workspace: PulumiWorkspace,
  cluster: ClusterState,
  extra: Record<string, string> = {},
): Promise<void> {
  const settings = {
    kubeconfig: cluster.kubeconfig,
    podCidr: cluster.podCidr,
    serviceCidr: cluster.serviceCidr,
    ...extra,
  };
  for (const [key, value] of Object.entries(settings)) await workspace.ok(["config", "set", key, value]);
  await configureAgentImage(workspace, [cluster]);
}

/** Runs `pulumi args…` and how long it took. */
async function timed(
  workspace: PulumiWorkspace,
  args: readonly string[],
): Promise<{ result: Awaited<ReturnType<PulumiWorkspace["pulumi"]>>; ms: number }> {
  const started = Date.now();
  const result = await workspace.pulumi(args);
  return { result, ms: Date.now() - started };
}

/** Makes the offloaded namespaces on b (an offloading does not own its namespace) and, once offloaded, the cart's Deployment. */
async function makeNamespaces(b: ClusterState): Promise<void> {
  const core = adminConfig(b).makeApiClient(k8s.CoreV1Api);
  for (const name of [EMPTY_NAMESPACE, BUSY_NAMESPACE]) await core.createNamespace({ body: { metadata: { name } } });
}

async function deployCart(b: ClusterState, virtualNode: string): Promise<void> {
  const labels = { app: "cart" };
  await adminConfig(b)
    .makeApiClient(k8s.AppsV1Api)
    .createNamespacedDeployment({
      namespace: BUSY_NAMESPACE,
      body: {
        metadata: { name: "cart" },
        spec: {
          replicas: BUSY_REPLICAS,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: podtoolSpec(virtualNode, { terminationGracePeriodSeconds: 5 }) },
        },
      },
    });
}

/**
 * Resolves the cart's pods on b once none of `gone` (the pods that ran on a) is left and every one
 * there is Pending with the scheduler's reason; a pod stuck Terminating never settles, and the
 * wait fails naming it.
 */
function settledCart(b: ClusterState, gone: readonly string[]): Promise<k8s.V1Pod[]> {
  const core = adminConfig(b).makeApiClient(k8s.CoreV1Api);
  return poll(
    {
      step: "test",
      object: `the pods of ${BUSY_NAMESPACE} on b removed or Pending with a reason`,
      endpoint: b.apiServerUrl,
    },
    { timeoutMs: PODS_SETTLED_MS, intervalMs: 500 },
    async () => {
      const pods = (await core.listNamespacedPod({ namespace: BUSY_NAMESPACE })).items;
      const describe = (p: k8s.V1Pod): string => {
        const scheduled = p.status?.conditions?.find((c) => c.type === "PodScheduled");
        return `${p.metadata!.name} ${p.status?.phase} ${p.metadata?.deletionTimestamp ? "Terminating " : ""}${scheduled?.reason ?? ""}`;
      };
      const old = pods.filter((p) => gone.includes(p.metadata!.name!));
      const unsettled = pods.filter(
        (p) =>
          old.includes(p) ||
          p.status?.phase !== "Pending" ||
          !p.status.conditions?.some((c) => c.type === "PodScheduled" && c.status === "False" && c.reason),
      );
      return unsettled.length === 0
        ? { done: true, value: pods }
        : { done: false, state: pods.map(describe).join(", ") || "no pod" };
    },
  );
}

/** b's NamespaceOffloadings, each `<namespace> as it was`, or with what a delete changed on it. */
async function offloadingsOn(b: ClusterState): Promise<string[]> {
  const list = (await adminConfig(b)
    .makeApiClient(k8s.CustomObjectsApi)
    .listClusterCustomObject({ group: API_GROUP, version: API_VERSION, plural: "namespaceoffloadings" })) as {
    items: NamespaceOffloading[];
  };
  return list.items
    .map(({ metadata }) => {
      const changed = [
        metadata.deletionTimestamp ? "being deleted" : "",
        metadata.annotations?.[ABANDONED_VIRTUAL_NODES_ANNOTATION] ? "providers given up" : "",
      ].filter(Boolean);
      return `${metadata.namespace} ${changed.length ? changed.join(", ") : "as it was"}`;
    })
    .sort();
}

/** How long b's agent may take to find a gone and say so: a pass (10 s while nothing is pending) and a call. */
const AGENT_NOTICES_MS = 30_000;

/** Resolves once b's agent reports provider a Unreachable, backing off, in both offloadings' status. */
function agentSaysUnreachable(b: ClusterState, apiServerUrl: string): Promise<void> {
  const api = adminConfig(b).makeApiClient(k8s.CustomObjectsApi);
  return poll(
    { step: "test", object: "b's NamespaceOffloadings reporting provider a Unreachable", endpoint: b.apiServerUrl },
    { timeoutMs: AGENT_NOTICES_MS, intervalMs: 1_000 },
    async () => {
      const { items } = (await api.listClusterCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        plural: "namespaceoffloadings",
      })) as { items: NamespaceOffloading[] };
      const reports = items.flatMap((o) => o.status?.remotes ?? []);
      const said = reports.filter(
        (r) =>
          r.phase === "Unreachable" &&
          r.message?.startsWith("provider a cannot be reached: ") &&
          r.message.includes(`at ${apiServerUrl}: connection refused (`) &&
          r.message.includes("the consumer's agent tries again after a pause that grows to 30 s"),
      );
      return items.length === 2 && said.length === 2
        ? { done: true, value: undefined }
        : { done: false, state: reports.map((r) => `${r.phase}: ${r.message ?? ""}`).join("; ") };
    },
  );
}

/** The objects of the consumer's side a forced delete must remove: its TunnelEndpoints and the virtual node. */
async function consumerSide(b: ClusterState): Promise<string[]> {
  const kc = adminConfig(b);
  const endpoints = (await kc
    .makeApiClient(k8s.CustomObjectsApi)
    .listClusterCustomObject({ group: API_GROUP, version: API_VERSION, plural: "tunnelendpoints" })
    .catch(() => ({ items: [] }))) as { items: { metadata: { namespace: string; name: string } }[] };
  const nodes = await kc.makeApiClient(k8s.CoreV1Api).listNode();
  return [
    ...endpoints.items.map((e) => `tunnelendpoint ${e.metadata.namespace}/${e.metadata.name}`),
    ...nodes.items.filter((n) => n.metadata?.name === "liqo-a").map(() => "node liqo-a"),
  ];
}

describe("the provider is gone and the consumer wants out", () => {
  test(
    "GIVEN a peering with its tunnel and the provider's API server stopped WHEN destroyed without force, then force set " +
      "by up, then destroyed THEN it fails fast naming the cause, force needs no provider, and destroy cleans the consumer within seconds listing what stays",
    async () => {
      await withLab([{ name: "a" }, { name: "b" }], {}, async (lab: LabState) => {
        const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
        const providerTeam = await PulumiWorkspace.create(PROVIDER_PROGRAM, "prod");
        const consumerTeam = await PulumiWorkspace.create(CONSUMER_PROGRAM, "prod", providerTeam);
        try {
          await configure(providerTeam, a, { name: "a" });
          await providerTeam.ok(["up", "--yes"]);
          await configure(consumerTeam, b, {
            providerStack: "organization/two-teams-provider/prod",
            gatewayAddress: a.publicAddress,
            offloadNamespaces: `${EMPTY_NAMESPACE},${BUSY_NAMESPACE}`,
          });
          await makeNamespaces(b);
          await consumerTeam.ok(["up", "--yes"]);
          expect((await consumerTeam.ok(["stack", "output", "tunnelStatus"])).stdout.trim()).toBe("Connected");
          expect(JSON.parse((await consumerTeam.ok(["stack", "output", "offloadingStatus", "--json"])).stdout)).toEqual(
            ["Ready", "Ready"],
          );
          const virtualNode = (await consumerTeam.ok(["stack", "output", "virtualNode"])).stdout.trim();
          const remoteOf = async (namespace: string): Promise<string> =>
            String((await outputsOf(consumerTeam, "NamespaceOffloading", `b-${namespace}`))["remoteNamespace"]);
          const [emptyRemote, busyRemote] = [await remoteOf(EMPTY_NAMESPACE), await remoteOf(BUSY_NAMESPACE)];
          await deployCart(b, virtualNode);
          const cartPods = (await runningPods(adminConfig(b), BUSY_NAMESPACE, "app=cart", BUSY_REPLICAS)).map(
            (p) => p.metadata!.name!,
          );
          const consumerInterface = (await consumerTeam.ok(["stack", "output", "consumerInterface"])).stdout.trim();
          const providerInterface = (await consumerTeam.ok(["stack", "output", "providerInterface"])).stdout.trim();
          expect(await consumerSide(b)).toEqual([
            expect.stringMatching(/^tunnelendpoint pulumi-liqo-system\/to-/),
            "node liqo-a",
          ]);

          // The provider goes, as a host does: its supervisor first (it would start the API server
          // again), then its API server (the lab's records of them, by PID).
          const provider = clusterOf(readLab(lab.name, TEST_LAB_ROOT)!, "a");
          await stopProcess(provider.supervisor!);
          await stopProcess(provider.processes.find((p) => p.name === "kube-apiserver")!);

          // Without force: a clear error within seconds, no trace, nothing changed. The offloadings
          // and the tunnel go first, side by side (each needs only the peering), and each refuses.
          const refused = await timed(consumerTeam, ["destroy", "--yes"]);
          expect(refused.result.exitCode).not.toBe(0);
          const said = refused.result.stdout + refused.result.stderr;
          for (const offloading of [`b-${EMPTY_NAMESPACE}`, `b-${BUSY_NAMESPACE}`]) {
            expect(said.replace(/\s+/g, " ")).toContain(
              `NamespaceOffloading "${offloading}": delete failed: offloading: provider a is unreachable: API server ${a.apiServerUrl}: connection refused (`,
            );
          }
          expect(said).toContain(
            "Nothing was changed. If the provider is gone for good, set force: true on the NamespaceOffloading",
          );
          expect(said).toContain(
            `network fabric: provider a is unreachable: API server ${a.apiServerUrl}: connection refused (`,
          );
          expect(said).toContain(
            "Nothing was changed. If the provider is gone for good, set force: true on the Tunnel",
          );
          expect(said).not.toMatch(TRACE_LINE);
          expect(said).not.toContain("fetch failed");
          expect(refused.ms).toBeLessThan(REFUSED_WITHIN_MS);
          expect(await consumerSide(b)).toHaveLength(2);
          expect(await offloadingsOn(b)).toEqual([`${BUSY_NAMESPACE} as it was`, `${EMPTY_NAMESPACE} as it was`]);
          expect(
            (await runningPods(adminConfig(b), BUSY_NAMESPACE, "app=cart", BUSY_REPLICAS))
              .map((p) => p.metadata!.name!)
              .sort(),
          ).toEqual([...cartPods].sort());

          // b's agent, which goes on trying a, backs off and says so in each offloading's status.
          await agentSaysUnreachable(b, a.apiServerUrl);

          // A refresh meanwhile records the failure as each resource's status; it is not a way in.
          const refreshed = await consumerTeam.pulumi(["refresh", "--yes"]);
          expect(refreshed.stdout + refreshed.stderr).not.toMatch(TRACE_LINE);
          // (refresh runs no program: the stack's outputs stay, the resources' state holds what it found)
          for (const namespace of [EMPTY_NAMESPACE, BUSY_NAMESPACE])
            expect((await outputsOf(consumerTeam, "NamespaceOffloading", `b-${namespace}`))["status"]).toContain(
              `provider a is unreachable: API server ${a.apiServerUrl}: connection refused (`,
            );

          // force is set with the provider still gone: up changes only the record, drift or not.
          await consumerTeam.ok(["config", "set", "--type", "bool", "force", "true"]);
          expect((await previewOf(consumerTeam)).steps.sort()).toEqual([
            `update b-${BUSY_NAMESPACE}`,
            `update b-${EMPTY_NAMESPACE}`,
            "update b-to-provider",
            "update b-to-provider-tunnel",
          ]);
          const setForce = await timed(consumerTeam, ["up", "--yes"]);
          expect(setForce.result.exitCode === 0 ? "" : failureSummary(setForce.result)).toBe("");
          expect(setForce.ms).toBeLessThan(WITHIN_SECONDS_MS);

          // With force: the consumer's side goes within seconds, and the report lists what stays on a.
          const forced = await timed(consumerTeam, ["destroy", "--yes"]);
          expect(forced.result.exitCode === 0 ? "" : failureSummary(forced.result)).toBe("");
          expect(forced.ms).toBeLessThan(FORCED_WITHIN_MS);
          const report = forced.result.stdout.replace(/\s+/g, " ");
          for (const part of [
            `NamespaceOffloading "b-${EMPTY_NAMESPACE}": forced delete removed the consumer's side; left on provider a: ` +
              `namespace ${emptyRemote} and the RemoteNamespace pulumi-liqo-tenant-`,
            `any pod offloaded there (none was on the virtual node here)`,
            `NamespaceOffloading "b-${BUSY_NAMESPACE}": forced delete removed the consumer's side; left on provider a: ` +
              `namespace ${busyRemote} and the RemoteNamespace pulumi-liqo-tenant-`,
            `the ConfigMaps and Secrets reflected into ${busyRemote}`,
            `the pods offloaded there (${cartPods.map((p) => `${BUSY_NAMESPACE}/${p}`).join(", ")})`,
            `When the provider is back, deleting RemoteNamespace pulumi-liqo-tenant-`,
            'Tunnel "b-to-provider-tunnel": forced delete removed the consumer\'s side; left on provider a:',
            "TunnelEndpoint pulumi-liqo-tenant-",
            `WireGuard interface ${providerInterface} with its routes and NAT rules`,
            `the wireguard-go process serving ${providerInterface}`,
            `key Secret pulumi-liqo-system/wireguard-${providerInterface}`,
            'Peering "b-to-provider": forced delete removed the consumer\'s side; left on provider a: tenant namespace pulumi-liqo-tenant-',
            "Role and RoleBinding pulumi-liqo-tenant-",
            "ResourceRequest pulumi-liqo-tenant-",
            "CertificateSigningRequests labelled peering.pulumi-liqo.dev/remote-cluster-id=",
          ]) {
            expect(report).toContain(part);
          }
          // Nothing of the peering is left on the consumer: objects, interface, process, key.
          expect(await projectTraces(b.kubeconfig)).toEqual([]);
          expect(await tunnelTraces(b, [consumerInterface])).toEqual([]);
          // The cart's pods: those that ran on a are gone from b, and its Deployment's new ones wait
          // Pending with the scheduler's reason (no node is left for them), none stuck Terminating.
          const settled = await settledCart(b, cartPods);
          expect(settled).toHaveLength(BUSY_REPLICAS);
        } finally {
          // a's API server is gone: its stack cannot be destroyed, and the lab goes with withLab.
          await consumerTeam.pulumi(["destroy", "--yes"]);
          consumerTeam.dispose();
          providerTeam.dispose();
        }
      });
    },
  );
});
