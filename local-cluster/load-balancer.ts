/**
 * The local clusters' load balancer: MetalLB in L2 mode, as on a bare-metal or kind cluster, so that
 * a Service of type LoadBalancer (the product's default exposure) gets an address other clusters
 * reach. Its controller gives each such Service an address from the cluster's own range of the lab
 * subnet (an `IPAddressPool`); its speaker on node 1, the node on the lab bridge, answers ARP for
 * that address on its lab interface `eth0` (an `L2Advertisement` restricted to that node and
 * interface: the other nodes sit on the cluster's private node LAN); kube-proxy's rules for the
 * Service's `status.loadBalancer.ingress` then take the traffic to a pod.
 *
 * The CRDs and RBAC are MetalLB's own YAML from the module the toolchain built it from
 * (`$LIQO_METALLB_HOME/config`), put in namespace `metallb-system` as its kustomization does; the
 * controller Deployment and speaker DaemonSet follow its `config/controllers`, with these
 * differences: no memberlist (no `ml-bindaddr`: the speakers elect the announcing node from the
 * nodes' conditions, and only node 1 may announce anyway), no webhook (`--webhook-mode=disabled`,
 * so no certificate to make and rotate, and the bgppeers CRD goes without its conversion-webhook
 * patch: BGP is not used), no resource requests (they would change what a cluster offers its peers,
 * as with cluster DNS). Forgers are pure; {@link deployLoadBalancer} applies them.
 */
import type * as k8s from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadAll } from "js-yaml";
import { addOnApplier } from "./add-ons.js";
import { poll } from "../core/wait/poll.js";
import { metallbHome } from "../image/build.js";

/** The namespace MetalLB runs in, as its manifests name it. */
export const METALLB_NAMESPACE = "metallb-system";

/** The interface node 1 has on the lab bridge: where the speaker answers ARP. */
export const LAB_INTERFACE = "eth0";

/** The name of the pool and of the advertisement each cluster gets. */
export const POOL_NAME = "lab";

/** The images MetalLB runs from. */
export interface MetallbImages {
  /** The controller's image (entrypoint /controller). */
  readonly controller: string;
  /** The speaker's image (entrypoint /speaker). */
  readonly speaker: string;
}

/** What a cluster's MetalLB is made for. */
export interface LoadBalancedCluster {
  /** Cluster name. */
  readonly name: string;
  /** Its addresses, `first-last` on the lab subnet. */
  readonly loadBalancerAddresses: string;
  /** The node on the lab bridge, which announces them. */
  readonly announcingNode: string;
}

/** The objects of the YAML files a kustomization in `dir` lists under `resources` (files only, in its order). */
function kustomizationObjects(dir: string): k8s.KubernetesObject[] {
  const kustomization = loadAll(readFileSync(join(dir, "kustomization.yaml"), "utf8"))[0] as { resources: string[] };
  return kustomization.resources.flatMap((file) =>
    (loadAll(readFileSync(join(dir, file), "utf8")) as (k8s.KubernetesObject | null)[]).filter((o) => o !== null),
  );
}

/** The kinds that live in no namespace; every other kind of MetalLB's manifests goes into its namespace. */
const CLUSTER_SCOPED = new Set(["CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "Namespace"]);

/**
 * MetalLB's CRDs and RBAC from the module's `config/` in `home` (`crd` first, then `rbac`), in
 * `metallb-system` as its kustomization's namespace transformer puts them: the namespaced objects,
 * and the ServiceAccounts the bindings name.
 */
export function moduleManifests(home: string): k8s.KubernetesObject[] {
  const objects = ["crd", "rbac"].flatMap((dir) => kustomizationObjects(join(home, "config", dir)));
  return objects.map((object) => {
    const namespaced = CLUSTER_SCOPED.has(object.kind ?? "")
      ? object
      : { ...object, metadata: { ...object.metadata, namespace: METALLB_NAMESPACE } };
    const binding = namespaced as k8s.V1RoleBinding;
    return binding.subjects
      ? {
          ...binding,
          subjects: binding.subjects.map((s) =>
            s.kind === "ServiceAccount" ? { ...s, namespace: METALLB_NAMESPACE } : s,
          ),
        }
      : namespaced;
  });
}

const labels = (component: string): Record<string, string> => ({ app: "metallb", component });

/** The port of MetalLB's metrics listener, which its manifests probe. */
export const METALLB_MONITORING_PORT = 7472;

/** The probes MetalLB's manifests give both: its metrics page answers. */
function probes(): Pick<k8s.V1Container, "livenessProbe" | "readinessProbe" | "ports"> {
  const probe: k8s.V1Probe = {
    httpGet: { path: "/metrics", port: "monitoring" },
    initialDelaySeconds: 10,
    periodSeconds: 10,
    timeoutSeconds: 1,
    failureThreshold: 3,
  };
  return {
    ports: [{ name: "monitoring", containerPort: METALLB_MONITORING_PORT }],
    livenessProbe: probe,
    readinessProbe: probe,
  };
}

const podName: k8s.V1EnvVar = { name: "METALLB_POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } };

/** MetalLB's controller (assigns addresses) and speaker (announces them), running `images`. */
export function forgeMetallbWorkloads(images: MetallbImages): k8s.KubernetesObject[] {
  const controller: k8s.V1Deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "controller", namespace: METALLB_NAMESPACE, labels: labels("controller") },
    spec: {
      revisionHistoryLimit: 3,
      selector: { matchLabels: labels("controller") },
      template: {
        metadata: { labels: labels("controller") },
        spec: {
          serviceAccountName: "controller",
          terminationGracePeriodSeconds: 0,
          securityContext: { runAsNonRoot: true, runAsUser: 65534, fsGroup: 65534 },
          containers: [
            {
              name: "controller",
              image: images.controller,
              imagePullPolicy: "Never",
              args: [`--port=${METALLB_MONITORING_PORT}`, "--log-level=info", "--webhook-mode=disabled"],
              env: [podName],
              ...probes(),
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ["ALL"] },
              },
            },
          ],
        },
      },
    },
  };
  const speaker: k8s.V1DaemonSet = {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: "speaker", namespace: METALLB_NAMESPACE, labels: labels("speaker") },
    spec: {
      selector: { matchLabels: labels("speaker") },
      template: {
        metadata: { labels: labels("speaker") },
        spec: {
          serviceAccountName: "speaker",
          // It answers ARP on the node's own interfaces.
          hostNetwork: true,
          terminationGracePeriodSeconds: 2,
          tolerations: [
            { key: "node-role.kubernetes.io/master", operator: "Exists", effect: "NoSchedule" },
            { key: "node-role.kubernetes.io/control-plane", operator: "Exists", effect: "NoSchedule" },
          ],
          containers: [
            {
              name: "speaker",
              image: images.speaker,
              imagePullPolicy: "Never",
              args: [`--port=${METALLB_MONITORING_PORT}`, "--log-level=info"],
              env: [
                { name: "METALLB_NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
                podName,
                // Where its metrics listen: the node's address (it runs on the node's network).
                { name: "METALLB_HOST", valueFrom: { fieldRef: { fieldPath: "status.hostIP" } } },
              ],
              ...probes(),
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                // Raw sockets: ARP requests in, answers out.
                capabilities: { add: ["NET_RAW"], drop: ["ALL"] },
              },
            },
          ],
        },
      },
    },
  };
  return [controller, speaker];
}

/** The cluster's pool (its range of the lab subnet) and its announcement, from node 1's lab interface only. */
export function forgeLabPool(cluster: LoadBalancedCluster): k8s.KubernetesObject[] {
  const metadata = { name: POOL_NAME, namespace: METALLB_NAMESPACE };
  return [
    {
      apiVersion: "metallb.io/v1beta1",
      kind: "IPAddressPool",
      metadata,
      spec: { addresses: [cluster.loadBalancerAddresses] },
    } as k8s.KubernetesObject,
    {
      apiVersion: "metallb.io/v1beta1",
      kind: "L2Advertisement",
      metadata,
      spec: {
        ipAddressPools: [POOL_NAME],
        interfaces: [LAB_INTERFACE],
        nodeSelectors: [{ matchLabels: { "kubernetes.io/hostname": cluster.announcingNode } }],
      },
    } as k8s.KubernetesObject,
  ];
}

/** How long the pool may wait for MetalLB's CRDs to be served, after they are applied. */
const CRDS_SERVED_TIMEOUT_MS = 60_000;

/**
 * Applies MetalLB to the cluster of admin kubeconfig `kubeconfig` (server-side apply: a lab brought
 * up again converges): its namespace, CRDs and RBAC, controller and speaker, then the cluster's pool
 * and advertisement once the API server serves their kinds. Does not wait for MetalLB to run, as
 * for cluster DNS: a Service made before then gets its address when the controller starts.
 */
export async function deployLoadBalancer(
  kubeconfig: string,
  cluster: LoadBalancedCluster,
  images: MetallbImages,
): Promise<void> {
  const { server, apply } = addOnApplier(kubeconfig, "load balancer");
  // Privileged, as MetalLB's own manifests label it: its speaker runs on the host's network, which
  // a cluster enforcing a Pod Security level by default would refuse.
  const namespace: k8s.V1Namespace = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: METALLB_NAMESPACE, labels: { "pod-security.kubernetes.io/enforce": "privileged" } },
  };
  for (const object of [namespace, ...moduleManifests(metallbHome()), ...forgeMetallbWorkloads(images)])
    await apply(object);
  // A CRD just made is served a moment later: until then the API server does not know the kind.
  for (const object of forgeLabPool(cluster))
    await poll(
      { step: `load balancer of cluster ${cluster.name}`, object: `${object.kind} ${POOL_NAME}`, endpoint: server },
      { timeoutMs: CRDS_SERVED_TIMEOUT_MS, intervalMs: 250 },
      async () => ({ done: true, value: await apply(object) }),
    );
}
