/**
 * Cluster DNS in every local cluster, as kubeadm deploys it: CoreDNS (the version kubeadm pins,
 * built by the toolchain with the plugins its Corefile uses) as Deployment `coredns` in
 * `kube-system`, behind Service `kube-dns` at the service CIDR's tenth address, which every
 * kubelet gives its pods as their nameserver (`clusterDNS`, node-config.ts). So a pod resolves
 * `<service>.<namespace>.svc.cluster.local`, and its short forms, as in any real cluster.
 *
 * What differs from kubeadm's, and why: no `forward` to an upstream (these clusters reach no
 * outside name server; a name outside `cluster.local` is refused), no `prometheus` (nothing scrapes
 * it), one replica, and no resource requests (they would change what a cluster offers its peers,
 * which tests and benches hold to its nodes' capacity). Forgers are pure; {@link deployClusterDns}
 * applies them.
 */
import * as k8s from "@kubernetes/client-node";
import { Cidr } from "../core/net/cidr.js";
import { applyAddOn, forgeSystemDeployment } from "./add-ons.js";
import { CLUSTER_DOMAIN } from "../core/offloading/dns-names.js";

/** The address of Service `kube-dns`: the tenth of the service CIDR, as kubeadm chooses it. */
export function clusterDnsAddress(serviceCidr: string): string {
  return Cidr.parse(serviceCidr).nth(10);
}

/** CoreDNS's configuration: kubeadm's Corefile, less `forward` and `prometheus` (see the module's comment). */
export const COREFILE = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    cache 30 {
       disable success ${CLUSTER_DOMAIN}
       disable denial ${CLUSTER_DOMAIN}
    }
    loop
    reload
    loadbalance
}
`;

const NAMESPACE = "kube-system";
const labels = { "k8s-app": "kube-dns" };

/** The objects of cluster DNS for a cluster of service CIDR `serviceCidr`, its pods running image `image`. */
export function forgeClusterDns(serviceCidr: string, image: string): k8s.KubernetesObject[] {
  const rbac = "rbac.authorization.k8s.io/v1";
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "coredns", namespace: NAMESPACE } },
    {
      apiVersion: rbac,
      kind: "ClusterRole",
      metadata: { name: "system:coredns" },
      rules: [
        { apiGroups: [""], resources: ["endpoints", "services", "pods", "namespaces"], verbs: ["list", "watch"] },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    } as k8s.V1ClusterRole,
    {
      apiVersion: rbac,
      kind: "ClusterRoleBinding",
      metadata: { name: "system:coredns" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" },
      subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: NAMESPACE }],
    } as k8s.V1ClusterRoleBinding,
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "coredns", namespace: NAMESPACE },
      data: { Corefile: COREFILE },
    } as k8s.V1ConfigMap,
    forgeSystemDeployment("coredns", labels, {
      // Its own name server is the node's: it must not ask itself.
      dnsPolicy: "Default",
      containers: [
        {
          name: "coredns",
          image,
          imagePullPolicy: "Never",
          args: ["-conf", "/etc/coredns/Corefile"],
          ports: [
            { name: "dns", containerPort: 53, protocol: "UDP" },
            { name: "dns-tcp", containerPort: 53, protocol: "TCP" },
          ],
          volumeMounts: [{ name: "config-volume", mountPath: "/etc/coredns", readOnly: true }],
          readinessProbe: { httpGet: { path: "/ready", port: 8181 } },
          livenessProbe: {
            httpGet: { path: "/health", port: 8080 },
            initialDelaySeconds: 60,
            timeoutSeconds: 5,
            failureThreshold: 5,
          },
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { add: ["NET_BIND_SERVICE"], drop: ["ALL"] },
          },
        },
      ],
      volumes: [
        { name: "config-volume", configMap: { name: "coredns", items: [{ key: "Corefile", path: "Corefile" }] } },
      ],
    }),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "kube-dns", namespace: NAMESPACE, labels: { ...labels, "kubernetes.io/name": "CoreDNS" } },
      spec: {
        selector: labels,
        clusterIP: clusterDnsAddress(serviceCidr),
        ports: [
          { name: "dns", port: 53, protocol: "UDP", targetPort: 53 },
          { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 },
        ],
      },
    } as k8s.V1Service,
  ];
}

/**
 * Applies cluster DNS to the cluster of admin kubeconfig `kubeconfig` (server-side apply: a lab
 * brought up again converges). Does not wait for CoreDNS to be ready, as kubeadm does not: a pod
 * that needs a name before then retries, as it would anywhere.
 */
export async function deployClusterDns(kubeconfig: string, serviceCidr: string, image: string): Promise<void> {
  await applyAddOn(kubeconfig, "cluster DNS", forgeClusterDns(serviceCidr, image));
}
