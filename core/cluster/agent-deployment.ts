/**
 * The agent as a cluster runs it: the control Deployment, the gateway Deployment and the route
 * DaemonSet from one image, each with its own ServiceAccount and least-privilege RBAC
 * (agent-rbac.ts), and the Services exposing the auth service and the gateway as `Cluster`'s
 * inputs say (agent-workloads.ts). Pure `forge*` builders and one idempotent apply.
 */
import * as k8s from "@kubernetes/client-node";
import { MANAGED_BY, MANAGED_BY_LABEL, SYSTEM_NAMESPACE } from "../api/names.js";
import { deleteOptional, describeFailure, ensureObject, readOptional, serverOf } from "../kube/client.js";
import { AGENT_NAME, GATEWAY_NAME } from "./agent-components.js";
import { poll } from "../wait/poll.js";
import { forgeAgentRbac, RBAC_COMPONENTS, UNBOUND_CLUSTER_ROLES } from "./agent-rbac.js";
import { OFFLOADED_STORAGE_CLASS, VOLUME_VIRTUAL_NODE_LABEL } from "../api/offloading.js";
import {
  forgeAuthService,
  forgeConsumerDnsService,
  forgeOffloadedStorageClass,
  forgeControlDeployment,
  forgeGatewayDeployment,
  forgeGatewayService,
  forgeRouteDaemonSet,
  mustRecreateService,
  type GatewayExposure,
  type ServiceExposure,
} from "./agent-workloads.js";

export { AGENT_NAME } from "./agent-components.js";

/**
 * Node flags of the agent: a 1 MB young generation instead of the default 16 MB one. The agent's
 * work is small and steady, so a small nursery costs little time and keeps its resident memory
 * about 25 MB lower (measured with process.memoryUsage after loading its modules).
 */
export const AGENT_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=1"];

/** How the agent is deployed. */
export interface AgentDeploymentSpec {
  /** The agent image (`npm run image`), whose entrypoint runs the agent: the manifests pass the role. */
  readonly image: string;
  /** The auth service: its port (in the container and on the Service) and how the Service is exposed. */
  readonly auth: { readonly port: number; readonly exposure: ServiceExposure };
  /** The gateway: the UDP port it serves on (on its node) and how it is exposed. */
  readonly gateway: { readonly port: number; readonly exposure: GatewayExposure };
}

/** How long a Service whose class changes may take to go: a cloud removes its load balancer first. */
const SERVICE_GONE_TIMEOUT_MS = 120_000;

/** Every object of the agent's deployment, in apply order: RBAC, then workloads, then Services, then the StorageClass it serves. */
export function forgeAgentDeployment(spec: AgentDeploymentSpec): k8s.KubernetesObject[] {
  const gatewayService = forgeGatewayService(spec.gateway.port, spec.gateway.exposure);
  return [
    ...forgeAgentRbac(),
    forgeControlDeployment(spec.image, spec.auth.port),
    forgeGatewayDeployment(spec.image, spec.gateway.port, spec.gateway.exposure),
    forgeRouteDaemonSet(spec.image),
    forgeAuthService(spec.auth.port, spec.auth.exposure),
    ...(gatewayService ? [gatewayService] : []),
    forgeConsumerDnsService(),
    forgeOffloadedStorageClass(),
  ];
}

/** Applies the agent's deployment (server-side apply: a second run converges; a new image rolls the pods in place). */
export async function ensureAgentDeployment(kc: k8s.KubeConfig, spec: AgentDeploymentSpec): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  for (const object of forgeAgentDeployment(spec)) {
    if (object.kind === "Service") {
      const at = { name: object.metadata!.name!, namespace: SYSTEM_NAMESPACE };
      const step = `cluster: replacing the agent's Service ${at.namespace}/${at.name} for its new load-balancer class`;
      const existing = await readOptional(() => core.readNamespacedService(at)).catch(
        describeFailure(step, serverOf(kc)),
      );
      if (mustRecreateService(existing, object as k8s.V1Service)) {
        await deleteOptional(() => core.deleteNamespacedService(at)).catch(describeFailure(step, serverOf(kc)));
        // A cloud's controller holds the Service (a finalizer) until its load balancer is gone.
        await poll(
          { step, object: `Service ${at.namespace}/${at.name} gone`, endpoint: serverOf(kc) },
          { timeoutMs: SERVICE_GONE_TIMEOUT_MS, intervalMs: 500 },
          async () =>
            (await readOptional(() => core.readNamespacedService(at)))
              ? { done: false, state: "still terminating" }
              : { done: true, value: undefined },
        );
      }
    }
    await ensureObject(kc, object).catch(
      describeFailure(`cluster: applying the agent's ${object.kind} ${object.metadata?.name}`, serverOf(kc)),
    );
  }
}

/** The agent's objects as a cluster holds them (each undefined when absent), as an import reads them. */
export interface DeployedAgent {
  readonly control?: k8s.V1Deployment;
  readonly gateway?: k8s.V1Deployment;
  readonly authService?: k8s.V1Service;
  readonly gatewayService?: k8s.V1Service;
}

/** The agent's Deployments and Services as the cluster holds them (absent ones undefined). Writes nothing. */
export async function readAgentDeployment(kc: k8s.KubeConfig): Promise<DeployedAgent> {
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const read = <T>(what: string, name: string, get: (at: { name: string; namespace: string }) => Promise<T>) =>
    readOptional(() => get({ name, namespace: SYSTEM_NAMESPACE })).catch(
      describeFailure(`cluster: reading the agent's ${what} ${SYSTEM_NAMESPACE}/${name}`, serverOf(kc)),
    );
  const [control, gateway, authService, gatewayService] = await Promise.all([
    read("Deployment", AGENT_NAME, (at) => apps.readNamespacedDeployment(at)),
    read("Deployment", GATEWAY_NAME, (at) => apps.readNamespacedDeployment(at)),
    read("Service", AGENT_NAME, (at) => core.readNamespacedService(at)),
    read("Service", GATEWAY_NAME, (at) => core.readNamespacedService(at)),
  ]);
  return {
    ...(control ? { control } : {}),
    ...(gateway ? { gateway } : {}),
    ...(authService ? { authService } : {}),
    ...(gatewayService ? { gatewayService } : {}),
  };
}

/**
 * Removes the StorageClass the agent served, and the volumes it made for claims on virtual nodes
 * (their data went with the providers' remote namespaces); a volume still bound to a claim goes
 * once that claim does.
 */
async function deleteOffloadedStorage(kc: k8s.KubeConfig): Promise<void> {
  const fail = describeFailure("cluster: removing the offloaded StorageClass and its volumes", serverOf(kc));
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const volumes = await core
    .listPersistentVolume({ labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY},${VOLUME_VIRTUAL_NODE_LABEL}` })
    .catch(fail);
  for (const volume of volumes.items)
    await deleteOptional(() => core.deletePersistentVolume({ name: volume.metadata!.name! })).catch(fail);
  await deleteOptional(() =>
    kc.makeApiClient(k8s.StorageV1Api).deleteStorageClass({ name: OFFLOADED_STORAGE_CLASS }),
  ).catch(fail);
}

/**
 * Removes what the agent's deployment keeps outside the system namespace (what is inside goes with
 * the namespace): its RBAC, and the offloaded StorageClass with its volumes.
 */
export async function deleteAgentClusterObjects(kc: k8s.KubeConfig): Promise<void> {
  await deleteAgentClusterRbac(kc);
  await deleteOffloadedStorage(kc);
}

/** Removes the agent's RBAC outside the system namespace. */
async function deleteAgentClusterRbac(kc: k8s.KubeConfig): Promise<void> {
  const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const fail = describeFailure("cluster: removing the agent's ClusterRoles and bindings", serverOf(kc));
  await deleteOptional(() => rbac.deleteNamespacedRoleBinding({ name: AGENT_NAME, namespace: "kube-system" })).catch(
    fail,
  );
  for (const name of RBAC_COMPONENTS) {
    await deleteOptional(() => rbac.deleteClusterRoleBinding({ name })).catch(fail);
    await deleteOptional(() => rbac.deleteClusterRole({ name })).catch(fail);
  }
  for (const name of UNBOUND_CLUSTER_ROLES) await deleteOptional(() => rbac.deleteClusterRole({ name })).catch(fail);
}
