/**
 * Offloading on real clusters (the worker's shared lab: a and b, distinct pod CIDRs, the project as
 * pods): b peers with a and a tunnel joins them; namespace `shop` of b is offloaded to a. A
 * Deployment of 3 replicas tolerating the virtual node's taint runs on a's real nodes, and b shows
 * its pods Running at addresses that b's own pods reach, one by one and through a Service of b (by
 * its address and by name), and through a NodePort Service at the virtual node's address.
 * Pods that a's rules forbid are refused, each with a condition that names why, and nothing is made
 * for them on a. The ConfigMap and Secret the pods read go with them, and follow changes; `kubectl
 * logs`, `exec` and `port-forward` on b reach them, and `kubectl run -i --rm` talks to a pod run
 * on a; b's agent restarted loses nothing. b's identity cannot create a
 * pod on a, read pods outside its namespaces there, exec into them, nor have a namespace that is
 * not its own. Deleting the Deployment and then the NamespaceOffloading leaves nothing of either
 * on a. An unmodified Deployment in a namespace offloaded with each `podOffloading` goes where the
 * policy says, and nowhere else is touched. Offloaded Jobs end Succeeded or Failed on b with
 * their exit codes and termination messages, a's events of a pod reach b's pod, and those a forges
 * reach it only bounded. Namespaces selected by label are offloaded by b's agent as they are made or
 * labelled, and withdrawn when their label goes. A pod that a loses is made again; its image changed on b changes in place
 * on a (same pod), and b's identity patching that request for a privileged container is refused and changes nothing
 * there; deleting the peering drains its virtual node first, and a DaemonSet that tolerates every
 * taint, whose pod comes back at once on the cordoned node, does not hold the drain. The namespace's Services are reflected to
 * a and answer there by name (`web`, and with `naming: same` `probed.jobs` and its FQDN), a Service of
 * b's own pods included, whose endpoint goes not ready while the tunnel is cut; the Services b's
 * identity forges are refused and make nothing. An offloaded
 * pod's in-cluster config reaches b's API server as its own ServiceAccount of b (a token b issued),
 * not a's, whose API server does not take it; with `serviceAccountTokens: none` it holds no token;
 * b's identity cannot store a Secret that a would fill with a token of its own.
 */
import * as k8s from "@kubernetes/client-node";
import { execa, type ResultPromise } from "execa";
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  NAMESPACE_OFFLOADING_NAME,
  SELECTED_BY_LABEL,
  SYSTEM_NAMESPACE,
  type OffloadedPod,
  type OffloadingSelector,
  type RemoteNamespace,
} from "../../core/api/index.js";
import { AGENT_NAME, COMPONENT_LABEL, GATEWAY_NAME, KUBELET_PORT } from "../../core/cluster/agent-components.js";
import { forgeCertificateAuthority, forgeClientCertificate } from "../../core/pki/x509.js";
import { readClusterCa } from "../../local-cluster/control-plane.js";
import { httpsAnswer, tcpGreeting } from "../support/probes.js";
import { statusOf } from "../../core/kube/errors.js";
import type { CommandError } from "../../host/exec.js";
import { POD_API_PORT } from "../../core/api/crds.js";
import { TUNNEL_DEFAULTS } from "../../core/network-fabric/tunnel-plan.js";
import { ensureTunnel } from "../../core/network-fabric/tunnel.js";
import {
  CONSUMER_TOKEN_LABEL,
  consumerTokenSecretName,
  OFFLOADED_CONDITION,
  remoteNamespaceName,
} from "../../core/offloading/reflection.js";
import { tenantRequestName, type NamespaceOffloading } from "../../core/api/offloading.js";
import { offloadNamespace as offloadingSteps, withdrawNamespace } from "../../core/offloading/namespace-offloading.js";
import { placementOf } from "../../core/offloading/pod-placement.js";
import { offloadSelectedNamespaces, withdrawSelectedNamespaces } from "../../core/offloading/offloading-selector.js";
import { projectTraces } from "../../harness/leaks.js";
import { updatePeeringResources } from "../../core/peering/peering.js";
import { poll } from "../../core/wait/poll.js";
import { internalIpOf } from "../../core/kube/nodes.js";
import { Cidr } from "../../core/net/cidr.js";
import { imageReference } from "../../local-cluster/node-images.js";
import { kubectl, podtoolFrom, runPodtool, tagImageOnNodes } from "../../local-cluster/pods.js";
import type { ClusterState } from "../../local-cluster/lab.js";
import { offloadNamespace, podtoolPodOn, podtoolSpec, runningPods } from "../../harness/offloading.js";
import { releaseSharedLab, sharedLab } from "../../harness/labs.js";
import { scaleAgent, uninstallClusters } from "../../harness/install.js";
import { peerPair, quietProgress, unpeerPair, type Pair } from "../support/tunnel-pair.js";

/** Each test's bound: offloaded workloads started and withdrawn through the shared lab's peering. */
const TEST_BOUND_MS = 6 * 60_000;
/** The bound of this file's clean-up: the peering's removal and both uninstalls. */
const AFTER_ALL_BOUND_MS = 300_000;

const NAMESPACE = "shop";
const group = { group: API_GROUP, version: API_VERSION };

/** Resolves once namespace `name` no longer exists on the provider `core` talks to. */
function namespaceGone(core: k8s.CoreV1Api, name: string, endpoint: string): Promise<void> {
  return poll(
    { step: "test", object: `namespace ${name} gone from a`, endpoint },
    { timeoutMs: 90_000, intervalMs: 1_000 },
    async () =>
      (await core.readNamespace({ name }).catch(() => undefined))
        ? { done: false, state: "still there" }
        : { done: true, value: undefined },
  );
}

/** The local port `kubectl port-forward … :PORT` chose, from its first line of output. */
function forwardedPort(forward: ResultPromise, endpoint: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`kubectl port-forward via ${endpoint}: no forwarding port said within 60 s`)),
      60_000,
    );
    let seen = "";
    forward.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const port = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(seen)?.[1];
      if (port) {
        clearTimeout(timer);
        resolve(Number(port));
      }
    });
    void forward.then((result) => {
      clearTimeout(timer);
      reject(new Error(`kubectl port-forward via ${endpoint} ended: ${String(result.stderr)}`));
    });
  });
}

/** `kubectl ARGS` on `cluster`, tried again for up to 60 s while it fails (a virtual kubelet's endpoint not serving yet). */
function kubectlSoon(cluster: ClusterState, args: string[]): Promise<string> {
  return poll(
    { step: "test", object: `kubectl ${args.join(" ")}`, endpoint: cluster.apiServerUrl },
    { timeoutMs: 60_000, intervalMs: 1_000 },
    async () =>
      kubectl(cluster, args).then(
        (out) => ({ done: true, value: out }),
        (error: Error) => ({ done: false, state: error.message }),
      ),
  );
}

/** Who the offloaded pod `pod` of `namespace` on `consumer` is to the API server its in-cluster config reaches. */
async function inClusterIdentity(consumer: ClusterState, namespace: string, pod: string): Promise<string> {
  const review = JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" });
  const answer = await kubectlSoon(consumer, [
    ...["exec", "-n", namespace, pod, "--", "/podtool", "api"],
    ...["/apis/authentication.k8s.io/v1/selfsubjectreviews", review],
  ]);
  const body = answer.slice(answer.indexOf("{"));
  return (JSON.parse(body) as { status?: { userInfo?: { username?: string } } }).status?.userInfo?.username ?? "";
}

/** A Deployment `app` of `replicas` podtool pods as a chart ships it: nothing in it knows of virtual nodes. */
function unmodifiedApp(replicas: number): k8s.V1Deployment {
  return {
    metadata: { name: "app" },
    spec: {
      replicas,
      selector: { matchLabels: { app: "app" } },
      template: {
        metadata: { labels: { app: "app" } },
        spec: { containers: [{ name: "app", image: imageReference("podtool"), imagePullPolicy: "Never" }] },
      },
    },
  };
}

/** b peered with a (the pair so far, else a new one on the shared lab), with the tunnel between them up. */
async function withTunnel(current: Pair | undefined): Promise<Pair> {
  const peered = current ?? (await peerPair(await sharedLab()));
  await ensureTunnel(
    peered.sides,
    { server: "provider", serverAddress: peered.a.publicAddress, ...TUNNEL_DEFAULTS, behindNat: [] },
    120_000,
    quietProgress,
  );
  return peered;
}

describe("offloading on real clusters (shared lab)", () => {
  let pair: Pair | undefined;

  // A test that fails half-way leaves its offloaded namespaces (and their admission policies) behind,
  // and the next tests assert a clean consumer: what is left is withdrawn, forcibly, and removed.
  afterEach(async () => {
    if (!pair) return;
    const left = (
      (await pair.consumer.kc
        .makeApiClient(k8s.CustomObjectsApi)
        .listClusterCustomObject({ ...group, plural: "namespaceoffloadings" })) as { items: NamespaceOffloading[] }
    ).items.map((o) => o.metadata.namespace!);
    const bCore = pair.consumer.kc.makeApiClient(k8s.CoreV1Api);
    for (const namespace of left) {
      await withdrawNamespace(pair.consumer.kc, namespace, { force: true, timeoutMs: 120_000 }, quietProgress);
      await bCore.deleteNamespace({ name: namespace }).catch(() => undefined);
    }
  }, AFTER_ALL_BOUND_MS);

  afterAll(async () => {
    if (pair) {
      await unpeerPair(pair).catch(() => undefined);
      await uninstallClusters([pair.b, pair.a], { keepDefinitions: true });
    }
    await releaseSharedLab();
  }, AFTER_ALL_BOUND_MS);

  test(
    "GIVEN b peered with a and shop offloaded WHEN a Deployment of 3 runs on the virtual node THEN its pods run on a's nodes, " +
      "b reaches each at the address it shows and through a Service; they resolve every name as at home and none of a's own; " +
      "forbidden pods are refused with a reason and nothing is " +
      "made for them; b's identity can neither make pods on a nor read others'; deleting leaves nothing on a",
    async () => {
      pair = await withTunnel(undefined);
      const { a, b, record } = pair;
      const bCore = pair.consumer.kc.makeApiClient(k8s.CoreV1Api);
      const aCore = pair.provider.kc.makeApiClient(k8s.CoreV1Api);
      const bCustom = pair.consumer.kc.makeApiClient(k8s.CustomObjectsApi);
      const identity = pair.sides.provider.kc;
      const remoteNamespace = remoteNamespaceName(NAMESPACE, pair.consumer.clusterId, "suffixed");

      // The namespace, offloaded to a through the peering's virtual node.
      await offloadNamespace(pair.consumer.kc, NAMESPACE, remoteNamespace, record.virtualNodeName);
      expect((await aCore.readNamespace({ name: remoteNamespace })).metadata?.name).toBe(remoteNamespace);

      // A Deployment of 3 on the virtual node, reading a ConfigMap (env) and a Secret (volume): a
      // pod whose ConfigMap or Secret is missing does not start, so Running proves they came with it.
      await bCore.createNamespacedConfigMap({
        namespace: NAMESPACE,
        body: { metadata: { name: "settings" }, data: { mode: "blue" } },
      });
      await bCore.createNamespacedSecret({
        namespace: NAMESPACE,
        body: { metadata: { name: "db" }, stringData: { password: "offloaded-secret" } },
      });
      await bCore.createNamespacedConfigMap({
        namespace: NAMESPACE,
        body: { metadata: { name: "unused" }, data: { x: "1" } },
      });
      const apps = pair.consumer.kc.makeApiClient(k8s.AppsV1Api);
      const template = podtoolSpec(record.virtualNodeName, {
        volumes: [{ name: "db", secret: { secretName: "db" } }],
      });
      template.containers[0] = {
        ...template.containers[0]!,
        env: [{ name: "MODE", valueFrom: { configMapKeyRef: { name: "settings", key: "mode" } } }],
        volumeMounts: [{ name: "db", mountPath: "/etc/db" }],
      };
      await apps.createNamespacedDeployment({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "web" },
          spec: {
            replicas: 3,
            selector: { matchLabels: { app: "web" } },
            template: { metadata: { labels: { app: "web" } }, spec: template },
          },
        },
      });
      const running = await runningPods(pair.consumer.kc, NAMESPACE, "app=web", 3);
      const remotePods = (await aCore.listNamespacedPod({ namespace: remoteNamespace })).items;
      expect(remotePods.map((p) => p.metadata!.name).sort()).toEqual(running.map((p) => p.metadata!.name).sort());
      for (const p of remotePods) expect(p.spec?.nodeName).toMatch(new RegExp(`^${a.name}-n\\d$`));
      // No token of a's is in them: the pods' containers mount no service account volume.
      for (const p of remotePods) {
        expect(p.spec?.automountServiceAccountToken).toBe(false);
        expect(p.spec?.volumes?.filter((v) => v.projected?.sources?.some((s) => s.serviceAccountToken)) ?? []).toEqual(
          [],
        );
      }
      // Their host is the virtual node, at its address (its kubelet endpoint), as a kubelet reports its
      // own. The agent posts that address as soon as it sees the node, which a loaded machine may
      // schedule after the pods' first status: what is asserted is that it comes.
      const { virtualNodeAddress, reported } = await poll(
        { step: "test", object: `the host IP of the pods on ${record.virtualNodeName}`, endpoint: b.apiServerUrl },
        { timeoutMs: 60_000, intervalMs: 500 },
        async () => {
          const address = internalIpOf(await bCore.readNode({ name: record.virtualNodeName }));
          const pods = (await bCore.listNamespacedPod({ namespace: NAMESPACE, labelSelector: "app=web" })).items;
          const hosts = pods.map((p) => p.status?.hostIP);
          return address && pods.length === 3 && hosts.every((host) => host === address)
            ? { done: true, value: { virtualNodeAddress: address, reported: pods } }
            : { done: false, state: `node address ${address ?? "none"}, pods' host IPs ${hosts.join(", ")}` };
        },
      );
      expect(reported.map((p) => p.metadata!.name).sort()).toEqual(running.map((p) => p.metadata!.name).sort());
      for (const p of reported) {
        // b's pods are in b's pod CIDR; the offloaded ones show a's (distinct CIDRs: not remapped).
        expect(p.status?.podIP).toBe(remotePods.find((r) => r.metadata?.name === p.metadata?.name)?.status?.podIP);
        expect(p.status?.conditions?.find((c) => c.type === OFFLOADED_CONDITION)?.status).toBe("True");
        expect(p.status?.hostIP).toBe(virtualNodeAddress);
      }

      // kubectl logs and exec on b, for an offloaded pod: the API server calls the virtual node's
      // kubelet endpoint (b's agent), which forwards to a with b's identity.
      const first = running[0]!.metadata!.name!;
      const throughVirtualKubelet = (args: string[]): Promise<string> => kubectlSoon(b, args);
      expect(await throughVirtualKubelet(["logs", "-n", NAMESPACE, first])).toContain(`podtool ${first} listening`);
      expect(
        await throughVirtualKubelet(["exec", "-n", NAMESPACE, first, "--", "/podtool", "tcp", "127.0.0.1:8080"]),
      ).toContain(`podtool ${first} `);

      // kubectl port-forward on b: a local port reaches the offloaded pod's 8080 on a, through b's
      // API server, the virtual kubelet, and a's API server.
      const forward = execa(
        "kubectl",
        ["--kubeconfig", b.kubeconfig, "port-forward", "-n", NAMESPACE, first, ":8080"],
        {
          reject: false,
          stdin: "ignore",
        },
      );
      try {
        const localPort = await forwardedPort(forward, b.apiServerUrl);
        expect(await tcpGreeting(undefined, "127.0.0.1", localPort)).toContain(`podtool ${first} `);
      } finally {
        forward.kill("SIGTERM");
        await forward;
      }

      // The Deployment's node port answers at the virtual node's address, as kube-proxy answers a
      // node port at a real node's: from b's node, and from an offloaded pod on a (the way a client
      // of the node's address reaches it there). A port no Service of an offloaded namespace names,
      // and the node port of a namespace that is not offloaded, are not answered there.
      const exposed = await bCore.createNamespacedService({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "web-node-port" },
          spec: { type: "NodePort", selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
        },
      });
      const elsewhere = await bCore.createNamespacedService({
        namespace: "default",
        body: {
          metadata: { name: "not-offloaded" },
          spec: { type: "NodePort", selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
        },
      });
      try {
        const nodePort = exposed.spec!.ports![0]!.nodePort!;
        await poll(
          {
            step: "test",
            object: `node port ${nodePort} at the virtual node's address ${virtualNodeAddress}`,
            endpoint: b.apiServerUrl,
          },
          { timeoutMs: 60_000, intervalMs: 1000 },
          async () => {
            const answer = await tcpGreeting(b.netns, virtualNodeAddress, nodePort, 3000).catch(
              (error: unknown) => `${(error as Error).message}`,
            );
            return answer.includes("podtool web-")
              ? { done: true, value: undefined }
              : { done: false, state: answer.trim().slice(-200) };
          },
        );
        expect(
          await kubectl(b, [
            "exec",
            "-n",
            NAMESPACE,
            first,
            "--",
            "/podtool",
            "tcp",
            `${virtualNodeAddress}:${nodePort}`,
          ]),
        ).toContain("podtool web-");
        for (const closed of [elsewhere.spec!.ports![0]!.nodePort!, nodePort + 1])
          await expect(tcpGreeting(b.netns, virtualNodeAddress, closed, 3000)).rejects.toThrow(/ECONNREFUSED/);
      } finally {
        await bCore.deleteNamespacedService({ name: "not-offloaded", namespace: "default" });
        await bCore.deleteNamespacedService({ name: "web-node-port", namespace: NAMESPACE });
      }

      // The pod's identity: a pod of b's ServiceAccount `lister`, which may list shop's pods on b,
      // uses in-cluster config on a. It is b's `lister` there (a token b issued, bound to the pod),
      // it lists shop's pods on b (kubernetes.default leads through the tunnel to b's API server),
      // and a's own API server does not take its token. a mounts that token, and none of its own.
      const rbac = pair.consumer.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
      await bCore.createNamespacedServiceAccount({ namespace: NAMESPACE, body: { metadata: { name: "lister" } } });
      await rbac.createNamespacedRole({
        namespace: NAMESPACE,
        body: { metadata: { name: "lister" }, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["list"] }] },
      });
      await rbac.createNamespacedRoleBinding({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "lister" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "lister" },
          subjects: [{ kind: "ServiceAccount", name: "lister", namespace: NAMESPACE }],
        },
      });
      await bCore.createNamespacedPod({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "lister", labels: { app: "lister" } },
          spec: podtoolSpec(record.virtualNodeName, { serviceAccountName: "lister" }),
        },
      });
      const [lister] = await runningPods(pair.consumer.kc, NAMESPACE, "app=lister", 1);
      expect(await inClusterIdentity(b, NAMESPACE, "lister")).toBe(`system:serviceaccount:${NAMESPACE}:lister`);
      const listed = await kubectlSoon(b, [
        ...["exec", "-n", NAMESPACE, "lister", "--", "/podtool", "api"],
        `/api/v1/namespaces/${NAMESPACE}/pods`,
      ]);
      expect(listed).toMatch(/HTTP 200/);
      expect(listed).toContain(`"uid":"${lister!.metadata!.uid}"`);
      const aApiServer = (await aCore.readNamespacedService({ name: "kubernetes", namespace: "default" })).spec!;
      const atA = await kubectl(b, [
        ...["exec", "-n", NAMESPACE, "lister", "--", "/podtool", "api"],
        ...[
          "--server",
          `${aApiServer.clusterIP}:${aApiServer.ports![0]!.port}`,
          `/api/v1/namespaces/${remoteNamespace}/pods`,
        ],
      ]).then(
        (out) => out,
        (error: CommandError) => error.stderr,
      );
      expect(atA).toMatch(/HTTP 401/);
      const onA = await aCore.readNamespacedPod({ name: "lister", namespace: remoteNamespace });
      expect(onA.spec?.serviceAccountName).toBe("default");
      expect(onA.spec?.automountServiceAccountToken).toBe(false);
      expect(onA.spec?.volumes?.map((v) => v.secret?.secretName ?? v.projected?.sources?.length ?? v.name)).toContain(
        consumerTokenSecretName(lister!.metadata!.uid!),
      );
      await bCore.deleteNamespacedPod({ name: "lister", namespace: NAMESPACE });

      // The endpoint itself, called as strangers from b's network: no certificate (and no token), or
      // one b's CA did not sign (though it names an admin), is not let in; a user of b without
      // nodes/proxy is refused; an admin asking for a pod that is not offloaded finds nothing.
      const agentPod = (
        await bCore.listNamespacedPod({
          namespace: SYSTEM_NAMESPACE,
          labelSelector: `${COMPONENT_LABEL}=${AGENT_NAME}`,
        })
      ).items.find((p) => p.status?.podIP)!;
      const kubeletUrl = (path: string): string => `https://${agentPod.status!.podIP}:${KUBELET_PORT}${path}`;
      const logsOfFirst = kubeletUrl(`/containerLogs/${NAMESPACE}/${first}/podtool`);
      const bCa = readClusterCa(b.dir);
      const admin = { commonName: "kubernetes-admin", organizations: ["system:masters"] };
      const noCaller = "401 a client certificate of this cluster, or a bearer token, is required";
      expect(await httpsAnswer(b.netns, logsOfFirst)).toBe(noCaller);
      expect(
        await httpsAnswer(b.netns, logsOfFirst, forgeClientCertificate(forgeCertificateAuthority("stranger"), admin)),
      ).toBe(noCaller);
      expect(await httpsAnswer(b.netns, logsOfFirst, forgeClientCertificate(bCa, { commonName: "stranger" }))).toBe(
        `403 user stranger may not get nodes/proxy of ${record.virtualNodeName}`,
      );
      const asAdmin = forgeClientCertificate(bCa, admin);
      expect(await httpsAnswer(b.netns, logsOfFirst, asAdmin)).toContain(`podtool ${first} listening`);
      expect(
        await httpsAnswer(
          b.netns,
          kubeletUrl(`/containerLogs/${SYSTEM_NAMESPACE}/${agentPod.metadata!.name}/agent`),
          asAdmin,
        ),
      ).toMatch(/^404 pod .* is on no virtual node of this agent$/);

      // Only what the pods read went to a, and a change follows while they run; and each pod's
      // token (b's, of its service account: below), one Secret per pod, labelled with its uid.
      const secrets = async (): Promise<k8s.V1Secret[]> =>
        (await aCore.listNamespacedSecret({ namespace: remoteNamespace })).items;
      const reflected = async (): Promise<string[]> => [
        ...(await aCore.listNamespacedConfigMap({ namespace: remoteNamespace })).items.map(
          (c) => `ConfigMap/${c.metadata!.name}`,
        ),
        ...(await secrets())
          .filter((c) => !c.metadata?.labels?.[CONSUMER_TOKEN_LABEL])
          .map((c) => `Secret/${c.metadata!.name}`),
      ];
      expect((await reflected()).sort()).toEqual(["ConfigMap/kube-root-ca.crt", "ConfigMap/settings", "Secret/db"]);
      // (The pod `lister` above is gone, and its token goes at b's agent's next pass.)
      const tokensWanted = running.map((p) => consumerTokenSecretName(p.metadata!.uid!)).sort();
      await poll(
        { step: "test", object: `one token Secret per pod in ${remoteNamespace} on a`, endpoint: a.apiServerUrl },
        { timeoutMs: 60_000, intervalMs: 1_000 },
        async () => {
          const held = (await secrets())
            .filter((c) => c.metadata?.labels?.[CONSUMER_TOKEN_LABEL])
            .map((c) => c.metadata!.name!)
            .sort();
          return JSON.stringify(held) === JSON.stringify(tokensWanted)
            ? { done: true, value: undefined }
            : { done: false, state: held.join(", ") };
        },
      );
      await bCore.patchNamespacedConfigMap(
        { name: "settings", namespace: NAMESPACE, body: { data: { mode: "green" } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      await poll(
        { step: "test", object: `ConfigMap ${remoteNamespace}/settings updated on a`, endpoint: a.apiServerUrl },
        { timeoutMs: 60_000, intervalMs: 500 },
        async () => {
          const mode = (await aCore.readNamespacedConfigMap({ name: "settings", namespace: remoteNamespace })).data?.[
            "mode"
          ];
          return mode === "green" ? { done: true, value: undefined } : { done: false, state: `mode ${mode}` };
        },
      );

      // b's own pod reaches each offloaded pod at the address b shows, and through a Service of b.
      await runPodtool(b, 1);
      for (const p of running) {
        expect(await podtoolFrom(b, 1, "tcp", `${p.status!.podIP}:8080`, 60_000)).toContain(p.metadata!.name);
      }
      const service = await bCore.createNamespacedService({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "web" },
          spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
        },
      });
      const answered = new Set<string>();
      await poll(
        { step: "test", object: `Service ${NAMESPACE}/web answered by all 3 pods`, endpoint: b.apiServerUrl },
        { timeoutMs: 60_000, intervalMs: 100 },
        async () => {
          const out = await podtoolFrom(b, 1, "tcp", `${service.spec!.clusterIP}:80`, 30_000);
          for (const p of running) if (out.includes(p.metadata!.name!)) answered.add(p.metadata!.name!);
          return answered.size === 3
            ? { done: true, value: undefined }
            : { done: false, state: [...answered].join(", ") };
        },
      );
      // And by name, through b's cluster DNS, from b's pod in another namespace.
      expect(await podtoolFrom(b, 1, "tcp", `web.${NAMESPACE}.svc.cluster.local:80`, 60_000)).toMatch(/"podtool web-/);

      // Services by name from the offloaded pods: b's agent asks a for each Service of shop, and a's
      // agent makes it in the remote namespace, where a's cluster DNS answers for it. `web` selects
      // the offloaded pods (a's own controller lists them); `here` selects a pod that stays on b,
      // which a lists at the address its side of the tunnel reaches it by.
      await bCore.createNamespacedPod({ namespace: NAMESPACE, body: podtoolPodOn(`${b.name}-n1`, "here") });
      await bCore.createNamespacedService({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "here" },
          spec: { selector: { app: "here" }, ports: [{ port: 80, targetPort: 8080 }] },
        },
      });
      // Headless: a's cluster DNS answers with the pods' own addresses.
      await bCore.createNamespacedService({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "web-pods" },
          spec: { clusterIP: "None", selector: { app: "web" }, ports: [{ port: 8080 }] },
        },
      });
      const [here] = await runningPods(pair.consumer.kc, NAMESPACE, "app=here", 1);
      const fromOffloaded = (target: string): Promise<string> =>
        throughVirtualKubelet(["exec", "-n", NAMESPACE, first, "--", "/podtool", "tcp", target]);
      // Every name the pod would resolve at home, under the default naming: the provider's agent
      // answers for its consumer (core/offloading/dns-names.ts).
      for (const name of ["web", `web.${NAMESPACE}`, `web.${NAMESPACE}.svc`, `web.${NAMESPACE}.svc.cluster.local`])
        expect(await fromOffloaded(`${name}:80`)).toContain(`"podtool web-`);
      expect(await fromOffloaded("web-pods:8080")).toContain(`"podtool web-`);
      expect(await fromOffloaded(`here.${NAMESPACE}.svc.cluster.local:80`)).toContain(`"podtool here `);
      // An ExternalName Service of b's, aimed at another of its Services: a CNAME, followed as at home.
      await bCore.createNamespacedService({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "alias" },
          spec: { type: "ExternalName", externalName: `web.${NAMESPACE}.svc.cluster.local` },
        },
      });
      expect(await fromOffloaded("alias:80")).toContain(`"podtool web-`);
      // A pod's own name under its headless Service, as a StatefulSet's pods have one.
      await bCore.createNamespacedService({
        namespace: NAMESPACE,
        body: { metadata: { name: "members" }, spec: { clusterIP: "None", selector: { app: "member" } } },
      });
      await bCore.createNamespacedPod({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "member-0", labels: { app: "member" } },
          // No token of b's: no /etc/hosts line for kubernetes.default either (reflection.ts).
          spec: podtoolSpec(record.virtualNodeName, {
            hostname: "member-0",
            subdomain: "members",
            automountServiceAccountToken: false,
          }),
        },
      });
      await runningPods(pair.consumer.kc, NAMESPACE, "app=member", 1);
      expect(await fromOffloaded(`member-0.members.${NAMESPACE}.svc.cluster.local:8080`)).toContain(
        `"podtool member-0 `,
      );
      // A Service of another namespace of b's whose pods stay on b (podOffloading local): offloading it
      // asks a for its Services only, and the offloaded pod reaches them by every name as at home.
      const shared = "shared";
      await offloadNamespace(
        pair.consumer.kc,
        shared,
        remoteNamespaceName(shared, pair.consumer.clusterId, "suffixed"),
        record.virtualNodeName,
        "local",
      );
      try {
        await bCore.createNamespacedPod({ namespace: shared, body: podtoolPodOn(`${b.name}-n1`, "cache") });
        await bCore.createNamespacedService({
          namespace: shared,
          body: {
            metadata: { name: "cache" },
            spec: { selector: { app: "cache" }, ports: [{ port: 80, targetPort: 8080 }] },
          },
        });
        await runningPods(pair.consumer.kc, shared, "app=cache", 1);
        for (const name of [`cache.${shared}`, `cache.${shared}.svc.cluster.local`])
          expect(
            await kubectlSoon(b, ["exec", "-n", NAMESPACE, first, "--", "/podtool", "tcp", `${name}:80`]),
          ).toContain(`"podtool cache `);
      } finally {
        await withdrawNamespace(pair.consumer.kc, shared, { force: true, timeoutMs: 120_000 }, quietProgress);
        await bCore.deleteNamespace({ name: shared });
      }
      // The names the provider's agent answers itself: kubernetes.default (b's API server, as b's
      // pods reach it through the tunnel) and a pod name spelling its address, as at home.
      const fromMember = (target: string): Promise<string> =>
        throughVirtualKubelet(["exec", "-n", NAMESPACE, "member-0", "--", "/podtool", "tcp", target]);
      for (const name of ["kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"])
        expect(await fromMember(`${name}:${POD_API_PORT}`)).toContain(`connected to ${name}:${POD_API_PORT}`);
      expect(await fromMember(`127-0-0-1.${NAMESPACE}.pod.cluster.local:8080`)).toContain(`"podtool member-0 `);
      // Gone again on both sides before what follows counts the pods running.
      await bCore.deleteNamespacedPod({ name: "member-0", namespace: NAMESPACE, gracePeriodSeconds: 0 });
      await poll(
        { step: "test", object: `pod member-0 gone from ${remoteNamespace} on a`, endpoint: a.apiServerUrl },
        { timeoutMs: 60_000, intervalMs: 500 },
        async () => {
          const left = (await aCore.listNamespacedPod({ namespace: remoteNamespace, labelSelector: "app=member" }))
            .items.length;
          return left === 0 ? { done: true, value: undefined } : { done: false, state: `${left} left` };
        },
      );
      // Attack: the provider's own Services stay out of reach by these names: a Service of a's in a
      // namespace of a's named as b's, a's cluster DNS, and the remote namespace by its name on a
      // (each of which a's own pods resolve).
      await aCore.createNamespace({ body: { metadata: { name: NAMESPACE } } });
      try {
        await aCore.createNamespacedService({
          namespace: NAMESPACE,
          body: { metadata: { name: "vault" }, spec: { ports: [{ port: 80 }] } },
        });
        for (const target of [
          `vault.${NAMESPACE}.svc.cluster.local:80`,
          "kube-dns.kube-system.svc.cluster.local:53",
          `here.${remoteNamespace}.svc.cluster.local:80`,
        ]) {
          const dialed = await kubectl(b, ["exec", "-n", NAMESPACE, first, "--", "/podtool", "tcp", target]).then(
            () => "connected",
            (error: CommandError) => error.stderr,
          );
          expect([target, dialed]).toEqual([target, expect.stringContaining("no such host")]);
        }
      } finally {
        await aCore.deleteNamespace({ name: NAMESPACE });
      }
      // The address of a Service of b's names it as b knows it (a client checking whom it reached
      // asks); an address of a's own (its cluster DNS, its API) names nothing, as a free one.
      const namesOf = (address: string): Promise<string> =>
        kubectl(b, ["exec", "-n", NAMESPACE, first, "--", "/podtool", "names", address]).then(
          (output) => output.trim(),
          (error: CommandError) => error.stderr,
        );
      const addressOn = async (namespace: string, name: string) =>
        (await aCore.readNamespacedService({ name, namespace })).spec!.clusterIP!;
      expect(await namesOf(await addressOn(remoteNamespace, "web"))).toBe(`web.${NAMESPACE}.svc.cluster.local.`);
      for (const [namespace, name] of [
        ["kube-system", "kube-dns"],
        ["default", "kubernetes"],
      ] as const)
        expect([name, await namesOf(await addressOn(namespace, name))]).toEqual([
          name,
          expect.stringContaining("no such host"),
        ]);
      const reflectedServices = await aCore.listNamespacedService({ namespace: remoteNamespace });
      expect(reflectedServices.items.map((svc) => [svc.metadata!.name, svc.spec?.clusterIP === "None"]).sort()).toEqual(
        [
          ["here", false],
          ["members", true],
          ["web", false],
          ["web-pods", true],
        ],
      );
      const outside = await pair.provider.kc
        .makeApiClient(k8s.DiscoveryV1Api)
        .readNamespacedEndpointSlice({ name: "here-outside", namespace: remoteNamespace });
      expect((outside.endpoints ?? []).map((e) => [e.addresses[0], e.conditions?.ready])).toEqual([
        [here!.status!.podIP, true],
      ]);
      // The tunnel cut (a's gateway stopped, which says so in its end's status): b's endpoint in that
      // slice goes not ready, and a's Service sends nothing into a tunnel that is down; ready again
      // once the tunnel is back, and the name answers again.
      const aGateway = (replicas: number): Promise<unknown> =>
        pair!.provider.kc
          .makeApiClient(k8s.AppsV1Api)
          .patchNamespacedDeploymentScale(
            { name: GATEWAY_NAME, namespace: SYSTEM_NAMESPACE, body: { spec: { replicas } } },
            k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
          );
      const outsideReady = (ready: boolean): Promise<void> =>
        poll(
          {
            step: "test",
            object: `here-outside ${ready ? "ready" : "not ready"} in ${remoteNamespace}`,
            endpoint: a.apiServerUrl,
          },
          { timeoutMs: 90_000, intervalMs: 500 },
          async () => {
            const slice = await pair!.provider.kc
              .makeApiClient(k8s.DiscoveryV1Api)
              .readNamespacedEndpointSlice({ name: "here-outside", namespace: remoteNamespace });
            const seen = (slice.endpoints ?? []).map((e) => e.conditions?.ready);
            return seen.length === 1 && seen[0] === ready
              ? { done: true, value: undefined }
              : { done: false, state: JSON.stringify(seen) };
          },
        );
      await aGateway(0);
      await outsideReady(false);
      await aGateway(1);
      await outsideReady(true);
      expect(await fromOffloaded(`here.${NAMESPACE}.svc.cluster.local:80`)).toContain(`"podtool here `);

      // b's agent restarted while the pods run: they keep running on a (same pods), and it takes up
      // where it was: a new replica is offloaded too.
      const before = (await aCore.listNamespacedPod({ namespace: remoteNamespace, labelSelector: "app=web" })).items
        .map((p) => p.metadata!.uid)
        .sort();
      const agents = await bCore.listNamespacedPod({
        namespace: SYSTEM_NAMESPACE,
        labelSelector: `${COMPONENT_LABEL}=${AGENT_NAME}`,
      });
      for (const agent of agents.items)
        await bCore.deleteNamespacedPod({ name: agent.metadata!.name!, namespace: SYSTEM_NAMESPACE });
      await apps.patchNamespacedDeploymentScale(
        { name: "web", namespace: NAMESPACE, body: { spec: { replicas: 4 } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      const four = await runningPods(pair.consumer.kc, NAMESPACE, "app=web", 4);
      const after = (await aCore.listNamespacedPod({ namespace: remoteNamespace, labelSelector: "app=web" })).items.map(
        (p) => p.metadata!.uid,
      );
      expect(after).toHaveLength(4);
      expect(after).toEqual(expect.arrayContaining(before));
      expect(four).toHaveLength(4);

      // Forbidden pods: refused with the reason, and nothing made on a.
      const forbidden: [string, k8s.V1PodSpec, string][] = [
        [
          "privileged",
          podtoolSpec(record.virtualNodeName, {
            containers: [{ name: "podtool", image: imageReference("podtool"), securityContext: { privileged: true } }],
          }),
          "Privileged",
        ],
        ["host-network", podtoolSpec(record.virtualNodeName, { hostNetwork: true }), "HostNamespace"],
        [
          "own-token",
          podtoolSpec(record.virtualNodeName, {
            volumes: [
              { name: "token", projected: { sources: [{ serviceAccountToken: { path: "t", audience: "anyone" } }] } },
            ],
          }),
          "ServiceAccountToken",
        ],
        [
          "host-path",
          podtoolSpec(record.virtualNodeName, { volumes: [{ name: "root", hostPath: { path: "/" } }] }),
          "HostPath",
        ],
        [
          // Bound by name, past the scheduler (which would not place it on a node this small): a's agent is the check that counts.
          "over-offer",
          podtoolSpec(record.virtualNodeName, {
            nodeName: record.virtualNodeName,
            containers: [{ name: "podtool", image: imageReference("podtool"), resources: { requests: { cpu: "64" } } }],
          }),
          "ExceedsOffer",
        ],
      ];
      for (const [name, spec] of forbidden) {
        await bCore.createNamespacedPod({ namespace: NAMESPACE, body: { metadata: { name }, spec } });
      }
      const refusalOf = (name: string): Promise<k8s.V1PodCondition> =>
        poll(
          { step: "test", object: `pod ${NAMESPACE}/${name} refused`, endpoint: b.apiServerUrl },
          { timeoutMs: 60_000, intervalMs: 500 },
          async () => {
            const pod = await bCore.readNamespacedPod({ name, namespace: NAMESPACE });
            const c = pod.status?.conditions?.find((c) => c.type === OFFLOADED_CONDITION);
            return c?.status === "False"
              ? { done: true, value: c }
              : { done: false, state: JSON.stringify(pod.status?.conditions) };
          },
        );
      for (const [name, , reason] of forbidden) {
        const condition = await refusalOf(name);
        expect(condition.reason).toBe(reason);
        expect(condition.message).toBeTruthy();
        // The agent records the event after the condition: it may come a moment later.
        await poll(
          { step: "test", object: `event ${reason} of pod ${NAMESPACE}/${name}`, endpoint: b.apiServerUrl },
          { timeoutMs: 30_000, intervalMs: 500 },
          async () => {
            const events = await bCore.listNamespacedEvent({
              namespace: NAMESPACE,
              fieldSelector: `involvedObject.name=${name}`,
            });
            const reasons = events.items.map((e) => e.reason);
            return reasons.includes(reason)
              ? { done: true, value: undefined }
              : { done: false, state: reasons.join(", ") };
          },
        );
      }
      const made = (await aCore.listNamespacedPod({ namespace: remoteNamespace })).items.map((p) => p.metadata!.name);
      for (const [name] of forbidden) expect(made).not.toContain(name);

      // The offer shrunk below what runs (3 pods for 4): none is evicted, and a new one is refused.
      // It is bound by name, past the scheduler (which sees a full node): a's agent is the check that counts.
      await updatePeeringResources(pair.consumer.kubeconfig, record, { pods: 3 }, 60_000, quietProgress);
      await bCore.createNamespacedPod({
        namespace: NAMESPACE,
        body: {
          metadata: { name: "one-too-many" },
          spec: podtoolSpec(record.virtualNodeName, { nodeName: record.virtualNodeName }),
        },
      });
      const tooMany = await refusalOf("one-too-many");
      expect([tooMany.reason, tooMany.message]).toEqual([
        "ExceedsOffer",
        "the offer allows 3 pod(s), and 4 already run",
      ]);
      expect(
        (await aCore.listNamespacedPod({ namespace: remoteNamespace })).items.map((p) => p.metadata!.name),
      ).not.toContain("one-too-many");
      const stillRunning = (await aCore.listNamespacedPod({ namespace: remoteNamespace, labelSelector: "app=web" }))
        .items;
      expect(stillRunning.map((p) => [p.metadata!.uid, p.status?.phase]).sort()).toEqual(
        after.map((uid) => [uid, "Running"]).sort(),
      );
      expect(await runningPods(pair.consumer.kc, NAMESPACE, "app=web", 4)).toHaveLength(4);
      await updatePeeringResources(pair.consumer.kubeconfig, record, { pods: 10 }, 60_000, quietProgress);
      await bCore.deleteNamespacedPod({ name: "one-too-many", namespace: NAMESPACE });

      // b's identity on a: no pod of its own making, no reading of others' pods, no namespace that is not its own.
      const asB = identity.makeApiClient(k8s.CoreV1Api);
      const denied = async (what: Promise<unknown>): Promise<number | undefined> =>
        what.then(
          () => undefined,
          (error: unknown) => statusOf(error),
        );
      expect(
        await denied(
          asB.createNamespacedPod({
            namespace: remoteNamespace,
            body: { metadata: { name: "direct" }, spec: podtoolSpec("x") },
          }),
        ),
      ).toBe(403);
      expect(await denied(asB.listNamespacedPod({ namespace: "default" }))).toBe(403);
      expect(await denied(asB.listNamespacedPod({ namespace: "kube-system" }))).toBe(403);
      expect(await denied(asB.listPodForAllNamespaces())).toBe(403);
      // A Secret a's token controller would fill with a token of a's own (its namespace's default
      // account): b may store Secrets there, but never of that type, and none is made.
      expect(
        await denied(
          asB.createNamespacedSecret({
            namespace: remoteNamespace,
            body: {
              metadata: { name: "minted", annotations: { "kubernetes.io/service-account.name": "default" } },
              type: "kubernetes.io/service-account-token",
            },
          }),
        ),
      ).toBe(403);
      expect(await aCore.readNamespacedSecret({ name: "minted", namespace: remoteNamespace }).catch(statusOf)).toBe(
        404,
      );
      // Logs and exec: in its own remote namespace, and nowhere else.
      const may = async (verb: string, subresource: string, namespace: string): Promise<boolean> =>
        (
          await identity.makeApiClient(k8s.AuthorizationV1Api).createSelfSubjectAccessReview({
            body: { spec: { resourceAttributes: { verb, resource: "pods", subresource, namespace } } },
          })
        ).status?.allowed === true;
      expect(await may("create", "exec", remoteNamespace)).toBe(true);
      expect(await may("get", "log", remoteNamespace)).toBe(true);
      for (const elsewhere of ["default", "kube-system", record.tenantNamespace]) {
        expect([elsewhere, await may("create", "exec", elsewhere), await may("get", "log", elsewhere)]).toEqual([
          elsewhere,
          false,
          false,
        ]);
      }
      // The requests b's identity forges below stand for nothing of b's: b's own agent withdraws
      // such requests on its next pass, so it is stopped meanwhile, for a's answer to be what is seen.
      await scaleAgent(b, 0);
      const asBCustom = identity.makeApiClient(k8s.CustomObjectsApi);
      const stolen: RemoteNamespace = {
        apiVersion: API_GROUP_VERSION,
        kind: "RemoteNamespace",
        metadata: { name: "kube-system", namespace: record.tenantNamespace },
        spec: { consumerNamespace: NAMESPACE },
      };
      await asBCustom.createNamespacedCustomObject({
        ...group,
        namespace: record.tenantNamespace,
        plural: "remotenamespaces",
        body: stolen,
      });
      const smuggled: OffloadedPod = {
        apiVersion: API_GROUP_VERSION,
        kind: "OffloadedPod",
        metadata: { name: "kube-system.smuggled", namespace: record.tenantNamespace },
        spec: { namespace: "kube-system", name: "smuggled", consumerUid: "forged", pod: podtoolSpec("x") },
      };
      await asBCustom.createNamespacedCustomObject({
        ...group,
        namespace: record.tenantNamespace,
        plural: "offloadedpods",
        body: smuggled,
      });
      const answerOf = (plural: string, name: string) =>
        poll(
          { step: "test", object: `${plural} ${name} refused`, endpoint: a.apiServerUrl },
          { timeoutMs: 60_000, intervalMs: 500 },
          async () => {
            const live = (await pair!.provider.kc.makeApiClient(k8s.CustomObjectsApi).getNamespacedCustomObject({
              ...group,
              namespace: record.tenantNamespace,
              plural,
              name,
            })) as OffloadedPod;
            return live.status?.phase ? { done: true, value: live.status } : { done: false, state: "no answer" };
          },
        );
      expect(await answerOf("remotenamespaces", "kube-system")).toMatchObject({ phase: "Refused", reason: "Reserved" });
      expect(await answerOf("offloadedpods", "kube-system.smuggled")).toMatchObject({
        phase: "Refused",
        reason: "NamespaceNotReady",
      });

      // Services b's identity forges: one pointing a's pods, by a trusted name, at a's API server;
      // one with external IPs (traffic of a's whole cluster); one in a namespace that is not b's.
      // Each is refused, naming why, and no Service is made for any; nor may b make one directly.
      const port = [{ protocol: "TCP", port: 443, targetPort: 6443 }];
      const forgedServices: [string, string, Record<string, unknown>, string][] = [
        [remoteNamespace, "api", { outside: [{ address: a.publicAddress, ready: true }] }, "EndpointOutsideConsumer"],
        [remoteNamespace, "wide", { outside: [], externalIPs: ["10.96.0.1"] }, "ServiceType"],
        ["kube-system", "kubernetes", { outside: [] }, "NamespaceNotReady"],
      ];
      // A ReflectedService as b's identity may write one, whatever it says.
      const fileServiceRequest = (namespace: string, name: string, fields: Record<string, unknown>) =>
        asBCustom.createNamespacedCustomObject({
          ...group,
          namespace: record.tenantNamespace,
          plural: "reflectedservices",
          body: {
            apiVersion: API_GROUP_VERSION,
            kind: "ReflectedService",
            metadata: { name: `${namespace}.${name}`, namespace: record.tenantNamespace },
            spec: { namespace, service: { name, headless: false, ports: port, ...fields } },
          },
        });
      for (const [namespace, name, fields] of forgedServices) await fileServiceRequest(namespace, name, fields);
      for (const [namespace, name, , reason] of forgedServices) {
        expect(await answerOf("reflectedservices", `${namespace}.${name}`)).toMatchObject({ phase: "Refused", reason });
      }

      // ClusterIPs b's identity asks for: a free address of the band a's admins assign by hand is
      // not given (a's own Service takes one of a's choosing); a free one above it is, as the
      // consumer's ClusterIP is kept when both clusters share a service range.
      const aServices = Cidr.parse(a.serviceCidr);
      const asked = { squat: aServices.nth(7), pinned: aServices.nth(4242) };
      for (const [name, clusterIP] of Object.entries(asked))
        await fileServiceRequest(remoteNamespace, name, { outside: [], clusterIP });
      const givenIp = async (name: string): Promise<string> =>
        poll(
          { step: "test", object: `Service ${remoteNamespace}/${name} made on a`, endpoint: a.apiServerUrl },
          { timeoutMs: 60_000, intervalMs: 500 },
          async () => {
            const made = await aCore.readNamespacedService({ name, namespace: remoteNamespace }).catch(() => undefined);
            return made ? { done: true, value: made.spec!.clusterIP! } : { done: false, state: "not made" };
          },
        );
      const squatted = await givenIp("squat");
      expect([aServices.contains(squatted), squatted === asked.squat]).toEqual([true, false]);
      expect(await givenIp("pinned")).toBe(asked.pinned);
      for (const name of Object.keys(asked))
        await asBCustom.deleteNamespacedCustomObject({
          ...group,
          namespace: record.tenantNamespace,
          plural: "reflectedservices",
          name: `${remoteNamespace}.${name}`,
        });
      await poll(
        { step: "test", object: `Services squat and pinned removed from ${remoteNamespace}`, endpoint: a.apiServerUrl },
        { timeoutMs: 60_000, intervalMs: 500 },
        async () => {
          const left = (await aCore.listNamespacedService({ namespace: remoteNamespace })).items
            .map((svc) => svc.metadata!.name!)
            .filter((name) => name in asked);
          return left.length === 0 ? { done: true, value: undefined } : { done: false, state: left.join(", ") };
        },
      );

      // A withdrawn request's pod goes at once (agent/offloading/provider-withdrawal.ts): b's
      // identity withdraws a request it held back from the pass (its own finalizer) naming a's DNS
      // pod, and then, as the control, the request of one of its own web pods. Its own pod goes (b's
      // agent asks for it again once back); a's pod stays as it was.
      const victim = (await aCore.listNamespacedPod({ namespace: "kube-system", labelSelector: "k8s-app=kube-dns" }))
        .items[0]!;
      const held: OffloadedPod = {
        ...smuggled,
        metadata: {
          name: `kube-system.${victim.metadata!.name}`,
          namespace: record.tenantNamespace,
          finalizers: ["test.pulumi-liqo.dev/hold"],
        },
        spec: { ...smuggled.spec, name: victim.metadata!.name!, consumerUid: victim.metadata!.uid! },
      };
      const inTenant = { ...group, namespace: record.tenantNamespace, plural: "offloadedpods" };
      await asBCustom.createNamespacedCustomObject({ ...inTenant, body: held });
      await asBCustom.deleteNamespacedCustomObject({ ...inTenant, name: held.metadata.name! });
      const ownPod = (await aCore.listNamespacedPod({ namespace: remoteNamespace, labelSelector: "app=web" })).items[0]!
        .metadata!.name!;
      await asBCustom.deleteNamespacedCustomObject({ ...inTenant, name: `${remoteNamespace}.${ownPod}` });
      await poll(
        {
          step: "test",
          object: `pod ${remoteNamespace}/${ownPod} removed, its request withdrawn`,
          endpoint: a.apiServerUrl,
        },
        { timeoutMs: 60_000, intervalMs: 200 },
        async () => {
          const own = await aCore
            .readNamespacedPod({ name: ownPod, namespace: remoteNamespace })
            .catch(() => undefined);
          return !own || own.metadata?.deletionTimestamp
            ? { done: true, value: undefined }
            : { done: false, state: "still there" };
        },
      );
      const victimAfter = await aCore.readNamespacedPod({ name: victim.metadata!.name!, namespace: "kube-system" });
      expect([victimAfter.metadata?.uid, victimAfter.metadata?.deletionTimestamp]).toEqual([
        victim.metadata!.uid,
        undefined,
      ]);
      await asBCustom.patchNamespacedCustomObject(
        { ...inTenant, name: held.metadata.name!, body: { metadata: { finalizers: null } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      await scaleAgent(b, 1);
      expect(
        (await aCore.listNamespacedService({ namespace: remoteNamespace })).items
          .map((svc) => svc.metadata!.name)
          .sort(),
      ).toEqual(["here", "members", "web", "web-pods"]);
      // Nothing of the project's was made in kube-system: no pod, no Service.
      const ours = { namespace: "kube-system", labelSelector: "app.kubernetes.io/managed-by=pulumi-liqo" };
      expect([
        ...(await aCore.listNamespacedPod(ours)).items,
        ...(await aCore.listNamespacedService(ours)).items,
      ]).toEqual([]);
      expect(
        await denied(
          asB.createNamespacedService({
            namespace: remoteNamespace,
            body: { metadata: { name: "direct" }, spec: { ports: [{ port: 80 }], externalIPs: ["10.96.0.1"] } },
          }),
        ),
      ).toBe(403);
      for (const [namespace, name] of forgedServices)
        await asBCustom.deleteNamespacedCustomObject({
          ...group,
          namespace: record.tenantNamespace,
          plural: "reflectedservices",
          name: `${namespace}.${name}`,
        });

      // Deleting the Deployment, the forbidden pods and the NamespaceOffloading leaves nothing on a.
      await apps.deleteNamespacedDeployment({ name: "web", namespace: NAMESPACE });
      for (const name of [...forbidden.map(([name]) => name), "here"])
        await bCore.deleteNamespacedPod({ name, namespace: NAMESPACE });
      await poll(
        { step: "test", object: `no pod of ${NAMESPACE} left on either side`, endpoint: a.apiServerUrl },
        { timeoutMs: 90_000, intervalMs: 1_000 },
        async () => {
          const here = (await bCore.listNamespacedPod({ namespace: NAMESPACE })).items.length;
          const there = (await aCore.listNamespacedPod({ namespace: remoteNamespace })).items.length;
          return here + there === 0
            ? { done: true, value: undefined }
            : { done: false, state: `${here} on b, ${there} on a` };
        },
      );
      await bCustom.deleteNamespacedCustomObject({
        ...group,
        namespace: NAMESPACE,
        plural: "namespaceoffloadings",
        name: NAMESPACE_OFFLOADING_NAME,
      });
      await namespaceGone(aCore, remoteNamespace, a.apiServerUrl);
      // Its Services' requests went with it.
      await poll(
        { step: "test", object: `no ReflectedService of b left on a`, endpoint: a.apiServerUrl },
        { timeoutMs: 60_000, intervalMs: 1_000 },
        async () => {
          const left = (
            (await pair!.provider.kc.makeApiClient(k8s.CustomObjectsApi).listNamespacedCustomObject({
              ...group,
              namespace: record.tenantNamespace,
              plural: "reflectedservices",
            })) as { items: { metadata: k8s.V1ObjectMeta }[] }
          ).items.map((r) => r.metadata.name);
          return left.length === 0 ? { done: true, value: undefined } : { done: false, state: left.join(", ") };
        },
      );
      await bCore.deleteNamespace({ name: NAMESPACE });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a namespace offloaded with each podOffloading WHEN an unmodified Deployment (no toleration, no node selector) " +
      "runs there THEN remote puts its pods on a only, local keeps them on b, local-and-remote lets them go either way; " +
      "other namespaces are untouched, and withdrawing stops the placement first",
    async () => {
      pair = await withTunnel(pair);
      const { a, b, record } = pair;
      const [aCore, bCore] = [pair.provider.kc, pair.consumer.kc].map((kc) => kc.makeApiClient(k8s.CoreV1Api));
      const apps = pair.consumer.kc.makeApiClient(k8s.AppsV1Api);
      const namespace = "placed";
      const remoteNamespace = remoteNamespaceName(namespace, pair.consumer.clusterId, "suffixed");
      const virtualNode = record.virtualNodeName;
      const request = { namespace, remoteNamespace, virtualNodes: [virtualNode] };
      await offloadNamespace(pair.consumer.kc, namespace, remoteNamespace, virtualNode, "remote");

      // As a chart ships it: nothing in it knows of virtual nodes.
      await apps.createNamespacedDeployment({
        namespace,
        body: unmodifiedApp(2),
      });
      /** The Deployment's pods made anew (the old ones deleted), once `count` run; where each was bound. */
      const replaced = async (): Promise<k8s.V1Pod[]> => {
        const before = (await bCore.listNamespacedPod({ namespace, labelSelector: "app=app" })).items;
        for (const pod of before)
          await bCore.deleteNamespacedPod({ name: pod.metadata!.name!, namespace, body: { gracePeriodSeconds: 0 } });
        const old = new Set(before.map((p) => p.metadata!.uid));
        return poll(
          { step: "test", object: `2 new pods of ${namespace} Running`, endpoint: b.apiServerUrl },
          { timeoutMs: 180_000, intervalMs: 1_000 },
          async () => {
            const pods = (await bCore.listNamespacedPod({ namespace, labelSelector: "app=app" })).items;
            const fresh = pods.filter((p) => !old.has(p.metadata!.uid) && !p.metadata?.deletionTimestamp);
            const running = fresh.filter((p) => p.status?.phase === "Running");
            return running.length === 2 && pods.length === 2
              ? { done: true, value: running }
              : {
                  done: false,
                  state: pods
                    .map((p) => `${p.metadata?.name} ${p.spec?.nodeName ?? "-"} ${p.status?.phase}`)
                    .join(", "),
                };
          },
        );
      };

      // remote: both pods on the virtual node, running on a.
      const remote = await runningPods(pair.consumer.kc, namespace, "app=app", 2);
      expect(remote.map((p) => [p.spec!.nodeName, placementOf(p.spec!)])).toEqual([
        [virtualNode, "remote"],
        [virtualNode, "remote"],
      ]);
      expect(
        (await aCore.listNamespacedPod({ namespace: remoteNamespace })).items.filter(
          (p) => p.status?.phase === "Running",
        ),
      ).toHaveLength(2);
      // An update that sets a pod's tolerations anew (as a client that does not know of the policy's
      // does) is let through, the policy's toleration and node selector kept.
      const [first] = remote;
      const updated = await bCore.replaceNamespacedPod({
        name: first!.metadata!.name!,
        namespace,
        body: {
          ...(await bCore.readNamespacedPod({ name: first!.metadata!.name!, namespace })),
          spec: {
            ...first!.spec!,
            tolerations: [
              ...(first!.spec!.tolerations ?? []).filter((t) => t.key?.startsWith("node.kubernetes.io/")),
              { key: "team", operator: "Equal", value: "blue", effect: "NoSchedule" },
            ],
          },
        },
      });
      expect([placementOf(updated.spec!), updated.spec!.tolerations?.some((t) => t.key === "team")]).toEqual([
        "remote",
        true,
      ]);

      // Their token, which the chart asks nothing of: b's `default` of the namespace, not a's.
      expect(await inClusterIdentity(b, namespace, remote[0]!.metadata!.name!)).toBe(
        `system:serviceaccount:${namespace}:default`,
      );
      // serviceAccountTokens none: the pods made from then on get no token at all.
      const tokens = { ...request, podOffloading: "remote" as const, serviceAccountTokens: "none" as const };
      await offloadingSteps(pair.consumer.kc, tokens, 60_000, quietProgress);
      const tokenless = await replaced();
      const noToken = await kubectl(b, [
        ...["exec", "-n", namespace, tokenless[0]!.metadata!.name!, "--", "/podtool", "api", "/api"],
      ]).then(
        (out) => out,
        (error: CommandError) => error.stderr,
      );
      expect(noToken).toContain("no ServiceAccount token");
      const tokenVolumes = (await aCore.listNamespacedPod({ namespace: remoteNamespace })).items
        .filter((p) => !p.metadata?.deletionTimestamp)
        .flatMap((p) => p.spec?.volumes ?? [])
        .filter((v) => v.secret || v.projected);
      expect(tokenVolumes).toEqual([]);

      // local: the pods made from then on stay on b's own nodes.
      await offloadingSteps(pair.consumer.kc, { ...request, podOffloading: "local" }, 60_000, quietProgress);
      const local = await replaced();
      expect(local.map((p) => placementOf(p.spec!))).toEqual(["local", "local"]);
      expect(local.filter((p) => p.spec!.nodeName === virtualNode)).toEqual([]);

      // local-and-remote: the toleration, no selector; the scheduler may pick either.
      await offloadingSteps(pair.consumer.kc, { ...request, podOffloading: "local-and-remote" }, 60_000, quietProgress);
      const either = await replaced();
      expect(either.map((p) => placementOf(p.spec!))).toEqual(["local-and-remote", "local-and-remote"]);

      // Another namespace of b gets nothing.
      const elsewhere = await bCore.createNamespacedPod({
        namespace: "default",
        body: { metadata: { name: "elsewhere" }, spec: { containers: [{ name: "c", image: "x" }] } },
        dryRun: "All",
      });
      expect(placementOf(elsewhere.spec!)).toBe("local");

      // Withdrawing stops the placement before anything else, and leaves no policy behind; the API
      // server drops a deleted policy a moment later.
      await apps.deleteNamespacedDeployment({ name: "app", namespace });
      await withdrawNamespace(pair.consumer.kc, namespace, { force: false, timeoutMs: 120_000 }, quietProgress);
      expect((await projectTraces(b.kubeconfig)).filter((t) => t.startsWith("mutatingadmission"))).toEqual([]);
      await poll(
        { step: "test", object: `a new pod of ${namespace} placed nowhere`, endpoint: b.apiServerUrl },
        { timeoutMs: 30_000, intervalMs: 250 },
        async () => {
          const after = await bCore.createNamespacedPod({
            namespace,
            body: { metadata: { name: "after" }, spec: { containers: [{ name: "c", image: "x" }] } },
            dryRun: "All",
          });
          const placed = placementOf(after.spec!);
          return placed === "local" ? { done: true, value: undefined } : { done: false, state: `placed ${placed}` };
        },
      );
      await namespaceGone(aCore, remoteNamespace, a.apiServerUrl);
      await bCore.deleteNamespace({ name: namespace });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN namespaces offloaded by label (remote) WHEN a namespace is made with the label afterwards THEN b's agent " +
      "offloads it with no further step and its unmodified Deployment runs on a; a labelled kube-public is never " +
      "selected; a namespace whose label goes is withdrawn; withdrawing the selector while the Deployment runs " +
      "finishes, its new pods stay on b, and nothing is left on either cluster",
    async () => {
      pair = await withTunnel(pair);
      const { a, b, record } = pair;
      const [aCore, bCore] = [pair.provider.kc, pair.consumer.kc].map((kc) => kc.makeApiClient(k8s.CoreV1Api));
      const bCustom = pair.consumer.kc.makeApiClient(k8s.CustomObjectsApi);
      const apps = pair.consumer.kc.makeApiClient(k8s.AppsV1Api);
      const label = { "offload.test/to": "a" };
      const remoteOf = (namespace: string): string =>
        remoteNamespaceName(namespace, pair!.consumer.clusterId, "suffixed");
      const selector = "by-label-test";
      const labelNamespace = (name: string, value: string | null) =>
        bCore.patchNamespace(
          { name, body: { metadata: { labels: { "offload.test/to": value } } } },
          k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
        );
      const selectorStatus = async () =>
        (
          (await bCustom.getNamespacedCustomObject({
            ...group,
            namespace: SYSTEM_NAMESPACE,
            plural: "offloadingselectors",
            name: selector,
          })) as OffloadingSelector
        ).status?.namespaces ?? [];

      await bCore.createNamespace({ body: { metadata: { name: "early", labels: label } } });
      await labelNamespace("kube-public", "a");
      try {
        const reports = await offloadSelectedNamespaces(
          pair.consumer.kc,
          {
            name: selector,
            namespaceSelector: { matchLabels: label },
            virtualNodes: [record.virtualNodeName],
            naming: "suffixed",
            consumerClusterId: pair.consumer.clusterId,
            podOffloading: "remote",
          },
          120_000,
          quietProgress,
        );
        expect(reports).toEqual([{ namespace: "early", remoteNamespace: remoteOf("early"), phase: "Ready" }]);
        expect((await aCore.readNamespace({ name: remoteOf("early") })).metadata?.name).toBe(remoteOf("early"));

        // Made after the selector: offloaded by b's agent alone, its pods placed from the first.
        await bCore.createNamespace({ body: { metadata: { name: "late", labels: label } } });
        await poll(
          { step: "test", object: "namespace late offloaded by the selector", endpoint: b.apiServerUrl },
          { timeoutMs: 90_000, intervalMs: 500 },
          async () => {
            const late = (await selectorStatus()).find((r) => r.namespace === "late");
            return late?.phase === "Ready"
              ? { done: true, value: undefined }
              : { done: false, state: JSON.stringify(late) };
          },
        );
        expect((await selectorStatus()).map((r) => r.namespace)).toEqual(["early", "late"]);
        expect(
          await bCustom
            .getNamespacedCustomObject({
              ...group,
              namespace: "kube-public",
              plural: "namespaceoffloadings",
              name: NAMESPACE_OFFLOADING_NAME,
            })
            .then(
              () => "offloaded",
              (error: unknown) => statusOf(error),
            ),
        ).toBe(404);
        await apps.createNamespacedDeployment({
          namespace: "late",
          body: unmodifiedApp(1),
        });
        const [running] = await runningPods(pair.consumer.kc, "late", "app=app", 1);
        expect(running!.spec!.nodeName).toBe(record.virtualNodeName);
        expect(
          (await aCore.listNamespacedPod({ namespace: remoteOf("late") })).items.map((p) => p.status?.phase),
        ).toEqual(["Running"]);

        // kubectl run -i --rm there: the pod runs on a, b's terminal talks to it (attach through the
        // virtual kubelet), and it is removed once it ends.
        const talk = await execa(
          "kubectl",
          [
            ...["--kubeconfig", b.kubeconfig, "run", "talk", "-n", "late", "-i", "--rm", "--restart=Never"],
            ...[`--image=${imageReference("podtool")}`, "--image-pull-policy=Never", "--pod-running-timeout=3m"],
            ...["--command", "--", "/podtool", "heard"],
          ],
          { input: "hello across\n", reject: false, timeout: 240_000 },
        );
        expect({ exitCode: talk.exitCode, stdout: talk.stdout }).toEqual({
          exitCode: 0,
          stdout: expect.stringContaining("podtool heard: hello across") as unknown as string,
        });
        expect(
          await bCore.readNamespacedPod({ name: "talk", namespace: "late" }).then(() => "still there", statusOf),
        ).toBe(404);

        // Its label gone, "early" is withdrawn: its offloading, its remote namespace, the agent's right to read it.
        await labelNamespace("early", null);
        await namespaceGone(aCore, remoteOf("early"), a.apiServerUrl);
        await poll(
          { step: "test", object: "early's offloading and RoleBinding removed", endpoint: b.apiServerUrl },
          { timeoutMs: 60_000, intervalMs: 500 },
          async () => {
            const bindings = (
              await pair!.consumer.kc
                .makeApiClient(k8s.RbacAuthorizationV1Api)
                .listNamespacedRoleBinding({ namespace: "early" })
            ).items;
            const offloadings = (await bCustom.listNamespacedCustomObject({
              ...group,
              namespace: "early",
              plural: "namespaceoffloadings",
            })) as { items: unknown[] };
            return bindings.length === 0 && offloadings.items.length === 0
              ? { done: true, value: undefined }
              : { done: false, state: `${bindings.length} RoleBinding(s), ${offloadings.items.length} offloading(s)` };
          },
        );

        // Withdrawn while its Deployment runs: it finishes, and the pod made anew stays on b.
        await withdrawSelectedNamespaces(
          pair.consumer.kc,
          selector,
          { force: false, timeoutMs: 120_000 },
          quietProgress,
        );
        await namespaceGone(aCore, remoteOf("late"), a.apiServerUrl);
        const [here] = await runningPods(pair.consumer.kc, "late", "app=app", 1);
        expect(here!.spec!.nodeName).not.toBe(record.virtualNodeName);
        expect(placementOf(here!.spec!)).toBe("local");
        expect((await projectTraces(b.kubeconfig)).filter((t) => t.startsWith("mutatingadmission"))).toEqual([]);
        const granted = await pair.consumer.kc
          .makeApiClient(k8s.RbacAuthorizationV1Api)
          .listRoleBindingForAllNamespaces({ labelSelector: SELECTED_BY_LABEL });
        expect(granted.items.map((r) => `${r.metadata?.namespace}/${r.metadata?.name}`)).toEqual([]);
        expect(
          await selectorStatus().then(
            () => "still there",
            (error: unknown) => statusOf(error),
          ),
        ).toBe(404);
      } finally {
        await labelNamespace("kube-public", null);
        for (const name of ["early", "late"]) await bCore.deleteNamespace({ name }).catch(() => undefined);
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a namespace offloaded remote WHEN Jobs that exit 0 and 3 and a pod of an absent image run there THEN b shows " +
      "Succeeded and Failed with exit codes and termination message, and the pull error as an event; an event a's " +
      "administrator forges is copied only bounded, and only about the pod itself; a's readiness probes decide b's " +
      "EndpointSlice and, reflected to a, answers there as probed.jobs and probed.jobs.svc.cluster.local; " +
      "activeDeadlineSeconds ends the pod Failed",
    async () => {
      pair = await withTunnel(pair);
      const { b, record } = pair;
      const [aCore, bCore] = [pair.provider.kc, pair.consumer.kc].map((kc) => kc.makeApiClient(k8s.CoreV1Api));
      const batch = pair.consumer.kc.makeApiClient(k8s.BatchV1Api);
      const namespace = "jobs";
      // The default naming: names spelling out b's namespace resolve on a all the same (dns-names.ts).
      const remoteNamespace = remoteNamespaceName(namespace, pair.consumer.clusterId, "suffixed");
      await offloadNamespace(pair.consumer.kc, namespace, remoteNamespace, record.virtualNodeName, "remote");
      const job = (name: string, ...args: string[]): k8s.V1Job => ({
        metadata: { name },
        spec: {
          backoffLimit: 0,
          template: {
            spec: {
              restartPolicy: "Never",
              containers: [
                {
                  name: "task",
                  image: imageReference("podtool"),
                  imagePullPolicy: "Never",
                  command: ["/podtool", ...args],
                },
              ],
            },
          },
        },
      });
      await batch.createNamespacedJob({ namespace, body: job("done", "exit", "0", "all good") });
      await batch.createNamespacedJob({ namespace, body: job("broken", "exit", "3", "bad input") });
      await bCore.createNamespacedPod({
        namespace,
        body: {
          metadata: { name: "absent" },
          spec: {
            containers: [{ name: "app", image: "pulumi-liqo.local/absent:1", imagePullPolicy: "Never" }],
          },
        },
      });

      /** The job's condition once it has one of Complete or Failed, and its pod's terminated state. */
      const finished = (name: string) =>
        poll(
          { step: "test", object: `Job ${namespace}/${name} finished on b`, endpoint: b.apiServerUrl },
          { timeoutMs: 180_000, intervalMs: 1_000 },
          async () => {
            const live = await batch.readNamespacedJob({ name, namespace });
            const ended = live.status?.conditions?.find(
              (c) => ["Complete", "Failed"].includes(c.type) && c.status === "True",
            );
            const [jobPod] = (await bCore.listNamespacedPod({ namespace, labelSelector: `job-name=${name}` })).items;
            const terminated = jobPod?.status?.containerStatuses?.[0]?.state?.terminated;
            return ended && terminated
              ? { done: true, value: { condition: ended.type, phase: jobPod!.status!.phase, terminated } }
              : {
                  done: false,
                  state: `${live.status?.conditions?.map((c) => c.type).join(",") ?? "-"} pod ${jobPod?.status?.phase}`,
                };
          },
        );
      const done = await finished("done");
      expect([done.condition, done.phase, done.terminated.exitCode, done.terminated.message]).toEqual([
        "Complete",
        "Succeeded",
        0,
        "all good",
      ]);
      const broken = await finished("broken");
      expect([broken.condition, broken.phase, broken.terminated.exitCode, broken.terminated.message]).toEqual([
        "Failed",
        "Failed",
        3,
        "bad input",
      ]);

      /** The events on b's pod `absent` that b's agent copied from a. */
      const copied = async (): Promise<k8s.CoreV1Event[]> =>
        (
          await bCore.listNamespacedEvent({
            namespace,
            fieldSelector: "involvedObject.name=absent,source=pulumi-liqo-agent (provider)",
          })
        ).items;
      const pullError = await poll(
        { step: "test", object: "a's pull error copied onto b's pod", endpoint: b.apiServerUrl },
        { timeoutMs: 120_000, intervalMs: 1_000 },
        async () => {
          const found = (await copied()).find((e) => e.reason === "ErrImageNeverPull");
          return found ? { done: true, value: found } : { done: false, state: "no such event yet" };
        },
      );
      expect(pullError.type).toBe("Warning");
      expect(pullError.message).toContain("pulumi-liqo.local/absent:1");

      // a's administrator writes events of its own: one about the pod, hostile; one about an older pod of its name.
      const remotePod = await aCore.readNamespacedPod({ name: "absent", namespace: remoteNamespace });
      const forged = (name: string, uid: string): k8s.CoreV1Event => ({
        metadata: { name, namespace: remoteNamespace },
        involvedObject: { kind: "Pod", name: "absent", namespace: remoteNamespace, uid },
        reason: "Owned; curl evil",
        message: `\u001b[31m${"x".repeat(50_000)}`,
        type: "Critical",
        count: 1,
        lastTimestamp: new Date(),
      });
      await aCore.createNamespacedEvent({
        namespace: remoteNamespace,
        body: forged("forged", remotePod.metadata!.uid!),
      });
      await aCore.createNamespacedEvent({ namespace: remoteNamespace, body: forged("stale", "another-uid") });
      const hostile = await poll(
        { step: "test", object: "a's forged event copied, bounded", endpoint: b.apiServerUrl },
        { timeoutMs: 120_000, intervalMs: 1_000 },
        async () => {
          const found = (await copied()).find((e) => e.reason === "ProviderEvent");
          return found ? { done: true, value: found } : { done: false, state: "not copied yet" };
        },
      );
      expect([hostile.type, hostile.message?.length, hostile.message?.startsWith("[31m")]).toEqual([
        "Warning",
        1024,
        true,
      ]);
      expect((await copied()).filter((e) => e.reason === "ProviderEvent")).toHaveLength(1);

      // a's probes decide readiness on b: of two pods behind one Service of b, the one whose
      // readiness probe fails on a is listed not ready in b's EndpointSlice; a pod past its
      // activeDeadlineSeconds on a ends Failed on b, for the reason a's kubelet gave.
      const probed = (name: string, port: number): k8s.V1Pod => ({
        metadata: { name, labels: { app: "probed" } },
        spec: {
          containers: [
            {
              name: "app",
              image: imageReference("podtool"),
              imagePullPolicy: "Never",
              readinessProbe: { tcpSocket: { port }, periodSeconds: 2 },
            },
          ],
        },
      });
      await bCore.createNamespacedPod({ namespace, body: probed("ready", 8080) });
      await bCore.createNamespacedPod({ namespace, body: probed("unready", 9) });
      await bCore.createNamespacedService({
        namespace,
        body: { metadata: { name: "probed" }, spec: { selector: { app: "probed" }, ports: [{ port: 8080 }] } },
      });
      const discovery = pair.consumer.kc.makeApiClient(k8s.DiscoveryV1Api);
      const readiness = await poll(
        { step: "test", object: "b's EndpointSlice of probed: one ready, one not", endpoint: b.apiServerUrl },
        { timeoutMs: 120_000, intervalMs: 1_000 },
        async () => {
          const slices = await discovery.listNamespacedEndpointSlice({
            namespace,
            labelSelector: "kubernetes.io/service-name=probed",
          });
          const seen = slices.items
            .flatMap((slice) => slice.endpoints ?? [])
            .map((e) => `${e.targetRef?.name}=${e.conditions?.ready}`)
            .sort();
          return seen.join(",") === "ready=true,unready=false"
            ? { done: true, value: seen }
            : { done: false, state: seen.join(",") || "no endpoint" };
        },
      );
      expect(readiness).toEqual(["ready=true", "unready=false"]);
      // The same Service by the names that spell out its namespace, from Jobs run on a: each ends
      // Complete only if its name resolved there and the ready pod answered through it.
      for (const [name, target] of [
        ["by-namespace", `probed.${namespace}:8080`],
        ["by-fqdn", `probed.${namespace}.svc.cluster.local:8080`],
      ]) {
        await batch.createNamespacedJob({ namespace, body: job(name!, "tcp", target!) });
      }
      for (const name of ["by-namespace", "by-fqdn"])
        expect([name, (await finished(name)).condition]).toEqual([name, "Complete"]);
      await bCore.createNamespacedPod({
        namespace,
        body: {
          metadata: { name: "deadline" },
          spec: {
            activeDeadlineSeconds: 5,
            containers: [{ name: "app", image: imageReference("podtool"), imagePullPolicy: "Never" }],
          },
        },
      });
      const ended = await poll(
        { step: "test", object: "pod deadline Failed on b", endpoint: b.apiServerUrl },
        { timeoutMs: 120_000, intervalMs: 1_000 },
        async () => {
          const live = await bCore.readNamespacedPod({ name: "deadline", namespace });
          return live.status?.phase === "Failed"
            ? { done: true, value: live.status }
            : { done: false, state: `${live.status?.phase} ${live.status?.reason ?? ""}` };
        },
      );
      expect(ended.reason).toBe("DeadlineExceeded");

      await batch.deleteNamespacedJob({ name: "done", namespace, propagationPolicy: "Background" });
      await batch.deleteNamespacedJob({ name: "broken", namespace, propagationPolicy: "Background" });
      for (const name of ["absent", "ready", "unready", "deadline"])
        await bCore.deleteNamespacedPod({ name, namespace });
      await withdrawNamespace(pair.consumer.kc, namespace, { force: false, timeoutMs: 120_000 }, quietProgress);
      await bCore.deleteNamespace({ name: namespace });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN an offloaded pod running WHEN a loses it THEN a makes it again; WHEN its image, labels and annotations change " +
      "on b THEN a changes them in place, and b patching the request for a privileged container is refused; WHEN the Peering is deleted THEN its virtual " +
      "node is drained first, a DaemonSet's pod on it not waited for: the pod goes from both clusters, and the remote namespace from a",
    async () => {
      pair ??= await peerPair(await sharedLab());
      const { a, b, record } = pair;
      const [aCore, bCore] = [pair!.provider.kc, pair!.consumer.kc].map((kc) => kc.makeApiClient(k8s.CoreV1Api));
      const namespace = "depot";
      const remoteNamespace = remoteNamespaceName(namespace, pair!.consumer.clusterId, "suffixed");
      await offloadNamespace(pair!.consumer.kc, namespace, remoteNamespace, record.virtualNodeName);
      await bCore.createNamespacedPod({
        namespace,
        body: { metadata: { name: "keeper", labels: { app: "keeper" } }, spec: podtoolSpec(record.virtualNodeName) },
      });
      const [kept] = await runningPods(pair!.consumer.kc, namespace, "app=keeper", 1);
      const lost = await aCore.readNamespacedPod({ name: "keeper", namespace: remoteNamespace });
      await aCore.deleteNamespacedPod({ name: "keeper", namespace: remoteNamespace, body: { gracePeriodSeconds: 0 } });
      await poll(
        { step: "test", object: `pod ${remoteNamespace}/keeper made again on a`, endpoint: a.apiServerUrl },
        { timeoutMs: 90_000, intervalMs: 500 },
        async () => {
          const again = await aCore
            .readNamespacedPod({ name: "keeper", namespace: remoteNamespace })
            .catch(() => undefined);
          return again && again.metadata?.uid !== lost.metadata?.uid && again.status?.phase === "Running"
            ? { done: true, value: undefined }
            : { done: false, state: again ? `${again.status?.phase} ${again.metadata?.uid}` : "gone" };
        },
      );
      const [still] = await runningPods(pair!.consumer.kc, namespace, "app=keeper", 1);
      expect(still!.metadata?.uid).toBe(kept!.metadata?.uid);

      // Its image changed on b (as `kubectl set image` does): the request follows, and a changes the
      // image of the same pod in place, whose container the kubelet restarts with it.
      const next = `${imageReference("podtool")}-next`;
      await tagImageOnNodes(a, imageReference("podtool"), next);
      const old = await aCore.readNamespacedPod({ name: "keeper", namespace: remoteNamespace });
      const restarts = (pod: k8s.V1Pod): number => pod.status?.containerStatuses?.[0]?.restartCount ?? 0;
      await bCore.patchNamespacedPod(
        { name: "keeper", namespace, body: { spec: { containers: [{ name: "podtool", image: next }] } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.StrategicMergePatch),
      );
      const changed = await poll(
        { step: "test", object: `pod ${remoteNamespace}/keeper running ${next} on a`, endpoint: a.apiServerUrl },
        { timeoutMs: 90_000, intervalMs: 500 },
        async () => {
          const now = await aCore.readNamespacedPod({ name: "keeper", namespace: remoteNamespace });
          const container = now.status?.containerStatuses?.[0];
          return now.spec?.containers[0]?.image === next && restarts(now) > restarts(old) && container?.state?.running
            ? { done: true, value: now }
            : { done: false, state: `${now.spec?.containers[0]?.image}, ${restarts(now)} restart(s)` };
        },
      );
      expect(changed.metadata?.uid).toBe(old.metadata?.uid);
      const [updated] = await runningPods(pair!.consumer.kc, namespace, "app=keeper", 1);
      expect(updated!.metadata?.uid).toBe(kept!.metadata?.uid);
      expect(updated!.status?.conditions?.find((c) => c.type === OFFLOADED_CONDITION)?.status).toBe("True");
      // As a kubelet does, b's pod says which of its specs its status answers: the new one.
      await poll(
        { step: "test", object: `pod ${namespace}/keeper observing its new spec on b`, endpoint: b.apiServerUrl },
        { timeoutMs: 60_000, intervalMs: 500 },
        async () => {
          const now = await bCore.readNamespacedPod({ name: "keeper", namespace });
          const [generation, observed] = [now.metadata?.generation ?? 0, now.status?.observedGeneration];
          return generation > 1 && observed === generation
            ? { done: true, value: undefined }
            : { done: false, state: `generation ${generation}, observed ${observed}` };
        },
      );

      // Its labels and annotations changed on b: a's pod follows, the same pod (so its downward API
      // volume does), but for an annotation of Kubernetes' own prefixes, which stays with b.
      await bCore.patchNamespacedPod(
        {
          name: "keeper",
          namespace,
          body: {
            metadata: { labels: { tier: "gold" }, annotations: { note: "moved", "team.kubernetes.io/x": "b's" } },
          },
        },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      const relabelled = await poll(
        { step: "test", object: `pod ${remoteNamespace}/keeper relabelled on a`, endpoint: a.apiServerUrl },
        { timeoutMs: 60_000, intervalMs: 500 },
        async () => {
          const now = await aCore.readNamespacedPod({ name: "keeper", namespace: remoteNamespace });
          return now.metadata?.labels?.["tier"] === "gold" && now.metadata.annotations?.["note"] === "moved"
            ? { done: true, value: now }
            : { done: false, state: JSON.stringify([now.metadata?.labels, now.metadata?.annotations]) };
        },
      );
      expect([relabelled.metadata?.uid, relabelled.metadata?.labels?.["app"]]).toEqual([old.metadata?.uid, "keeper"]);
      expect(relabelled.metadata?.annotations?.["team.kubernetes.io/x"]).toBeUndefined();

      // b's identity patches that request itself, as an attacking consumer would, for a privileged
      // container: a checks the new spec again and refuses it; its pod keeps its image and no privilege.
      const requestName = tenantRequestName(remoteNamespace, "keeper");
      await pair!.sides.provider.kc.makeApiClient(k8s.CustomObjectsApi).patchNamespacedCustomObject(
        {
          ...group,
          namespace: record.tenantNamespace,
          plural: "offloadedpods",
          name: requestName,
          body: {
            spec: {
              pod: {
                containers: [
                  { name: "podtool", image: next, imagePullPolicy: "Never", securityContext: { privileged: true } },
                ],
              },
            },
          },
        },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      const refusedPatch = await poll(
        { step: "test", object: `OffloadedPod ${requestName} refused`, endpoint: a.apiServerUrl },
        { timeoutMs: 60_000, intervalMs: 500 },
        async () => {
          const live = (await pair!.provider.kc.makeApiClient(k8s.CustomObjectsApi).getNamespacedCustomObject({
            ...group,
            namespace: record.tenantNamespace,
            plural: "offloadedpods",
            name: requestName,
          })) as OffloadedPod;
          const answered = live.status?.observedGeneration === live.metadata.generation;
          return answered ? { done: true, value: live.status } : { done: false, state: `${live.status?.phase}` };
        },
      );
      expect(refusedPatch).toMatchObject({ phase: "Refused", reason: "Privileged" });
      const unchanged = await aCore.readNamespacedPod({ name: "keeper", namespace: remoteNamespace });
      expect(unchanged.metadata?.uid).toBe(old.metadata?.uid);
      expect(unchanged.spec?.containers.map((c) => [c.image, c.securityContext?.privileged])).toEqual([
        [next, undefined],
      ]);

      // A deadline given to the running pod on b (the other change a running pod allows) reaches a,
      // whose kubelet ends the pod at it; b shows it Failed, DeadlineExceeded, as a kubelet would.
      await bCore.patchNamespacedPod(
        { name: "keeper", namespace, body: { spec: { activeDeadlineSeconds: 5 } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.StrategicMergePatch),
      );
      await poll(
        { step: "test", object: `pod ${namespace}/keeper ended at its deadline on b`, endpoint: b.apiServerUrl },
        { timeoutMs: 90_000, intervalMs: 500 },
        async () => {
          const now = await bCore.readNamespacedPod({ name: "keeper", namespace });
          return now.status?.phase === "Failed" && now.status.reason === "DeadlineExceeded"
            ? { done: true, value: undefined }
            : { done: false, state: `${now.status?.phase} ${now.status?.reason ?? ""}` };
        },
      );

      // A DaemonSet that tolerates every taint, in a namespace not offloaded, as a cluster's log or
      // network agents are: its pod lands on the virtual node and stays Pending there, and comes back
      // at once on the cordoned node. The drain must not wait on it.
      const apps = pair!.consumer.kc.makeApiClient(k8s.AppsV1Api);
      const nodeAgent = { metadata: { labels: { app: "node-agent" } } };
      await apps.createNamespacedDaemonSet({
        namespace: "default",
        body: {
          metadata: { name: "node-agent" },
          spec: {
            selector: { matchLabels: nodeAgent.metadata.labels },
            template: {
              ...nodeAgent,
              spec: { ...podtoolSpec(record.virtualNodeName), tolerations: [{ operator: "Exists" }] },
            },
          },
        },
      });
      await poll(
        { step: "test", object: "the DaemonSet's pod on the virtual node", endpoint: b.apiServerUrl },
        { timeoutMs: 60_000, intervalMs: 500 },
        async () => {
          const pods = await bCore.listNamespacedPod({
            namespace: "default",
            labelSelector: "app=node-agent",
            fieldSelector: `spec.nodeName=${record.virtualNodeName}`,
          });
          return pods.items.length > 0 ? { done: true, value: undefined } : { done: false, state: "none yet" };
        },
      );

      // The peering goes: its node is drained before anything else.
      try {
        await unpeerPair(pair!);
      } finally {
        await apps.deleteNamespacedDaemonSet({ name: "node-agent", namespace: "default" });
      }
      expect((await bCore.listNamespacedPod({ namespace })).items).toEqual([]);
      expect(await bCore.readNode({ name: record.virtualNodeName }).catch(() => undefined)).toBeUndefined();
      await namespaceGone(aCore, remoteNamespace, a.apiServerUrl);
      // The tenant namespace too: a's agent lets the requests in it go (they hold its finalizer).
      await namespaceGone(aCore, record.tenantNamespace, a.apiServerUrl);
      // With no peering left, withdrawing the offloading has nothing to wait for.
      expect(
        await withdrawNamespace(pair!.consumer.kc, namespace, { force: false, timeoutMs: 30_000 }, quietProgress),
      ).toEqual([]);
      await bCore.deleteNamespace({ name: namespace });
    },
    TEST_BOUND_MS,
  );
});
