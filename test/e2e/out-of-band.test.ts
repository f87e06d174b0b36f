/**
 * The out-of-band peering through the real `pulumi` CLI, on the shared local clusters: provider
 * `a`, consumer `b`, in one stack (test/e2e/programs/out-of-band).
 */
import * as k8s from "@kubernetes/client-node";
import { execa } from "execa";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  API_GROUP,
  API_VERSION,
  NAMESPACE_OFFLOADING_NAME,
  SYSTEM_NAMESPACE,
  type NamespaceOffloading,
} from "../../core/api/index.js";
import { VIRTUAL_NODE_TAINT } from "../../core/virtual-node/node.js";
import { poll } from "../../core/wait/poll.js";
import { clusterOf, type ClusterState, type LabState } from "../../local-cluster/lab.js";
import { expectPodsTalk } from "../support/project-pods.js";
import { podtoolFrom } from "../../local-cluster/pods.js";
import { imageReference } from "../../local-cluster/node-images.js";
import { adminConfig, scaleAgent } from "../../harness/install.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { projectTraces, tunnelTraces } from "../../harness/leaks.js";
import {
  configureForLab,
  setConfig,
  descendantsOf,
  failureSummary,
  isAlive,
  plannedSteps,
  previewOf,
  PulumiWorkspace,
  stepsByRow,
  type PulumiResult,
} from "../../harness/pulumi.js";
import { PEERING_DIFF } from "../../core/resources/peering.js";
import { PEERING_TOKEN_DIFF } from "../../core/resources/peering-token.js";
import { TUNNEL_DIFF } from "../../core/resources/tunnel.js";

/** Each test's bound: pulumi commands against the shared lab, each with its own deadline. */
const TEST_BOUND_MS = 8 * 60_000;
/** The bound of this file's set-up and clean-up: the shared lab. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS;

const PROGRAM = join(__dirname, "..", "..", "examples", "local-peering");
/** The namespace of b the test offloads to a. */
const OFFLOADED = "shop";

function client(cluster: ClusterState): k8s.CoreV1Api {
  return adminConfig(cluster).makeApiClient(k8s.CoreV1Api);
}

/** The WireGuard interfaces a stack's state names, for checking their sockets are gone after destroy. */
async function interfacesInState(workspace: PulumiWorkspace): Promise<string[]> {
  const exported = (await workspace.ok(["stack", "export"])).stdout;
  return [...new Set([...exported.matchAll(/"interfaceName":\s*"(lqw[0-9a-f]+)"/g)].map((m) => m[1]!))];
}

/** Nothing of any tunnel left in either cluster. */
async function expectNoTunnelTraces(lab: LabState, ifnames: readonly string[]): Promise<void> {
  for (const cluster of lab.clusters) expect(await tunnelTraces(cluster, ifnames)).toEqual([]);
}

/** b's NamespaceOffloading of the offloaded namespace. */
async function offloadingOf(b: ClusterState): Promise<NamespaceOffloading> {
  return (await adminConfig(b).makeApiClient(k8s.CustomObjectsApi).getNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    namespace: OFFLOADED,
    plural: "namespaceoffloadings",
    name: NAMESPACE_OFFLOADING_NAME,
  })) as NamespaceOffloading;
}

/** A Deployment of one podtool pod held to the virtual node (its selector and toleration). */
function heldToVirtualNode(name: string): k8s.V1Deployment {
  const deployment = unmodifiedDeployment(name, 1);
  deployment.spec!.template.spec!.nodeSelector = { type: "virtual-node" };
  deployment.spec!.template.spec!.tolerations = [{ key: VIRTUAL_NODE_TAINT.key, operator: "Exists" }];
  return deployment;
}

/** A Deployment of podtool pods as any chart ships one: no toleration, no node selector. */
function unmodifiedDeployment(name: string, replicas: number): k8s.V1Deployment {
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "podtool", image: imageReference("podtool"), imagePullPolicy: "Never" }] },
      },
    },
  };
}

/** The pods of the offloaded namespace of b matching `selector`, once `done` holds for them. */
async function podsOf(b: ClusterState, selector: string, done: (pods: k8s.V1Pod[]) => boolean): Promise<k8s.V1Pod[]> {
  return poll(
    { step: "test", object: `pods ${selector} of ${OFFLOADED}`, endpoint: b.apiServerUrl },
    { timeoutMs: 120_000, intervalMs: 500 },
    async () => {
      const pods = (await client(b).listNamespacedPod({ namespace: OFFLOADED, labelSelector: selector })).items.filter(
        (p) => !p.metadata?.deletionTimestamp,
      );
      return done(pods)
        ? { done: true, value: pods }
        : {
            done: false,
            state: pods
              .map(
                (p) =>
                  `${p.metadata?.name} ${p.spec?.nodeName ?? "unbound"} ${p.status?.phase} ${p.status?.conditions?.map((c) => c.reason ?? "").join(",")}`,
              )
              .join("; "),
          };
    },
  );
}

async function nodeCapacity(b: ClusterState, name: string): Promise<Record<string, string> | undefined> {
  return (await client(b).readNode({ name })).status?.capacity;
}

describe("out-of-band peering through the pulumi CLI", () => {
  let lab: LabState;
  beforeAll(async () => {
    lab = await sharedLab();
  }, HOOK_BOUND_MS);

  test(
    "GIVEN two clusters WHEN preview, up, no-change preview and refresh, resize, token rotation, destroy THEN " +
      "each does what it says and nothing is left",
    async () => {
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      const workspace = await PulumiWorkspace.create(PROGRAM);
      try {
        // As the README's program: no server address, so b dials where a's gateway says it is reached.
        await configureForLab(workspace, lab);
        expect((await plannedSteps(workspace)).sort()).toEqual([
          "create a",
          "create a-token",
          "create b",
          "create b-to-a",
          "create b-to-a-tunnel",
        ]);

        // An up right after the preview the test checked runs without previewing again (--skip-preview), here and below.
        const up = await workspace.ok(["up", "--yes", "--skip-preview"]);
        expect(up.stdout).toContain("[2/3] negotiation: waiting for an offer from provider a");
        // Each step is the live status of its own resource's row (cleared at the end), never a line of the stack's.
        // Each Cluster's row shows its waits on the load balancer's addresses and on its agent serving at them.
        expect(stepsByRow(up.stdout)).toEqual({
          "liqo:Cluster::a": ["[1/2] cluster", "[2/2] cluster", ""],
          "liqo:Cluster::b": ["[1/2] cluster", "[2/2] cluster", ""],
          "liqo:Peering::b-to-a": ["[1/3] authentication", "[2/3] negotiation", "[3/3] virtual node", ""],
          "liqo:Tunnel::b-to-a-tunnel": [
            "[1/4] network fabric",
            "[2/4] network fabric",
            "[3/4] network fabric",
            "[4/4] network fabric",
            "",
          ],
        });
        expect(await nodeCapacity(b, "liqo-a")).toEqual({ cpu: "2", memory: "4Gi", pods: "20" });
        expect((await workspace.ok(["stack", "output", "tunnelStatus"])).stdout.trim()).toBe("Connected");
        await expectPodsTalk(b, a);

        // Offloading a namespace of b: a NamespaceOffloading is all the preview plans; a pod of it that
        // tolerates the virtual node's taint runs on a, and b's own pod reaches it at the address b shows.
        const core = client(b);
        await core.createNamespace({ body: { metadata: { name: OFFLOADED } } });
        await workspace.ok(["config", "set", "offloadNamespace", OFFLOADED]);
        expect(await plannedSteps(workspace)).toEqual(["create b-offloads"]);
        await workspace.ok(["up", "--yes", "--skip-preview"]);
        const remoteNamespace = (await workspace.ok(["stack", "output", "offloadedAs"])).stdout.trim();
        expect(remoteNamespace).toMatch(new RegExp(`^${OFFLOADED}-[0-9a-f]{16}$`));
        await core.createNamespacedPod({
          namespace: OFFLOADED,
          body: {
            metadata: { name: "web" },
            spec: {
              containers: [{ name: "podtool", image: imageReference("podtool"), imagePullPolicy: "Never" }],
              tolerations: [{ key: VIRTUAL_NODE_TAINT.key, operator: "Exists" }],
              nodeSelector: { type: "virtual-node" },
            },
          },
        });
        const offloaded = await poll(
          { step: "test", object: `pod ${OFFLOADED}/web Running on b`, endpoint: b.apiServerUrl },
          { timeoutMs: 90_000, intervalMs: 500 },
          async () => {
            const current = await core.readNamespacedPod({ name: "web", namespace: OFFLOADED });
            return current.status?.phase === "Running" && current.status.podIP
              ? { done: true, value: current }
              : { done: false, state: `${current.spec?.nodeName ?? "unbound"} ${current.status?.phase}` };
          },
        );
        expect(offloaded.spec?.nodeName).toBe("liqo-a");
        const there = await client(a).readNamespacedPod({ name: "web", namespace: remoteNamespace });
        expect(there.spec?.nodeName).toMatch(/^a-n\d$/);
        expect(await podtoolFrom(b, 1, "tcp", `${offloaded.status!.podIP}:8080`, 60_000)).toContain("web");
        await workspace.ok(["refresh", "--yes", "--expect-no-changes"]);
        // The remote namespace deleted on a while a's agent is stopped (nothing remakes it): refresh
        // reports it; with the agent back, up makes it again and the pod with it.
        await scaleAgent(a, 0);
        await client(a).deleteNamespace({ name: remoteNamespace });
        await poll(
          { step: "test", object: `b's report of namespace ${remoteNamespace} gone on a`, endpoint: b.apiServerUrl },
          { timeoutMs: 90_000, intervalMs: 1000 },
          async () => {
            const remotes = (await offloadingOf(b)).status?.remotes ?? [];
            return remotes.some((r) => r.phase === "Missing")
              ? { done: true, value: undefined }
              : { done: false, state: JSON.stringify(remotes) };
          },
        );
        const gone = await workspace.pulumi(["refresh", "--yes", "--expect-no-changes"]);
        expect(gone.exitCode).not.toBe(0);
        expect((await workspace.ok(["stack", "export"])).stdout).toMatch(
          new RegExp(
            `virtual node liqo-a \\(provider [0-9a-f]+\\): Missing: namespace ${remoteNamespace} is gone on provider`,
          ),
        );
        await scaleAgent(a, 1);
        expect(await plannedSteps(workspace)).toEqual(["update b-offloads"]);
        await workspace.ok(["up", "--yes", "--skip-preview"]);
        await poll(
          { step: "test", object: `pod ${remoteNamespace}/web made again on a`, endpoint: a.apiServerUrl },
          { timeoutMs: 90_000, intervalMs: 1000 },
          async () => {
            const pods = (await client(a).listNamespacedPod({ namespace: remoteNamespace })).items;
            return pods.some((p) => p.metadata?.name === "web")
              ? { done: true, value: undefined }
              : { done: false, state: `${pods.length} pods` };
          },
        );
        await workspace.ok(["refresh", "--yes", "--expect-no-changes"]);
        // Withdrawn while a Deployment held to the virtual node keeps making pods: the delete
        // finishes all the same; the pods go from both clusters, the namespace from a, and the
        // Deployment's next pod waits on b, saying why.
        const apps = adminConfig(b).makeApiClient(k8s.AppsV1Api);
        await apps.createNamespacedDeployment({ namespace: OFFLOADED, body: heldToVirtualNode("held") });
        await podsOf(b, "app=held", (pods) => pods.length === 1 && pods[0]!.status?.phase === "Running");
        await workspace.ok(["config", "rm", "offloadNamespace"]);
        expect(await plannedSteps(workspace)).toEqual(["delete b-offloads"]);
        await workspace.ok(["up", "--yes", "--skip-preview"]);
        expect((await core.listNamespacedPod({ namespace: OFFLOADED, labelSelector: "app!=held" })).items).toEqual([]);
        const waiting = await podsOf(b, "app=held", (pods) =>
          pods.some((p) => p.status?.conditions?.some((c) => c.reason === "NamespaceNotOffloaded")),
        );
        expect(waiting.map((p) => [p.spec?.nodeName, p.status?.phase])).toEqual([["liqo-a", "Pending"]]);
        expect(
          await client(a)
            .readNamespace({ name: remoteNamespace })
            .catch(() => undefined),
        ).toBeUndefined();
        await apps.deleteNamespacedDeployment({ name: "held", namespace: OFFLOADED });

        await workspace.ok(["preview", "--expect-no-changes"]);
        await workspace.ok(["refresh", "--yes", "--expect-no-changes"]);

        // A new resource request updates the peering in place, and the preview says why; the node's capacity follows.
        await workspace.ok(["config", "set", "cpu", "3"]);
        const resize = await previewOf(workspace);
        expect(resize.steps).toEqual(["update b-to-a"]);
        expect(resize.explanations).toEqual([
          {
            urn: expect.stringMatching(/::pulumi-nodejs:dynamic\/liqo:Peering::b-to-a$/),
            message: `Peering "b-to-a": resources changes → updates in place: ${PEERING_DIFF.resources.reason}`,
          },
        ]);
        await workspace.ok(["up", "--yes", "--skip-preview"]);
        expect(await nodeCapacity(b, "liqo-a")).toEqual({ cpu: "3", memory: "4Gi", pods: "20" });

        // Rotating the token replaces only the token; the peering keeps working.
        const oldTokenId = (await workspace.ok(["stack", "output", "tokenId"])).stdout.trim();
        await workspace.ok(["config", "set", "rotation", "2"]);
        const rotation = await workspace.ok(["up", "--yes"]);
        expect(rotation.stdout).toMatch(/\+-1 replaced/);
        expect(rotation.stdout).toContain(
          `PeeringToken "a-token": rotation changes → replaces (create, then delete): ${PEERING_TOKEN_DIFF.rotation.reason}`,
        );
        expect(rotation.stdout).toMatch(/5 unchanged/);
        expect(rotation.stdout).not.toMatch(/b-to-a\s+(updated|replaced|created)/);
        expect((await workspace.ok(["stack", "output", "tokenId"])).stdout.trim()).not.toBe(oldTokenId);
        await workspace.ok(["refresh", "--yes", "--expect-no-changes"]);

        // Secrets appear in the exported stack only as ciphertext; the token nowhere in the provider.
        const exported = (await workspace.ok(["stack", "export"])).stdout;
        const token = (await workspace.ok(["stack", "output", "peeringToken", "--show-secrets"])).stdout.trim();
        expect(token).toMatch(/^plt_[0-9a-f]{16}_/);
        expect(exported).not.toContain(token);
        expect(exported).not.toContain("client-key-data");
        expect(exported).not.toContain("PRIVATE KEY");
        // The gateways' private keys stay in their clusters: not in the state in any form.
        expect(exported).not.toMatch(/privateKey/i);
        for (const cluster of [a, b]) {
          const keys = (await client(cluster).listNamespacedSecret({ namespace: SYSTEM_NAMESPACE })).items.filter((s) =>
            s.metadata?.name?.startsWith("wireguard-"),
          );
          expect(keys).toHaveLength(1);
          const privateKey = Buffer.from(keys[0]!.data!["privateKey"]!, "base64").toString("utf8");
          expect(exported).not.toContain(privateKey);
          expect(exported).not.toContain(keys[0]!.data!["privateKey"]!);
        }

        // A new gateway port updates the tunnel in place, and the preview says why without quoting a secret; traffic flows again.
        // a's gateway then listens on its node at that port, off its Service's: b is given the node's address.
        await setConfig(workspace, [
          ["tunnelPort", "51823"],
          ["aGatewayAddress", a.publicAddress],
        ]);
        const move = await previewOf(workspace);
        expect(move.steps).toEqual(["update b-to-a-tunnel"]);
        expect(move.explanations).toEqual([
          {
            urn: expect.stringMatching(/::pulumi-nodejs:dynamic\/liqo:Tunnel::b-to-a-tunnel$/),
            message:
              `Tunnel "b-to-a-tunnel": serverAddress changes → updates in place: ${TUNNEL_DIFF.serverAddress.reason}\n` +
              `Tunnel "b-to-a-tunnel": port changes → updates in place: ${TUNNEL_DIFF.port.reason}`,
          },
        ]);
        for (const secret of [token, "client-key-data", "PRIVATE KEY", readFileSync(b.kubeconfig, "utf8")])
          expect(move.output).not.toContain(secret);
        await workspace.ok(["up", "--yes", "--skip-preview"]);
        await expectPodsTalk(b, a);
        await workspace.ok(["refresh", "--yes", "--expect-no-changes"]);

        const providerSecrets = await client(a).listNamespacedSecret({ namespace: SYSTEM_NAMESPACE });
        const secretText = JSON.stringify(providerSecrets.items);
        expect(secretText).not.toContain(token);
        expect(secretText).not.toContain(Buffer.from(token).toString("base64"));

        // Drift: the virtual node deleted behind Pulumi's back shows on refresh; up repairs it in
        // place, from the identity b holds: no new certificate, no CSR on a.
        const identityVersion = async (): Promise<string | undefined> =>
          (await client(b).listNamespacedSecret({ namespace: SYSTEM_NAMESPACE })).items.find((s) =>
            s.metadata?.name?.startsWith("identity-"),
          )?.metadata?.resourceVersion;
        const heldBefore = await identityVersion();
        const csrNames = async (): Promise<string[]> =>
          (await adminConfig(a).makeApiClient(k8s.CertificatesV1Api).listCertificateSigningRequest()).items
            .map((c) => c.metadata!.name!)
            .sort();
        const csrsBefore = await csrNames();
        await client(b).deleteNode({ name: "liqo-a" });
        const drift = await workspace.pulumi(["refresh", "--yes", "--expect-no-changes"]);
        expect(drift.exitCode).not.toBe(0);
        expect((await workspace.ok(["stack", "export"])).stdout).toContain("virtual node liqo-a: node not found");
        expect(await plannedSteps(workspace)).toEqual(["update b-to-a"]);
        const repair = await workspace.ok(["up", "--yes", "--skip-preview"]);
        expect(repair.stdout).toContain("still accepts the identity held for it; not asking for another");
        expect(await nodeCapacity(b, "liqo-a")).toEqual({ cpu: "3", memory: "4Gi", pods: "20" });
        expect(await identityVersion()).toBe(heldBefore);
        expect(await csrNames()).toEqual(csrsBefore);
        await workspace.ok(["refresh", "--yes", "--expect-no-changes"]);

        // Destroyed with an application running on a: an unmodified Deployment of the namespace,
        // offloaded again, this time `remote`.
        await workspace.ok(["config", "set", "offloadNamespace", OFFLOADED]);
        await workspace.ok(["config", "set", "podOffloading", "remote"]);
        await workspace.ok(["up", "--yes", "--skip-preview"]);
        await apps.createNamespacedDeployment({ namespace: OFFLOADED, body: unmodifiedDeployment("app", 2) });
        await podsOf(
          b,
          "app=app",
          (pods) =>
            pods.length === 2 && pods.every((p) => p.spec?.nodeName === "liqo-a" && p.status?.phase === "Running"),
        );
        const ifnames = await interfacesInState(workspace);
        expect(ifnames).toHaveLength(2);
        await workspace.ok(["destroy", "--yes"]);
        expect(await projectTraces(a.kubeconfig)).toEqual([]);
        expect(await projectTraces(b.kubeconfig)).toEqual([]);
        await expectNoTunnelTraces(lab, ifnames);
        // The Deployment's pods since are b's own: none on the virtual node, which is gone.
        await podsOf(b, "app=app", (pods) => pods.length === 2 && pods.every((p) => p.spec?.nodeName !== "liqo-a"));
        await apps.deleteNamespacedDeployment({ name: "app", namespace: OFFLOADED });
        await core.deleteNamespace({ name: OFFLOADED });
        await workspace.ok(["config", "rm", "offloadNamespace"]);
        await workspace.ok(["config", "rm", "podOffloading"]);
      } finally {
        await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
        workspace.dispose();
      }
      expect(await projectTraces(a.kubeconfig)).toEqual([]);
      expect(await projectTraces(b.kubeconfig)).toEqual([]);
      await expectNoTunnelTraces(lab, []);
    },
    // Its own bound: some 25 pulumi commands, each with its own 5-minute deadline; the whole ran past
    // Jest's 600 s twice on 2026-11-25 at load averages of 8 to 38, and past 1,200 s in a run of
    // 2026-11-28 whose every file took three times its usual time (366 to 413 s on a usual hour),
    // and past 1,800 s in a run beside other tests at a load average of 20 to 27.
    2_700_000,
  );

  test(
    "GIVEN a pulumi up killed half-way through the peering WHEN run again THEN it converges and destroy leaves nothing",
    async () => {
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      const workspace = await PulumiWorkspace.create(PROGRAM);
      let run: ReturnType<typeof execa> | undefined;
      try {
        await configureForLab(workspace, lab);
        run = execa("pulumi", ["up", "--yes", "--non-interactive"], {
          cwd: workspace.programDir,
          env: workspace.env,
          reject: false,
          stdin: "ignore",
        });
        const secrets = client(b);
        let ended: PulumiResult | undefined;
        void run.then(
          (result) =>
            (ended = { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) }),
        );
        // Half-way: the consumer holds its identity, the virtual node does not exist yet.
        // Bounded by the resources' own deadline: on a loaded machine the program's start and both
        // installs have taken two minutes before authentication began.
        await poll(
          { step: "test", object: "identity Secret in the consumer", endpoint: b.apiServerUrl },
          { timeoutMs: 300_000, intervalMs: 50 },
          async () => {
            if (ended)
              return {
                failed: true,
                reason: `pulumi up ended (exit ${ended.exitCode}) before the consumer held an identity:\n${failureSummary(ended)}`,
              };
            const list = await secrets
              .listNamespacedSecret({ namespace: SYSTEM_NAMESPACE })
              .catch(() => ({ items: [] as k8s.V1Secret[] }));
            return list.items.some((s) => s.metadata?.name?.startsWith("identity-"))
              ? { done: true, value: undefined }
              : { done: false, state: "no identity yet" };
          },
        );
        // The engine's plugins and program: the language host, the program, the dynamic provider.
        const left = descendantsOf(run.pid!);
        expect(left.length).toBeGreaterThanOrEqual(3);
        run.kill("SIGKILL");
        await run;
        // Nothing runs on for nobody: each notices within a second or two that the engine is gone.
        await poll(
          { step: "test", object: "the killed engine's plugins and program to end", endpoint: "this machine" },
          { timeoutMs: 15_000, intervalMs: 250 },
          async () => {
            const alive = left.filter(isAlive);
            return alive.length === 0
              ? { done: true, value: undefined }
              : { done: false, state: `still running: ${alive.join(", ")}` };
          },
        );

        // What docs/operations.md says to run after a killed update: `pulumi cancel` when the stack is
        // locked, then `pulumi up`, which converges without clearing anything by hand.
        let again = await workspace.pulumi(["up", "--yes"]);
        if (again.exitCode !== 0 && /currently locked/.test(again.stderr)) {
          await workspace.ok(["cancel", "--yes"]);
          again = await workspace.pulumi(["up", "--yes"]);
        }
        expect([again.exitCode, again.stderr]).toEqual([0, ""]);
        expect(await nodeCapacity(b, "liqo-a")).toEqual({ cpu: "2", memory: "4Gi", pods: "20" });
        await workspace.ok(["preview", "--expect-no-changes"]);
        await workspace.ok(["destroy", "--yes", "--skip-preview"]);
      } finally {
        // A run that the test failed before killing is stopped as a user would stop it.
        if (run && run.exitCode === null && run.signalCode === null) {
          run.kill("SIGINT");
          await run;
        }
        await workspace.pulumi(["destroy", "--yes", "--skip-preview"]);
        workspace.dispose();
      }
      expect(await projectTraces(a.kubeconfig)).toEqual([]);
      expect(await projectTraces(b.kubeconfig)).toEqual([]);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a malformed kubeconfig WHEN previewed THEN check fails naming the resource and the property, and nothing is created",
    async () => {
      const workspace = await PulumiWorkspace.create(PROGRAM);
      try {
        await configureForLab(workspace, lab);
        const broken = join(workspace.dir, "broken.kubeconfig");
        writeFileSync(broken, "apiVersion: v1\nkind: Config\nclusters: [");
        await workspace.ok(["config", "set", "bKubeconfig", broken]);
        const preview = await workspace.pulumi(["preview"]);
        expect(preview.exitCode).not.toBe(0);
        expect(preview.stdout + preview.stderr).toMatch(
          /Cluster resource 'b' has a problem: kubeconfig: not a usable kubeconfig/,
        );
        expect(await projectTraces(clusterOf(lab, "b").kubeconfig)).toEqual([]);
      } finally {
        workspace.dispose();
      }
    },
    TEST_BOUND_MS,
  );
});
