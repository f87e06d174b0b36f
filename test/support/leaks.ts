/**
 * What this project leaves in a cluster: every object of its own (namespaces, CRDs, CSRs, virtual
 * nodes and their leases, RBAC). A test asserts the list is empty after destroy or unpeer.
 */
import * as k8s from "@kubernetes/client-node";
import { API_GROUP, MANAGED_BY, MANAGED_BY_LABEL } from "../../provider/api/index.js";

/** Names of every object of this project in the cluster of `kubeconfigPath`. */
export async function projectTraces(kubeconfigPath: string): Promise<string[]> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const selector = { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}` };
  const [namespaces, nodes, leases, csrs, crds, roles, bindings, kubeSystemBindings] = await Promise.all([
    core.listNamespace(),
    core.listNode(selector),
    kc.makeApiClient(k8s.CoordinationV1Api).listNamespacedLease({ namespace: "kube-node-lease", ...selector }),
    kc.makeApiClient(k8s.CertificatesV1Api).listCertificateSigningRequest(selector),
    kc.makeApiClient(k8s.ApiextensionsV1Api).listCustomResourceDefinition(),
    kc.makeApiClient(k8s.RbacAuthorizationV1Api).listClusterRole(selector),
    kc.makeApiClient(k8s.RbacAuthorizationV1Api).listClusterRoleBinding(selector),
    kc.makeApiClient(k8s.RbacAuthorizationV1Api).listNamespacedRoleBinding({ namespace: "kube-system", ...selector }),
  ]);
  return [
    ...namespaces.items.filter((n) => n.metadata?.name?.startsWith("pulumi-liqo")).map((n) => `namespace ${n.metadata?.name}`),
    ...nodes.items.map((n) => `node ${n.metadata?.name}`),
    ...leases.items.map((l) => `lease ${l.metadata?.name}`),
    ...csrs.items.map((c) => `csr ${c.metadata?.name}`),
    ...crds.items.filter((c) => c.spec.group === API_GROUP).map((c) => `crd ${c.metadata?.name}`),
    ...roles.items.map((r) => `clusterrole ${r.metadata?.name}`),
    ...bindings.items.map((b) => `clusterrolebinding ${b.metadata?.name}`),
    ...kubeSystemBindings.items.map((b) => `rolebinding kube-system/${b.metadata?.name}`),
  ];
}
