/**
 * Resource metrics in every local cluster, as most clusters have them: metrics-server (built by the
 * toolchain) as Deployment `metrics-server` in `kube-system`, serving `metrics.k8s.io` through the
 * API server's aggregation layer (control-plane.ts sets it up), scraping each node's kubelet
 * `/metrics/resource` at the port the node reports. So `kubectl top` and a HorizontalPodAutoscaler
 * work, and a provider's metrics API tells a consumer what its offloaded pods use.
 *
 * What differs from upstream's manifest, and why: `--kubelet-insecure-tls`, as kind, minikube and
 * k3s run it (the nodes' kubelets serve certificates of their own, no CA signs them), no resource
 * requests (they would change what a cluster offers its peers, as for cluster DNS), one replica.
 * Forgers are pure; {@link deployMetricsServer} applies them.
 */
import type * as k8s from "@kubernetes/client-node";
import { applyAddOn, forgeSystemDeployment } from "./add-ons.js";

const NAMESPACE = "kube-system";
const NAME = "metrics-server";
const labels = { "k8s-app": NAME };
const rbac = "rbac.authorization.k8s.io/v1";

/** How often metrics-server reads the kubelets: its default, the smallest the HPA's sync (15 s) makes use of. */
export const METRIC_RESOLUTION = "15s";

/** The objects of metrics-server, its pod running image `image`. */
export function forgeMetricsServer(image: string): k8s.KubernetesObject[] {
  const binding = (kind: "ClusterRoleBinding" | "RoleBinding", name: string, role: string, namespace?: string) => ({
    apiVersion: rbac,
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}) },
    roleRef: {
      apiGroup: "rbac.authorization.k8s.io",
      kind: kind === "RoleBinding" ? "Role" : "ClusterRole",
      name: role,
    },
    subjects: [{ kind: "ServiceAccount", name: NAME, namespace: NAMESPACE }],
  });
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: NAME, namespace: NAMESPACE } },
    {
      apiVersion: rbac,
      kind: "ClusterRole",
      metadata: {
        name: "system:aggregated-metrics-reader",
        labels: {
          "rbac.authorization.k8s.io/aggregate-to-admin": "true",
          "rbac.authorization.k8s.io/aggregate-to-edit": "true",
          "rbac.authorization.k8s.io/aggregate-to-view": "true",
        },
      },
      rules: [{ apiGroups: ["metrics.k8s.io"], resources: ["pods", "nodes"], verbs: ["get", "list", "watch"] }],
    } as k8s.V1ClusterRole,
    {
      apiVersion: rbac,
      kind: "ClusterRole",
      metadata: { name: "system:metrics-server" },
      rules: [
        { apiGroups: [""], resources: ["nodes/metrics"], verbs: ["get"] },
        { apiGroups: [""], resources: ["pods", "nodes"], verbs: ["get", "list", "watch"] },
      ],
    } as k8s.V1ClusterRole,
    binding("RoleBinding", "metrics-server-auth-reader", "extension-apiserver-authentication-reader", NAMESPACE),
    binding("ClusterRoleBinding", "metrics-server:system:auth-delegator", "system:auth-delegator"),
    binding("ClusterRoleBinding", "system:metrics-server", "system:metrics-server"),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: NAME, namespace: NAMESPACE, labels },
      spec: { selector: labels, ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: "https" }] },
    } as k8s.V1Service,
    forgeSystemDeployment(NAME, labels, {
      containers: [
        {
          name: NAME,
          image,
          imagePullPolicy: "Never",
          args: [
            "--cert-dir=/tmp",
            "--secure-port=10250",
            "--kubelet-preferred-address-types=InternalIP",
            "--kubelet-use-node-status-port",
            "--kubelet-insecure-tls",
            `--metric-resolution=${METRIC_RESOLUTION}`,
          ],
          ports: [{ name: "https", containerPort: 10250, protocol: "TCP" }],
          readinessProbe: { httpGet: { path: "/readyz", port: "https", scheme: "HTTPS" }, periodSeconds: 10 },
          livenessProbe: { httpGet: { path: "/livez", port: "https", scheme: "HTTPS" }, periodSeconds: 10 },
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            runAsNonRoot: true,
            runAsUser: 1000,
            capabilities: { drop: ["ALL"] },
          },
          volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
        },
      ],
      volumes: [{ name: "tmp", emptyDir: {} }],
    }),
    {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: "v1beta1.metrics.k8s.io", labels },
      spec: {
        group: "metrics.k8s.io",
        version: "v1beta1",
        service: { name: NAME, namespace: NAMESPACE, port: 443 },
        // Its serving certificate is its own, made at start (--cert-dir), as upstream's manifest has it.
        insecureSkipTLSVerify: true,
        groupPriorityMinimum: 100,
        versionPriority: 100,
      },
    } as k8s.KubernetesObject,
  ];
}

/** Applies metrics-server to the cluster of `kubeconfig`; its pod starts on its own. */
export async function deployMetricsServer(kubeconfig: string, image: string): Promise<void> {
  await applyAddOn(kubeconfig, "metrics-server", forgeMetricsServer(image));
}
