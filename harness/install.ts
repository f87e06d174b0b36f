/**
 * A local cluster's admin client, and the install a `Cluster` resource would do, for tests and
 * benchmarks that drive the peering steps without the Pulumi engine.
 */
import * as k8s from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { adminConfig } from "../local-cluster/inspect.js";
import { AUTH_SERVICE_PORT } from "../local-cluster/control-plane.js";
import type { ClusterState } from "../local-cluster/lab.js";
import { runsHostAgent } from "../local-cluster/state.js";
import { allOrFirstFailure } from "./settle.js";
import { SYSTEM_NAMESPACE } from "../core/api/index.js";
import { AGENT_NAME, COMPONENT_LABEL } from "../core/cluster/agent-components.js";
import { poll } from "../core/wait/poll.js";
import { waitForAgent } from "../core/cluster/agent.js";
import { DEFAULT_AGENT_IMAGE } from "../core/cluster/agent-image.js";
import { DEFAULT_GATEWAY_PORT, type ClusterInstallRequest } from "../core/cluster/install-plan.js";
import { installCluster, removeCluster } from "../core/cluster/lifecycle.js";
import { waitForProjectKindsCounted } from "../core/authentication/tenant-quota.js";
import {
  ensureAuthServiceTls,
  ensureClusterIdentity,
  ensureCustomResourceDefinitions,
  ensureSystemNamespace,
} from "../core/cluster/install.js";

export { adminConfig };

/** A cluster installed for peering, as the tests use it. */
export interface InstalledCluster {
  readonly cluster: ClusterState;
  /** The id the install gave it. */
  readonly clusterId: string;
  /** CA of its auth service. */
  readonly caPem: string;
  /** Where peers reach its auth service: the lab's node port, or its load balancer's address. */
  readonly authUrl: string;
  /** Admin kubeconfig text. */
  readonly kubeconfig: string;
  /** Admin client configuration. */
  readonly kc: k8s.KubeConfig;
}

/**
 * Installs what peering needs. As a `Cluster` does ({@link installWithAgentPods}), unless the lab runs
 * the agent as a host process: then only the parts the agent reads, and waits until the agent
 * reports serving the new certificate (read from the API server: under `gateway-only` the auth
 * service is out of reach).
 */
export async function installForPeering(
  cluster: ClusterState,
  options: Pick<PodInstallOptions, "externalCidr" | "exposure"> = {},
): Promise<InstalledCluster> {
  if (!runsHostAgent(cluster)) return installWithAgentPods(cluster, options);
  const kc = adminConfig(cluster);
  await ensureSystemNamespace(kc);
  await ensureCustomResourceDefinitions(kc);
  const ca = Buffer.from(kc.getCurrentCluster()!.caData!, "base64").toString();
  const { clusterId } = await ensureClusterIdentity(kc, {
    clusterName: cluster.name,
    apiServerUrl: cluster.apiServerUrl,
    apiServerCaPem: ca,
    podCidr: cluster.podCidr,
    serviceCidr: cluster.serviceCidr,
    ...(options.externalCidr ? { externalCidr: options.externalCidr } : {}),
  });
  const { caPem, certPem } = await ensureAuthServiceTls(kc, { hosts: [cluster.publicAddress] });
  await waitForAgent(kc, certPem, { timeoutMs: 30_000 });
  await waitForProjectKindsCounted(kc, "cluster install", 90_000);
  const { authUrl } = cluster;
  return { cluster, clusterId, caPem, authUrl, kubeconfig: readFileSync(cluster.kubeconfig, "utf8"), kc };
}

/** What a test may change of a pod install. */
export interface PodInstallOptions {
  /** The install's deadline. @default 180000 */
  readonly timeoutMs?: number;
  /** The agent image. @default DEFAULT_AGENT_IMAGE (the one the lab's nodes hold) */
  readonly image?: string;
  readonly externalCidr?: string;
  /**
   * How the auth service and the gateway are exposed: `NodePort`, on the ports the lab's
   * connectivity profiles open (8443, 51820); `LoadBalancer`, what a `Cluster` that sets neither
   * gets, each Service on its lab load balancer's address (and on a node port the cluster picks).
   * @default "NodePort"
   */
  readonly exposure?: "NodePort" | "LoadBalancer";
}

/**
 * The install request a `Cluster` resource makes for `cluster` in any cluster: the agent deployed
 * from the project's image as pods (the lab runs no host agent), its auth service and gateway
 * exposed as `options.exposure` says.
 */
export function podInstallRequest(cluster: ClusterState, options: PodInstallOptions = {}): ClusterInstallRequest {
  return {
    name: cluster.name,
    kubeconfig: readFileSync(cluster.kubeconfig, "utf8"),
    kubeconfigInput: `cluster ${cluster.name}: kubeconfig`,
    podCidr: cluster.podCidr,
    serviceCidr: cluster.serviceCidr,
    apiServerUrl: cluster.apiServerUrl,
    ...(options.externalCidr ? { externalCidr: options.externalCidr } : {}),
    ...(options.exposure === "LoadBalancer"
      ? // The defaults: the request names no exposure.
        { agent: { image: options.image ?? DEFAULT_AGENT_IMAGE } }
      : {
          agent: { image: options.image ?? DEFAULT_AGENT_IMAGE, exposure: "NodePort", nodePort: AUTH_SERVICE_PORT },
          gateway: { exposure: "NodePort", nodePort: DEFAULT_GATEWAY_PORT },
        }),
    timeoutMs: options.timeoutMs ?? 180_000,
  };
}

/** Installs `cluster` as a `Cluster` resource does in any cluster ({@link podInstallRequest}). */
export async function installWithAgentPods(
  cluster: ClusterState,
  options: PodInstallOptions = {},
): Promise<InstalledCluster> {
  const request = podInstallRequest(cluster, options);
  const installed = await installCluster(request);
  return {
    cluster,
    clusterId: installed.clusterId,
    caPem: installed.authCaCert,
    // On node ports, the lab's address of the cluster (its NAT router's, behind NAT).
    authUrl: options.exposure === "LoadBalancer" ? installed.authUrl : cluster.authUrl,
    kubeconfig: request.kubeconfig,
    kc: adminConfig(cluster),
  };
}

/** How the tests uninstall. */
export interface TestUninstallOptions {
  /**
   * Keep the project's CRDs (removing every object of them): the end of a file on the shared lab,
   * whose next file installs again at once. A test that checks what an uninstall leaves does not.
   */
  readonly keepDefinitions?: boolean;
}

/**
 * Uninstalls `clusters` at once, each as {@link uninstallCluster}: most of an uninstall is waiting
 * for the namespace controller, which takes its own time per cluster.
 */
export async function uninstallClusters(
  clusters: readonly ClusterState[],
  options: TestUninstallOptions = {},
): Promise<void> {
  await allOrFirstFailure(clusters.map((cluster) => uninstallCluster(cluster, options)));
}

/** Uninstalls `cluster` as a `Cluster` resource's delete does, with `force` (a failed test may leave a peering behind). */
export async function uninstallCluster(cluster: ClusterState, options: TestUninstallOptions = {}): Promise<void> {
  await removeCluster({
    name: cluster.name,
    kubeconfig: readFileSync(cluster.kubeconfig, "utf8"),
    kubeconfigInput: `cluster ${cluster.name}: kubeconfig`,
    force: true,
    timeoutMs: 120_000,
    ...(options.keepDefinitions ? { keepDefinitions: true } : {}),
  });
}

/** Scales the control agent of `cluster` and waits until that many of its pods are there and ready. */
export async function scaleAgent(cluster: ClusterState, replicas: number): Promise<void> {
  const kc = adminConfig(cluster);
  await kc
    .makeApiClient(k8s.AppsV1Api)
    .patchNamespacedDeploymentScale(
      { name: AGENT_NAME, namespace: SYSTEM_NAMESPACE, body: { spec: { replicas } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  await poll(
    { step: "test", object: `${replicas} agent pods of ${cluster.name}`, endpoint: cluster.apiServerUrl },
    { timeoutMs: 90_000, intervalMs: 500 },
    async () => {
      const pods = (
        await adminConfig(cluster)
          .makeApiClient(k8s.CoreV1Api)
          .listNamespacedPod({
            namespace: SYSTEM_NAMESPACE,
            labelSelector: `${COMPONENT_LABEL}=${AGENT_NAME}`,
          })
      ).items;
      const ready = pods.filter((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
      return pods.length === replicas && ready.length === replicas
        ? { done: true, value: undefined }
        : { done: false, state: `${pods.length} pods, ${ready.length} ready` };
    },
  );
}
