/**
 * The remote is gone, and the consumer wants out, through the real `pulumi` CLI on a private lab:
 * the provider team's stack and the consumer team's (examples/two-teams: cluster b, its Peering,
 * its Tunnel since `gatewayAddress` is given, and a NamespaceOffloading of b's empty namespace
 * `shop`). With the provider's
 * kube-apiserver stopped, `pulumi destroy` fails within seconds saying the provider is
 * unreachable, at which URL and why, and that `force` exists, with no stack trace and nothing
 * changed; `force: true` is set by `pulumi up` without the provider; then `pulumi destroy` removes
 * the consumer's side within seconds and lists everything that stays on the provider.
 */
import * as k8s from "@kubernetes/client-node";
import { join } from "node:path";
import { clusterOf, readLab, type ClusterState, type LabState } from "../../local-cluster/lab.js";
import { API_GROUP, API_VERSION } from "../../core/api/index.js";
import { readOptional } from "../../core/kube/client.js";
import { stopProcess } from "../../host/processes.js";
import { adminConfig } from "../../harness/install.js";
import { TEST_LAB_ROOT, withLab } from "../../harness/labs.js";
import { projectTraces, tunnelTraces } from "../../harness/leaks.js";
import { configureForCluster, failureSummary, previewOf, PulumiWorkspace } from "../../harness/pulumi.js";

const PROVIDER_PROGRAM = join(__dirname, "..", "..", "examples", "two-teams", "provider");
const CONSUMER_PROGRAM = join(__dirname, "..", "..", "examples", "two-teams", "consumer");
/** A stack trace line, as Node prints one. */
const TRACE_LINE = /^\s+at /m;
/**
 * How long a failing or forced destroy may take: seconds of work plus the engine's own start on a
 * loaded machine, a third of the resources' 300 s deadline, which is what it must not wait for.
 */
const WITHIN_SECONDS_MS = 100_000;
/** The test's own bound: a private lab's start, two stacks up, and the five destroy steps, on a loaded machine. */
const TEST_BOUND_MS = 1_200_000;
/** b's namespace the consumer team offloads to a. */
const OFFLOADED = "shop";

/** Runs `pulumi args…` and how long it took. */
async function timed(
  workspace: PulumiWorkspace,
  args: readonly string[],
): Promise<{ result: Awaited<ReturnType<PulumiWorkspace["pulumi"]>>; ms: number }> {
  const started = Date.now();
  const result = await workspace.pulumi(args);
  return { result, ms: Date.now() - started };
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

/** Whether b's namespace still holds its NamespaceOffloading (none once the kind itself is gone with b's install). */
async function offloadingOf(b: ClusterState): Promise<boolean> {
  const listed = (await readOptional(() =>
    adminConfig(b).makeApiClient(k8s.CustomObjectsApi).listNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: "namespaceoffloadings",
      namespace: OFFLOADED,
    }),
  )) as { items: unknown[] } | undefined;
  return (listed?.items.length ?? 0) > 0;
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
          await configureForCluster(providerTeam, a, { name: "a" });
          await providerTeam.ok(["up", "--yes", "--skip-preview"]);
          await adminConfig(b)
            .makeApiClient(k8s.CoreV1Api)
            .createNamespace({ body: { metadata: { name: OFFLOADED } } });
          await configureForCluster(consumerTeam, b, {
            providerStack: "organization/two-teams-provider/prod",
            gatewayAddress: a.publicAddress,
            offloadNamespaces: OFFLOADED,
          });
          await consumerTeam.ok(["up", "--yes", "--skip-preview"]);
          expect((await consumerTeam.ok(["stack", "output", "tunnelStatus"])).stdout.trim()).toBe("Connected");
          expect(JSON.parse((await consumerTeam.ok(["stack", "output", "offloadingStatus", "--json"])).stdout)).toEqual(
            ["Ready"],
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

          // Without force: a clear error within seconds, no trace, nothing changed.
          const refused = await timed(consumerTeam, ["destroy", "--yes"]);
          expect(refused.result.exitCode).not.toBe(0);
          const said = refused.result.stdout + refused.result.stderr;
          expect(said).toContain(
            `network fabric: provider a is unreachable: API server ${a.apiServerUrl}: connection refused (`,
          );
          expect(said).toContain(
            `offloading: provider a is unreachable: API server ${a.apiServerUrl}: connection refused (`,
          );
          for (const kind of ["Tunnel", "NamespaceOffloading"])
            expect(said).toContain(
              `Nothing was changed. If the provider is gone for good, set force: true on the ${kind}`,
            );
          expect(said).not.toMatch(TRACE_LINE);
          expect(said).not.toContain("fetch failed");
          expect(refused.ms).toBeLessThan(WITHIN_SECONDS_MS);
          expect(await consumerSide(b)).toHaveLength(2);
          expect(await offloadingOf(b)).toBe(true);

          // A refresh meanwhile records the failure as each resource's status; it is not a way in.
          const refreshed = await consumerTeam.pulumi(["refresh", "--yes"]);
          expect(refreshed.stdout + refreshed.stderr).not.toMatch(TRACE_LINE);

          // force is set with the provider still gone: up changes only the record, drift or not.
          await consumerTeam.ok(["config", "set", "--type", "bool", "force", "true"]);
          expect((await previewOf(consumerTeam)).steps.sort()).toEqual([
            `update b-${OFFLOADED}`,
            "update b-to-provider",
            "update b-to-provider-tunnel",
          ]);
          const setForce = await timed(consumerTeam, ["up", "--yes"]);
          expect(setForce.result.exitCode === 0 ? "" : failureSummary(setForce.result)).toBe("");
          expect(setForce.ms).toBeLessThan(WITHIN_SECONDS_MS);

          // With force: the consumer's side goes within seconds, and the report lists what stays on a.
          const forced = await timed(consumerTeam, ["destroy", "--yes"]);
          expect(forced.result.exitCode === 0 ? "" : failureSummary(forced.result)).toBe("");
          expect(forced.ms).toBeLessThan(WITHIN_SECONDS_MS);
          const report = forced.result.stdout.replace(/\s+/g, " ");
          for (const part of [
            'Tunnel "b-to-provider-tunnel": forced delete removed the consumer\'s side; left on provider a:',
            "TunnelEndpoint pulumi-liqo-tenant-",
            `WireGuard interface ${providerInterface} with its routes and NAT rules`,
            `the wireguard-go process serving ${providerInterface}`,
            `key Secret pulumi-liqo-system/wireguard-${providerInterface}`,
            'Peering "b-to-provider": forced delete removed the consumer\'s side; left on provider a: tenant namespace pulumi-liqo-tenant-',
            "Role and RoleBinding pulumi-liqo-tenant-",
            "ResourceRequest pulumi-liqo-tenant-",
            "CertificateSigningRequests labelled peering.pulumi-liqo.dev/remote-cluster-id=",
            `NamespaceOffloading "b-${OFFLOADED}": forced delete removed the consumer's side; left on provider a: namespace ${OFFLOADED}-`,
            "any pod offloaded there (none was on the virtual node here)",
          ]) {
            expect(report).toContain(part);
          }
          // Nothing of the peering is left on the consumer: objects, interface, process, key.
          expect(await projectTraces(b.kubeconfig)).toEqual([]);
          expect(await tunnelTraces(b, [consumerInterface])).toEqual([]);
          expect(await offloadingOf(b)).toBe(false);
        } finally {
          // a's API server is gone: its stack cannot be destroyed, and the lab goes with withLab.
          await consumerTeam.pulumi(["destroy", "--yes", "--skip-preview"]);
          consumerTeam.dispose();
          providerTeam.dispose();
        }
      });
    },
    TEST_BOUND_MS,
  );
});
