/**
 * One local cluster's control plane: etcd, kube-apiserver, kube-controller-manager and
 * kube-scheduler from upstream binaries, each a process in the cluster's network namespace.
 *
 * Ready means: `/readyz` answers 200 from the host, a namespace can be created, and both
 * kube-controller-manager and kube-scheduler work: a new namespace gets its `default`
 * ServiceAccount, and a pod in it that no node may take is marked unschedulable. A component that
 * exits ends the wait at once, naming its log. Each start is given to the caller with its command
 * line, which the cluster's supervisor (supervisor.ts) runs again when the process exits.
 */
import * as k8s from "@kubernetes/client-node";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { dirname, join } from "node:path";
import { describeKubeError } from "../core/kube/errors.js";
import { forgeKubeconfig } from "../core/kube/kubeconfig.js";
import { Cidr } from "../core/net/cidr.js";
import { poll } from "../core/wait/poll.js";
import {
  forgeCertificateAuthority,
  forgeClientCertificate,
  forgeServiceAccountKeys,
  forgeServingCertificate,
  type ClientIdentity,
  type KeyPair,
} from "../core/pki/x509.js";
import { startInNamespace, type NamespaceEntry, type ProcessRecord } from "../host/processes.js";
import { AGENT_NODE_FLAGS } from "../core/cluster/agent-deployment.js";

import { API_SERVER_PORT, type PodSecurityLevel } from "./plan.js";
import { releaseCommands } from "./releases.js";
import { NODE_LAN_CIDR } from "./node-plan.js";
import { loadKubeconfigFile } from "../core/kube/client.js";

/** Node 1's address on the node LAN, where the cluster's nodes reach the API server. */
export const NODE_LAN_API_ADDRESS = Cidr.parse(NODE_LAN_CIDR).nth(1);

const kubeletClientIdentity: ClientIdentity = {
  commonName: "kube-apiserver-kubelet-client",
  organizations: ["system:masters"],
};

export { API_SERVER_PORT };

/** Where and how one control plane runs. */
export interface ControlPlaneSpec {
  /** Cluster name, e.g. `a`. */
  readonly name: string;
  /** Network namespace the processes run in. */
  readonly netns: string;
  /** Directory for certificates, etcd data, kubeconfigs and logs. */
  readonly dir: string;
  /** Address of the namespace's own interface, which the API server advertises. */
  readonly address: string;
  /** Address at which the host reaches the API server (differs from `address` behind NAT). */
  readonly publicAddress: string;
  /** Pod CIDR, handed to kube-controller-manager. */
  readonly podCidr: Cidr;
  /** Service CIDR; its first address is the `kubernetes` service's. */
  readonly serviceCidr: Cidr;
  /** Node lifecycle controller's grace period before a silent Node turns NotReady. */
  readonly nodeMonitorGracePeriodSeconds: number;
  /** The wireguard-go executable the agent's gateway runs. @default "wireguard-go" from PATH */
  readonly wireguardGo?: string;
  /** Whether the agent also runs the gateway in the cluster's namespace. @default true */
  readonly hostGateway?: boolean;
  /** The Pod Security level the API server enforces by default (`kube-system` exempt); absent: none. */
  readonly podSecurity?: PodSecurityLevel;
  /** The Kubernetes minor release it runs (local-cluster/releases.ts); absent: the default, on PATH. */
  readonly kubernetes?: string;
  /** The range node ports are allocated from, `first-last` (plan.ts `NODE_PORT_RANGES`). */
  readonly nodePortRange: string;
}

/**
 * The API server's admission configuration when it enforces a Pod Security level by default, as a
 * hardened cluster's does: every namespace without its own `pod-security.kubernetes.io/enforce`
 * label gets `level`, and `kube-system` (the cluster's own DNS) is exempt, as managed clusters
 * exempt it. Warnings and audit at the same level, so that what would be refused is said too.
 */
export function admissionConfiguration(level: PodSecurityLevel): string {
  return `${JSON.stringify(
    {
      apiVersion: "apiserver.config.k8s.io/v1",
      kind: "AdmissionConfiguration",
      plugins: [
        {
          name: "PodSecurity",
          configuration: {
            apiVersion: "pod-security.admission.config.k8s.io/v1",
            kind: "PodSecurityConfiguration",
            defaults: {
              enforce: level,
              "enforce-version": "latest",
              audit: level,
              "audit-version": "latest",
              warn: level,
              "warn-version": "latest",
            },
            exemptions: { usernames: [], runtimeClasses: [], namespaces: ["kube-system"] },
          },
        },
      ],
    },
    null,
    2,
  )}\n`;
}

/** How a process was started: what its supervisor runs again when it exits, as a unit's `ExecStart`. */
export interface Launch {
  /** Executable. */
  readonly command: string;
  /** Its arguments. */
  readonly args: readonly string[];
  /** Extra environment, kept so that a restart runs it the same way. */
  readonly environment?: Readonly<Record<string, string>>;
  /** The network namespace, if not the cluster's (a worker node's own). */
  readonly netns?: string;
  /** How it enters its namespace. @default "ip netns exec" */
  readonly entry?: NamespaceEntry;
}

/** Receives each process started, with how, so that the caller records both before anything else can fail. */
export type OnStarted = (record: ProcessRecord, launch: Launch) => void;

/** Files of a control plane, all below its directory. */
export interface ControlPlaneFiles {
  /** Admin kubeconfig that works from the host. */
  readonly adminKubeconfig: string;
  /** The cluster CA certificate (client CA and CSR signing CA). */
  readonly caCert: string;
}

/** Paths of a control plane's files, derived from its directory alone. */
export function controlPlaneFiles(dir: string): ControlPlaneFiles {
  return { adminKubeconfig: join(dir, "admin.kubeconfig"), caCert: join(dir, "pki", "ca.crt") };
}

function writePair(dir: string, name: string, pair: KeyPair): void {
  writeFileSync(join(dir, `${name}.crt`), pair.cert);
  writeFileSync(join(dir, `${name}.key`), pair.key, { mode: 0o600 });
}

/** Writes a kubeconfig of cluster `cluster` for `identity`, its client certificate signed by `ca` (mode 0600). */
export function writeKubeconfig(
  file: string,
  cluster: string,
  ca: KeyPair,
  server: string,
  identity: ClientIdentity,
): void {
  const client = forgeClientCertificate(ca, identity);
  const text = forgeKubeconfig({
    name: `local-${cluster}`,
    server,
    caPem: ca.cert,
    certPem: client.cert,
    keyPem: client.key,
  });
  writeFileSync(file, text, { mode: 0o600 });
}

/** The API server's name towards aggregated APIs (kubeadm's). */
const FRONT_PROXY_CLIENT = "front-proxy-client";

/** Reads the cluster CA written by {@link writeControlPlaneFiles}. */
export function readClusterCa(dir: string): KeyPair {
  const pki = join(dir, "pki");
  return { cert: readFileSync(join(pki, "ca.crt"), "utf8"), key: readFileSync(join(pki, "ca.key"), "utf8") };
}

/**
 * Writes the cluster's PKI and kubeconfigs. The admin user is in `system:masters`; the components
 * use their well-known user names, which the API server's default RBAC already binds.
 */
export function writeControlPlaneFiles(spec: ControlPlaneSpec): ControlPlaneFiles {
  const pki = join(spec.dir, "pki");
  mkdirSync(pki, { recursive: true, mode: 0o700 });
  const ca = forgeCertificateAuthority(`local-cluster-${spec.name}-ca`);
  writePair(pki, "ca", ca);
  const serving = forgeServingCertificate(
    ca,
    "kube-apiserver",
    ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"],
    // The node LAN address too: the nodes' kubelets and kube-proxies reach the API server there.
    [...new Set(["127.0.0.1", spec.address, spec.publicAddress, spec.serviceCidr.nth(1), NODE_LAN_API_ADDRESS])],
  );
  writePair(pki, "apiserver", serving);
  // The API server's identity towards kubelets (logs, exec), allowed everything by their webhook authorizer.
  writePair(pki, "apiserver-kubelet-client", forgeClientCertificate(ca, kubeletClientIdentity));
  // The aggregation layer (metrics.k8s.io, served by metrics-server), as kubeadm sets it up: a CA of
  // its own, whose one client is the API server passing on who asked.
  const frontProxyCa = forgeCertificateAuthority(`local-cluster-${spec.name}-front-proxy-ca`);
  writePair(pki, "front-proxy-ca", frontProxyCa);
  writePair(pki, "front-proxy-client", forgeClientCertificate(frontProxyCa, { commonName: FRONT_PROXY_CLIENT }));
  const sa = forgeServiceAccountKeys();
  writeFileSync(join(pki, "sa.pub"), sa.publicKey);
  writeFileSync(join(pki, "sa.key"), sa.privateKey, { mode: 0o600 });

  const kubeconfig = (file: string, server: string, identity: ClientIdentity): void =>
    writeKubeconfig(join(spec.dir, file), spec.name, ca, server, identity);
  const inside = `https://127.0.0.1:${API_SERVER_PORT}`;
  kubeconfig("admin.kubeconfig", `https://${spec.publicAddress}:${API_SERVER_PORT}`, {
    commonName: "local-admin",
    organizations: ["system:masters"],
  });
  // The agent runs in the namespace too; it reaches its API server on loopback, NAT or not.
  kubeconfig("agent.kubeconfig", inside, { commonName: "pulumi-liqo-agent", organizations: ["system:masters"] });
  kubeconfig("controller-manager.kubeconfig", inside, { commonName: "system:kube-controller-manager" });
  kubeconfig("scheduler.kubeconfig", inside, { commonName: "system:kube-scheduler" });
  if (spec.podSecurity) writeFileSync(join(spec.dir, "admission.json"), admissionConfiguration(spec.podSecurity));
  return controlPlaneFiles(spec.dir);
}

/** Starts one component in the cluster's namespace, its output in `logs/<name>.log`. */
function starter(
  spec: ControlPlaneSpec,
  onStarted: OnStarted,
): (name: string, args: string[], command?: string, environment?: Readonly<Record<string, string>>) => void {
  const logs = join(spec.dir, "logs");
  mkdirSync(logs, { recursive: true });
  // A release other than the default runs from its own cache directory, not from PATH.
  const release = spec.kubernetes === undefined ? undefined : releaseCommands(spec.kubernetes);
  const ofRelease: Readonly<Record<string, string | undefined>> = {
    "kube-apiserver": release?.apiServer,
    "kube-controller-manager": release?.controllerManager,
    "kube-scheduler": release?.scheduler,
  };
  return (name, args, command = ofRelease[name] ?? name, environment) =>
    onStarted(startInNamespace(spec.netns, name, command, args, join(logs, `${name}.log`), environment), {
      command,
      args,
      ...(environment ? { environment } : {}),
    });
}

/**
 * Starts etcd and kube-apiserver, calling `onStarted` after each so that the caller records the
 * PID before anything else can fail.
 */
export function startApiServer(spec: ControlPlaneSpec, onStarted: OnStarted): void {
  const pki = join(spec.dir, "pki");
  const start = starter(spec, onStarted);

  // etcd listens on the namespace's loopback only: nothing outside the cluster talks to it.
  start("etcd", [
    `--name=${spec.name}`,
    `--data-dir=${join(spec.dir, "etcd")}`,
    "--listen-client-urls=http://127.0.0.1:2379",
    "--advertise-client-urls=http://127.0.0.1:2379",
    "--listen-peer-urls=http://127.0.0.1:2380",
    "--initial-advertise-peer-urls=http://127.0.0.1:2380",
    `--initial-cluster=${spec.name}=http://127.0.0.1:2380`,
    "--listen-metrics-urls=",
    // Test clusters are thrown away: durability is not worth an fsync per write on a shared disk.
    "--unsafe-no-fsync",
    "--log-level=warn",
  ]);
  start("kube-apiserver", [
    // The namespace has no default route, so the address to advertise cannot be guessed.
    `--advertise-address=${spec.address}`,
    "--bind-address=0.0.0.0",
    `--secure-port=${API_SERVER_PORT}`,
    "--etcd-servers=http://127.0.0.1:2379",
    `--client-ca-file=${join(pki, "ca.crt")}`,
    `--tls-cert-file=${join(pki, "apiserver.crt")}`,
    `--tls-private-key-file=${join(pki, "apiserver.key")}`,
    `--cert-dir=${pki}`,
    `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
    `--service-account-key-file=${join(pki, "sa.pub")}`,
    `--service-account-signing-key-file=${join(pki, "sa.key")}`,
    `--service-cluster-ip-range=${spec.serviceCidr.toString()}`,
    "--authorization-mode=Node,RBAC",
    // logs and exec: the API server dials each node at its InternalIP (the node LAN address)
    // and presents this identity.
    "--kubelet-preferred-address-types=InternalIP",
    `--kubelet-client-certificate=${join(pki, "apiserver-kubelet-client.crt")}`,
    `--kubelet-client-key=${join(pki, "apiserver-kubelet-client.key")}`,
    // Aggregated APIs (metrics-server's metrics.k8s.io) trust the API server's word on who asked.
    `--requestheader-client-ca-file=${join(pki, "front-proxy-ca.crt")}`,
    `--requestheader-allowed-names=${FRONT_PROXY_CLIENT}`,
    "--requestheader-username-headers=X-Remote-User",
    "--requestheader-group-headers=X-Remote-Group",
    "--requestheader-extra-headers-prefix=X-Remote-Extra-",
    `--proxy-client-cert-file=${join(pki, "front-proxy-client.crt")}`,
    `--proxy-client-key-file=${join(pki, "front-proxy-client.key")}`,
    `--service-node-port-range=${spec.nodePortRange}`,
    "--allow-privileged=true",
    ...(spec.podSecurity ? [`--admission-control-config-file=${join(spec.dir, "admission.json")}`] : []),
    "--profiling=false",
    "--v=1",
  ]);
}

/**
 * Starts kube-controller-manager and kube-scheduler. Only once the API server is ready: before its
 * RBAC bootstrap finishes, kube-controller-manager cannot read its configmap and exits.
 */
export function startControllers(spec: ControlPlaneSpec, onStarted: OnStarted): void {
  const pki = join(spec.dir, "pki");
  const start = starter(spec, onStarted);
  start("kube-controller-manager", [
    `--kubeconfig=${join(spec.dir, "controller-manager.kubeconfig")}`,
    `--authentication-kubeconfig=${join(spec.dir, "controller-manager.kubeconfig")}`,
    `--authorization-kubeconfig=${join(spec.dir, "controller-manager.kubeconfig")}`,
    // Signs approved kubernetes.io/kube-apiserver-client CSRs with the CA the API server trusts.
    `--cluster-signing-cert-file=${join(pki, "ca.crt")}`,
    `--cluster-signing-key-file=${join(pki, "ca.key")}`,
    `--root-ca-file=${join(pki, "ca.crt")}`,
    `--service-account-private-key-file=${join(pki, "sa.key")}`,
    "--use-service-account-credentials=true",
    `--cluster-cidr=${spec.podCidr.toString()}`,
    `--service-cluster-ip-range=${spec.serviceCidr.toString()}`,
    "--allocate-node-cidrs=false",
    `--node-monitor-grace-period=${spec.nodeMonitorGracePeriodSeconds}s`,
    "--bind-address=127.0.0.1",
    // One instance per cluster: a leader lease would only cost a write every 2 s (each of the two
    // components, in every cluster running), and on a loaded machine a missed renewal ends the process.
    "--leader-elect=false",
    "--profiling=false",
    "--v=1",
  ]);
  start("kube-scheduler", [
    `--kubeconfig=${join(spec.dir, "scheduler.kubeconfig")}`,
    `--authentication-kubeconfig=${join(spec.dir, "scheduler.kubeconfig")}`,
    `--authorization-kubeconfig=${join(spec.dir, "scheduler.kubeconfig")}`,
    "--bind-address=127.0.0.1",
    "--leader-elect=false",
    "--profiling=false",
    "--v=1",
  ]);
}

/** GETs `/readyz` with the kubeconfig's credentials; resolves with the status code and body. */
export function getReadyz(kc: k8s.KubeConfig): Promise<{ status: number; body: string }> {
  const cluster = kc.getCurrentCluster()!;
  const user = kc.getCurrentUser()!;
  const decode = (data: string | undefined): string => Buffer.from(data ?? "", "base64").toString("utf8");
  return new Promise((resolve, reject) => {
    const req = request(
      `${cluster.server}/readyz`,
      { ca: decode(cluster.caData), cert: decode(user.certData), key: decode(user.keyData), timeout: 5000 },
      (res) => {
        let body = "";
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("no answer within 5 s")));
    req.on("error", reject);
    req.end();
  });
}

/** Port of the agent's auth service in local clusters. */
export const AUTH_SERVICE_PORT = 8443;

/** The compiled agent's entry point (the agent runs from `dist/`, also when tests run from sources). */
export function agentEntryPoint(): string {
  return join(dirname(require.resolve("pulumi-liqo/package.json")), "dist", "agent", "main.js");
}

/**
 * Starts the project's agent in the cluster's namespace, as a real cluster would run its
 * Deployment: auth service on {@link AUTH_SERVICE_PORT}, offer answering, heartbeat, and the
 * gateway, which sets up tunnels in the cluster's namespace.
 */
export function startAgent(
  spec: ControlPlaneSpec,
  onStarted: OnStarted,
  environment?: Readonly<Record<string, string>>,
): void {
  starter(spec, onStarted)(
    "agent",
    [
      ...AGENT_NODE_FLAGS,
      agentEntryPoint(),
      ...[
        "--kubeconfig",
        join(spec.dir, "agent.kubeconfig"),
        "--auth-listen",
        `0.0.0.0:${AUTH_SERVICE_PORT}`,
        "--name",
        `agent-${spec.name}`,
      ],
      ...(spec.hostGateway === false
        ? []
        : [
            ...["--gateway-netns", spec.netns, "--gateway-dir", join(spec.dir, "gateway")],
            ...(spec.wireguardGo ? ["--wireguard-go", spec.wireguardGo] : []),
          ]),
    ],
    process.execPath,
    environment,
  );
}

/**
 * Reports the first recorded process that is no longer running (`<name> exited; see <its log
 * file>`), so that waits end at once, naming the log that says why.
 */
export type LivenessCheck = () => string | undefined;

function adminClient(spec: ControlPlaneSpec): { kc: k8s.KubeConfig; endpoint: string; step: string } {
  const kc = loadKubeconfigFile(controlPlaneFiles(spec.dir).adminKubeconfig);
  return { kc, endpoint: kc.getCurrentCluster()!.server, step: `local cluster ${spec.name}` };
}

/** Waits until `/readyz` answers 200 from the host and a namespace can be created. */
export async function waitForApiServer(spec: ControlPlaneSpec, dead: LivenessCheck, timeoutMs: number): Promise<void> {
  const { kc, endpoint, step } = adminClient(spec);
  const deadline = Date.now() + timeoutMs;
  const left = (): number => Math.max(1, deadline - Date.now());
  const exited = (): { failed: true; reason: string } | undefined => {
    const reason = dead();
    return reason ? { failed: true, reason } : undefined;
  };

  await poll({ step, object: "/readyz", endpoint }, { timeoutMs: left(), intervalMs: 200 }, async () => {
    const failure = exited();
    if (failure) return failure;
    const { status, body } = await getReadyz(kc);
    const failing = body
      .split("\n")
      .filter((l) => l.includes("[-]"))
      .join(", ");
    return status === 200
      ? { done: true, value: undefined }
      : { done: false, state: `HTTP ${status}: ${failing || body.slice(0, 200)}` };
  });

  const core = kc.makeApiClient(k8s.CoreV1Api);
  const probe = `local-cluster-probe-${Date.now().toString(36)}`;
  await poll({ step, object: `namespace ${probe}`, endpoint }, { timeoutMs: left() }, async () => {
    await core.createNamespace({ body: { metadata: { name: probe } } }).catch((e: unknown) => {
      throw new Error(describeKubeError(e));
    });
    return { done: true, value: undefined };
  });
  await core.deleteNamespace({ name: probe });
}

/**
 * Waits until kube-controller-manager and kube-scheduler work, seen in what each does to a new
 * probe namespace: the controller manager gives it its `default` ServiceAccount, and the scheduler
 * marks a pod in it that no node may take `PodScheduled=False`. A component that restarted is seen
 * working only once the new process does, as every call makes its own namespace.
 */
export async function waitForControllers(
  spec: ControlPlaneSpec,
  dead: LivenessCheck,
  timeoutMs: number,
): Promise<void> {
  const { kc, endpoint, step } = adminClient(spec);
  const deadline = Date.now() + timeoutMs;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const namespace = `local-cluster-controllers-probe-${Date.now().toString(36)}`;
  const answer = (e: unknown): never => {
    throw new Error(describeKubeError(e));
  };
  const waitFor = (object: string, check: () => Promise<string | undefined>): Promise<void> =>
    poll({ step, object, endpoint }, { timeoutMs: Math.max(1, deadline - Date.now()), intervalMs: 250 }, async () => {
      const reason = dead();
      if (reason) return { failed: true, reason };
      const missing = await check();
      return missing === undefined ? { done: true, value: undefined } : { done: false, state: missing };
    });
  await core.createNamespace({ body: { metadata: { name: namespace } } }).catch(answer);
  let probed = false;
  try {
    await waitFor(`ServiceAccount ${namespace}/default (kube-controller-manager)`, async () => {
      const accounts = await core.listNamespacedServiceAccount({ namespace }).catch(answer);
      return accounts.items.some((a) => a.metadata?.name === "default") ? undefined : "not made yet";
    });
    await core
      .createNamespacedPod({
        namespace,
        body: {
          metadata: { name: "schedule-probe" },
          spec: {
            nodeSelector: { "local-cluster.pulumi-liqo/none": "none" },
            containers: [{ name: "probe", image: "schedule-probe.invalid/none" }],
          },
        },
      })
      .catch(answer);
    await waitFor(`pod ${namespace}/schedule-probe marked unschedulable (kube-scheduler)`, async () => {
      const pod = await core.readNamespacedPod({ namespace, name: "schedule-probe" }).catch(answer);
      const scheduled = pod.status?.conditions?.find((c) => c.type === "PodScheduled");
      return scheduled?.status === "False" ? undefined : "no PodScheduled condition yet";
    });
    probed = true;
  } finally {
    // After a failed wait the probe goes as far as the cluster lets it; that wait's error is the one to say.
    const removal = core.deleteNamespace({ name: namespace });
    await (probed ? removal.catch(answer) : removal.catch(() => undefined));
  }
}
