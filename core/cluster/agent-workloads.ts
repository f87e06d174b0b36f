/**
 * The agent's pods and Services, pure (no client): the control Deployment, the gateway Deployment,
 * the route DaemonSet, the auth Service (TCP) and the gateway Service (UDP). One image, three roles
 * chosen by the first argument; the image's entrypoint runs Node on the agent, so manifests pass
 * only `args`. What each pod may do is written here, and checked by unit tests:
 *
 *   control  non-root (65532), read-only root filesystem, no capability, no privilege escalation
 *   gateway  hostNetwork (its tunnels, routes and NAT rules must be the node's, so that every pod of
 *            the node, and the route agent's routes from other nodes, reach it), NET_ADMIN and
 *            NET_RAW only, the TUN device, root; one replica, Recreate
 *   route    hostNetwork (its routes are the node's), NET_ADMIN only, root, on every node
 */
import type * as k8s from "@kubernetes/client-node";
import {
  MANAGED_BY,
  MANAGED_BY_LABEL,
  OFFLOADED_STORAGE_CLASS,
  OFFLOADED_VOLUME_PROVISIONER,
  SYSTEM_NAMESPACE,
} from "../api/index.js";
import { VIRTUAL_NODE_LABEL } from "../virtual-node/node.js";
import {
  AGENT_CONTAINER,
  AGENT_NAME,
  COMPONENT_LABEL,
  componentLabels,
  GATEWAY_NAME,
  CONSUMER_DNS_PORT,
  CONSUMER_DNS_SERVICE,
  KUBELET_PORT,
  ROUTE_NAME,
} from "./agent-components.js";
import { PLACEMENT_PORT, PLACEMENT_SERVICE } from "../api/names.js";

/**
 * How a Service of the agent's meets a cloud's load balancer: the annotations that configure it
 * (a UDP network load balancer, an internal one), which implementation serves it, and who may reach it.
 */
export interface LoadBalancerSettings {
  /** The Service's annotations. */
  readonly annotations?: Readonly<Record<string, string>>;
  /** `spec.loadBalancerClass`: the implementation that serves it, where a cluster has several. */
  readonly loadBalancerClass?: string;
  /** `spec.loadBalancerSourceRanges`: the CIDRs the load balancer lets in. */
  readonly loadBalancerSourceRanges?: readonly string[];
}

/** How a Service is exposed outside the cluster, with its node port when one is fixed. */
export interface ServiceExposure {
  /** `LoadBalancer` or `NodePort`. */
  readonly type: "LoadBalancer" | "NodePort";
  /** The node port to take. @default one the cluster picks */
  readonly nodePort?: number;
  /** The Service's annotations, and under `LoadBalancer` its class and source ranges. */
  readonly loadBalancer?: LoadBalancerSettings;
}

/** How the gateway is exposed: a Service, or the port on its node (no Service). */
export type GatewayExposure = ServiceExposure | { readonly type: "hostPort" };

/** Where the gateway pod keeps wireguard-go's logs and its short-lived key files. */
export const GATEWAY_WORK_DIR = "/var/lib/pulumi-liqo/gateway";

/**
 * The gateway pod's memory limit. wireguard-go's buffer pools grow with the packets queued in it
 * (its queues hold up to 1,024 batches of 64 KiB buffers each way): one tunnel saturated by a
 * single TCP stream reached 211 MiB and was killed by the 256 MiB limit this once had, which cut
 * every flow across it until the gateway restarted it. 1 GiB leaves room for the agent's Node
 * process and a few busy tunnels; `npm run bench -- tunnel` prints wireguard-go's peak.
 */
export const GATEWAY_MEMORY_LIMIT = "1Gi";

/** The unprivileged user and group of the control agent (the image's USER). */
export const AGENT_UID = 65532;

/** Control-plane taints, which a per-node component must tolerate to run on every node. */
const CONTROL_PLANE_TOLERATIONS: k8s.V1Toleration[] = [
  "node-role.kubernetes.io/control-plane",
  "node-role.kubernetes.io/master",
].map((key) => ({ key, operator: "Exists", effect: "NoSchedule" }));

/** The node's name from the downward API: the route agent's own node; the gateway logs it. */
const NODE_NAME_ENV: k8s.V1EnvVar = { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } };

/**
 * The node's address from the downward API: the gateway's answers to what a Service brought it
 * from elsewhere must leave tracked from this address (see the gateway's server reply rule).
 */
const NODE_ADDRESS_ENV: k8s.V1EnvVar = {
  name: "NODE_ADDRESS",
  valueFrom: { fieldRef: { fieldPath: "status.hostIP" } },
};

/**
 * Root with only the given capabilities. Root, because Linux gives a non-root process the
 * capabilities its container adds only as ambient ones, which Kubernetes does not set: `ip`,
 * `iptables` and opening /dev/net/tun would then run without them.
 */
const rootWith = (capabilities: string[]): k8s.V1SecurityContext => ({
  runAsUser: 0,
  runAsNonRoot: false,
  privileged: false,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"], add: capabilities },
});

/** A one-container pod template of component `name`. */
function podTemplate(
  name: string,
  container: k8s.V1Container,
  spec: Partial<k8s.V1PodSpec> = {},
): k8s.V1PodTemplateSpec {
  return {
    metadata: { labels: componentLabels(name) },
    spec: {
      serviceAccountName: name,
      containers: [{ imagePullPolicy: "IfNotPresent", ...container }],
      affinity: REAL_NODES_ONLY,
      ...spec,
    },
  };
}

/**
 * The project's own pods run on the cluster's real nodes, never on a virtual node of its peerings,
 * also one whose taint an admin took off (the route agent's DaemonSet would otherwise put a pod
 * there, which the provider refuses and the virtual node's drain then waits for).
 */
const REAL_NODES_ONLY: k8s.V1Affinity = {
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [{ matchExpressions: [{ key: VIRTUAL_NODE_LABEL, operator: "DoesNotExist" }] }],
    },
  },
};

const selector = (name: string): k8s.V1LabelSelector => ({ matchLabels: { [COMPONENT_LABEL]: name } });
const meta = (name: string): k8s.V1ObjectMeta => ({ name, namespace: SYSTEM_NAMESPACE, labels: componentLabels(name) });

/** The control agent: one replica (two would answer offers and beat hearts twice), Recreate. */
export function forgeControlDeployment(image: string, authPort: number): k8s.V1Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta(AGENT_NAME),
    spec: {
      replicas: 1,
      strategy: { type: "Recreate" },
      selector: selector(AGENT_NAME),
      template: podTemplate(AGENT_NAME, {
        name: AGENT_CONTAINER,
        image,
        args: ["control", "--auth-listen", `0.0.0.0:${authPort}`],
        // The virtual nodes' kubelet API (logs, exec of offloaded pods) is served at the pod's address.
        env: [{ name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } }],
        ports: [
          { name: "auth", containerPort: authPort, protocol: "TCP" },
          { name: "kubelet", containerPort: KUBELET_PORT, protocol: "TCP" },
          { name: "dns", containerPort: CONSUMER_DNS_PORT, protocol: "UDP" },
          { name: "dns-tcp", containerPort: CONSUMER_DNS_PORT, protocol: "TCP" },
        ],
        resources: { requests: { cpu: "50m", memory: "96Mi" }, limits: { memory: "256Mi" } },
        securityContext: {
          runAsUser: AGENT_UID,
          runAsGroup: AGENT_UID,
          runAsNonRoot: true,
          privileged: false,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        },
      }),
    },
  };
}

/**
 * The gateway: one replica, Recreate (two gateways on one node would fight over the port and the
 * interfaces; the old one takes its tunnels down on SIGTERM before the new one starts). Its keys
 * are in Secrets, so a new pod, on any node, has the same ones. NET_RAW is for the probe's ping
 * across the tunnel (a raw ICMP socket) and for iptables' legacy backend.
 */
export function forgeGatewayDeployment(image: string, port: number, exposure: GatewayExposure): k8s.V1Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta(GATEWAY_NAME),
    spec: {
      replicas: 1,
      strategy: { type: "Recreate" },
      selector: selector(GATEWAY_NAME),
      template: podTemplate(
        GATEWAY_NAME,
        {
          name: "gateway",
          image,
          args: ["gateway", "--work-dir", GATEWAY_WORK_DIR],
          env: [NODE_NAME_ENV, NODE_ADDRESS_ENV],
          ports: [
            {
              name: "wireguard",
              containerPort: port,
              protocol: "UDP",
              ...(exposure.type === "hostPort" ? { hostPort: port } : {}),
            },
          ],
          resources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { memory: GATEWAY_MEMORY_LIMIT } },
          securityContext: rootWith(["NET_ADMIN", "NET_RAW"]),
          volumeMounts: [
            { name: "tun", mountPath: "/dev/net/tun" },
            { name: "work", mountPath: GATEWAY_WORK_DIR },
            // wireguard-go's control sockets.
            { name: "wireguard", mountPath: "/var/run/wireguard" },
            // The node's iptables lock, shared with kube-proxy and CNI plugins so that their writes never interleave.
            { name: "xtables-lock", mountPath: "/run/xtables.lock" },
          ],
        },
        {
          hostNetwork: true,
          dnsPolicy: "ClusterFirstWithHostNet",
          // Time to take the tunnels down on SIGTERM (each wireguard-go gets 5 s).
          terminationGracePeriodSeconds: 30,
          volumes: [
            { name: "tun", hostPath: { path: "/dev/net/tun", type: "CharDevice" } },
            { name: "work", emptyDir: {} },
            { name: "wireguard", emptyDir: {} },
            { name: "xtables-lock", hostPath: { path: "/run/xtables.lock", type: "FileOrCreate" } },
          ],
        },
      ),
    },
  };
}

/** The route agent, on every node (control-plane nodes too: their pods reach the remote clusters as well). */
export function forgeRouteDaemonSet(image: string): k8s.V1DaemonSet {
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: meta(ROUTE_NAME),
    spec: {
      selector: selector(ROUTE_NAME),
      updateStrategy: { type: "RollingUpdate" },
      template: podTemplate(
        ROUTE_NAME,
        {
          name: "route",
          image,
          args: ["route"],
          env: [NODE_NAME_ENV],
          resources: { requests: { cpu: "10m", memory: "48Mi" }, limits: { memory: "128Mi" } },
          securityContext: rootWith(["NET_ADMIN"]),
        },
        { hostNetwork: true, dnsPolicy: "ClusterFirstWithHostNet", tolerations: CONTROL_PLANE_TOLERATIONS },
      ),
    },
  };
}

/** A Service of component `name` exposing one port. */
function forgeService(
  name: string,
  port: {
    readonly name: string;
    readonly port: number;
    readonly protocol: "TCP" | "UDP";
    readonly targetPort: string | number;
  },
  exposure: ServiceExposure,
): k8s.V1Service {
  const { annotations, loadBalancerClass, loadBalancerSourceRanges } = exposure.loadBalancer ?? {};
  const balanced = exposure.type === "LoadBalancer";
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { ...meta(name), ...(annotations ? { annotations: { ...annotations } } : {}) },
    spec: {
      type: exposure.type,
      ...(balanced && loadBalancerClass ? { loadBalancerClass } : {}),
      ...(balanced && loadBalancerSourceRanges ? { loadBalancerSourceRanges: [...loadBalancerSourceRanges] } : {}),
      selector: { [COMPONENT_LABEL]: name },
      ports: [
        {
          name: port.name,
          port: port.port,
          protocol: port.protocol,
          targetPort: port.targetPort as never,
          ...(exposure.nodePort !== undefined ? { nodePort: exposure.nodePort } : {}),
        },
      ],
    },
  };
}

/** The auth service's Service (TCP). */
export function forgeAuthService(authPort: number, exposure: ServiceExposure): k8s.V1Service {
  return forgeService(AGENT_NAME, { name: "auth", port: authPort, protocol: "TCP", targetPort: "auth" }, exposure);
}

/**
 * The nameserver of offloaded pods: port 53 of a ClusterIP in front of the control agent's DNS
 * answerer, which tells each consumer's pods by their address (agent/dns).
 */
export function forgeConsumerDnsService(): k8s.V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(CONSUMER_DNS_SERVICE),
    spec: {
      type: "ClusterIP",
      selector: { [COMPONENT_LABEL]: AGENT_NAME },
      ports: [
        { name: "dns", port: 53, protocol: "UDP", targetPort: "dns" as never },
        { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: "dns-tcp" as never },
      ],
    },
  };
}

/** The gateway's Service (UDP), or none when the gateway is reached at the port of its node. */
export function forgeGatewayService(port: number, exposure: GatewayExposure): k8s.V1Service | undefined {
  if (exposure.type === "hostPort") return undefined;
  return forgeService(GATEWAY_NAME, { name: "wireguard", port, protocol: "UDP", targetPort: port }, exposure);
}

/**
 * Whether the Service `existing` must be deleted before `wanted` is applied: the API server lets no
 * Service change its load-balancer class, so another class (or none) is another Service, whose
 * address is then read back anew.
 */
export function mustRecreateService(existing: k8s.V1Service | undefined, wanted: k8s.V1Service): boolean {
  return existing !== undefined && (existing.spec?.loadBalancerClass ?? "") !== (wanted.spec?.loadBalancerClass ?? "");
}

/**
 * The ClusterIP Service the API server calls the agent's placement webhook through, where it serves
 * no MutatingAdmissionPolicy (../offloading/placement-webhook.ts): port 443, as webhooks are dialed.
 */
export function forgePlacementService(): k8s.V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(PLACEMENT_SERVICE),
    spec: {
      type: "ClusterIP",
      selector: { [COMPONENT_LABEL]: AGENT_NAME },
      ports: [{ name: "placement", port: 443, protocol: "TCP", targetPort: PLACEMENT_PORT as never }],
    },
  };
}

/**
 * The StorageClass of claims that follow their pods to a provider, installed on every cluster; the
 * control agent provisions it (core/offloading/claim-reflection.ts).
 */
export function forgeOffloadedStorageClass(): k8s.V1StorageClass {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: OFFLOADED_STORAGE_CLASS, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
    provisioner: OFFLOADED_VOLUME_PROVISIONER,
    // The provider is known only once the claim's first pod has a node, and only a virtual node has
    // one: the scheduler puts a pod of such a claim on a virtual node, whatever its placement allows.
    volumeBindingMode: "WaitForFirstConsumer",
    allowedTopologies: [{ matchLabelExpressions: [{ key: VIRTUAL_NODE_LABEL, values: ["true"] }] }],
    reclaimPolicy: "Delete",
  };
}
