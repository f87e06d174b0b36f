/**
 * The provider is gone, and the stack wants out, through the real `pulumi` CLI on a private lab
 * with its load balancers: the one-stack program (examples/local-peering: both Clusters, the
 * provider's PeeringToken, the Peering, the Tunnel and a NamespaceOffloading of b's namespace
 * `shop`), with two pods of a Deployment running on the virtual node. The provider's etcd is
 * stopped and its API server left running, as a control plane whose storage is lost: it still
 * completes TLS handshakes and answers no request that needs storage. `pulumi destroy` fails within
 * 30 s, naming the provider, what did not answer and `force`, with no stack trace and nothing
 * changed; `force: true` on every resource is set by `pulumi up` without the provider; then
 * `pulumi destroy` completes, leaves nothing of the project on the consumer, and lists what
 * stays on the provider, resource by resource.
 */
import * as k8s from "@kubernetes/client-node";
import { join } from "node:path";
import {
  clusterOf,
  readLab,
  type ClusterState,
  type LabState,
  DEFAULT_LOAD_BALANCER,
} from "../../local-cluster/lab.js";
import { API_GROUP, API_VERSION, SYSTEM_NAMESPACE } from "../../core/api/index.js";
import { readOptional } from "../../core/kube/client.js";
import { stopProcess } from "../../host/processes.js";
import { adminConfig } from "../../harness/install.js";
import { TEST_LAB_ROOT, withLab } from "../../harness/labs.js";
import { projectTraces, tunnelTraces } from "../../harness/leaks.js";
import { runPodtoolDeployment } from "../../harness/offloading.js";
import {
  configureForLab,
  failureSummary,
  outputsOf,
  previewOf,
  PulumiWorkspace,
  setConfig,
} from "../../harness/pulumi.js";

const PROGRAM = join(__dirname, "..", "..", "examples", "local-peering");
/** A stack trace line, as Node prints one. */
const TRACE_LINE = /^\s+at /m;
/** What the issue asks of a destroy that meets a provider answering nothing: fail within 30 s, engine included. */
const FAILS_WITHIN_MS = 30_000;
/** The test's own bound: a private lab's start, up, the pods, two destroys and an up, on a loaded machine. */
const TEST_BOUND_MS = 25 * 60_000;
/** b's namespace the program offloads to a. */
const OFFLOADED = "shop";
/** The Deployment whose pods run on the virtual node. */
const APP = "web";

/** Runs `pulumi args…` and how long it took. */
async function timed(
  workspace: PulumiWorkspace,
  args: readonly string[],
): Promise<{ result: Awaited<ReturnType<PulumiWorkspace["pulumi"]>>; ms: number }> {
  const started = Date.now();
  const result = await workspace.pulumi(args);
  return { result, ms: Date.now() - started };
}

/** What of the peering b holds: its TunnelEndpoints, the virtual node, the offloading, and the app's pods on the virtual node. */
async function consumerSide(b: ClusterState): Promise<string[]> {
  const kc = adminConfig(b);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const endpoints = (await readOptional(() =>
    custom.listClusterCustomObject({ group: API_GROUP, version: API_VERSION, plural: "tunnelendpoints" }),
  )) as { items: { metadata: { namespace: string; name: string } }[] } | undefined;
  const offloadings = (await readOptional(() =>
    custom.listNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: "namespaceoffloadings",
      namespace: OFFLOADED,
    }),
  )) as { items: unknown[] } | undefined;
  const nodes = await core.listNode();
  const pods = await core.listNamespacedPod({ namespace: OFFLOADED, fieldSelector: "spec.nodeName=liqo-a" });
  return [
    ...(endpoints?.items ?? []).map((e) => `tunnelendpoint ${e.metadata.namespace}/${e.metadata.name}`),
    ...nodes.items.filter((n) => n.metadata?.name === "liqo-a").map(() => "node liqo-a"),
    ...(offloadings?.items ?? []).map(() => `namespaceoffloading ${OFFLOADED}`),
    ...pods.items.map(() => "pod on liqo-a"),
  ];
}

describe("the provider's storage is gone and the one-stack program wants out", () => {
  test(
    "GIVEN the one-stack program with pods on the virtual node and the provider's etcd stopped WHEN destroyed without force, " +
      "then force set by up, then destroyed THEN it fails within 30 s naming the provider and force, changing nothing, and " +
      "the forced destroy completes, cleaning the consumer and listing what stays",
    async () => {
      await withLab([{ name: "a" }, { name: "b" }], { loadBalancer: DEFAULT_LOAD_BALANCER }, async (lab: LabState) => {
        const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
        const bCore = adminConfig(b).makeApiClient(k8s.CoreV1Api);
        const workspace = await PulumiWorkspace.create(PROGRAM);
        try {
          await bCore.createNamespace({ body: { metadata: { name: OFFLOADED } } });
          await configureForLab(workspace, lab);
          await setConfig(workspace, [["offloadNamespace", OFFLOADED]]);
          await workspace.ok(["up", "--yes", "--skip-preview"]);
          expect((await workspace.ok(["stack", "output", "tunnelStatus"])).stdout.trim()).toBe("Connected");
          const offloadedAs = (await workspace.ok(["stack", "output", "offloadedAs"])).stdout.trim();
          await runPodtoolDeployment(adminConfig(b), OFFLOADED, APP, 2, "liqo-a");
          const tunnel = await outputsOf(workspace, "Tunnel", "b-to-a-tunnel");
          const consumerInterface = String(
            (tunnel["consumer"] as { interfaceName?: string } | undefined)?.interfaceName,
          );
          expect(consumerInterface).toMatch(/^lqw[0-9a-f]+$/);
          const before = await consumerSide(b);
          expect(before).toEqual([
            expect.stringMatching(/^tunnelendpoint pulumi-liqo-system\/to-/),
            "node liqo-a",
            `namespaceoffloading ${OFFLOADED}`,
            "pod on liqo-a",
            "pod on liqo-a",
          ]);

          // The provider's storage goes, as a host's disk or etcd does: its supervisor first (it
          // would start etcd again), then etcd (the lab's records of them, by PID). Its API server
          // still runs, and completes handshakes.
          const provider = clusterOf(readLab(lab.name, TEST_LAB_ROOT)!, "a");
          await stopProcess(provider.supervisor!);
          await stopProcess(provider.processes.find((p) => p.name === "etcd")!);

          // Without force: a clear error within 30 s, no trace, nothing changed.
          const refused = await timed(workspace, ["destroy", "--yes", "--skip-preview"]);
          expect(refused.result.exitCode).not.toBe(0);
          const said = refused.result.stdout + refused.result.stderr;
          for (const step of ["network fabric", "offloading"])
            expect(said).toMatch(
              new RegExp(
                `${step}: provider a is unreachable: API server ${a.apiServerUrl.replace(/\./g, "\\.")}: not ready`,
              ),
            );
          for (const kind of ["Tunnel", "NamespaceOffloading"])
            expect(said).toContain(
              `Nothing was changed. If the provider is gone for good, set force: true on the ${kind}`,
            );
          expect(said).not.toMatch(TRACE_LINE);
          expect(refused.ms).toBeLessThan(FAILS_WITHIN_MS);
          expect(await consumerSide(b)).toEqual(before);

          // force is set with the provider still gone: up changes only the records.
          await workspace.ok(["config", "set", "--type", "bool", "force", "true"]);
          expect((await previewOf(workspace)).steps.sort()).toEqual([
            "update a",
            "update a-token",
            "update b",
            "update b-offloads",
            "update b-to-a",
            "update b-to-a-tunnel",
          ]);
          const setForce = await workspace.pulumi(["up", "--yes", "--skip-preview"]);
          expect(setForce.exitCode === 0 ? "" : failureSummary(setForce)).toBe("");

          // With force: the stack goes, the consumer is clean, and each resource lists what stays on a.
          const forced = await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
          expect(forced.exitCode === 0 ? "" : failureSummary(forced)).toBe("");
          const report = forced.stdout.replace(/\s+/g, " ");
          const forgotten = `forced delete removed it from the stack without its cluster (API server ${a.apiServerUrl}); left there:`;
          for (const part of [
            `NamespaceOffloading "b-offloads": forced delete removed the consumer's side; left on provider a: namespace ${offloadedAs}`,
            `the pods offloaded there (${OFFLOADED}/${APP}-`,
            'Tunnel "b-to-a-tunnel": forced delete removed the consumer\'s side; left on provider a:',
            'Peering "b-to-a": forced delete removed the consumer\'s side; left on provider a: tenant namespace pulumi-liqo-tenant-',
            `PeeringToken "a-token": ${forgotten} Secret ${SYSTEM_NAMESPACE}/`,
            `Cluster "a": ${forgotten} namespace ${SYSTEM_NAMESPACE}`,
          ])
            expect(report).toContain(part);
          const state = JSON.parse((await workspace.ok(["stack", "export"])).stdout) as {
            deployment: { resources?: { type: string }[] };
          };
          expect((state.deployment.resources ?? []).filter((r) => r.type.startsWith("pulumi-nodejs:dynamic"))).toEqual(
            [],
          );
          expect(await projectTraces(b.kubeconfig)).toEqual([]);
          expect(await tunnelTraces(b, [consumerInterface])).toEqual([]);
        } finally {
          // a cannot be destroyed once its etcd is gone: the lab goes with withLab.
          await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
          workspace.dispose();
        }
      });
    },
    TEST_BOUND_MS,
  );
});
