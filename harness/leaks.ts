/**
 * What this project leaves in a cluster: every object of its own (namespaces, CRDs, CSRs, virtual
 * nodes and their leases, RBAC in any namespace, its StorageClass and volumes), and what a tunnel leaves in a cluster's network namespace. A
 * test asserts the lists are empty after destroy or unpeer.
 */
import * as k8s from "@kubernetes/client-node";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { wireguardSocketPath } from "../agent/gateway/index.js";
import { bridgeName, namespacePrefix, type ClusterState } from "../local-cluster/lab.js";
import { run } from "../host/exec.js";
import { isRunning, type ProcessRecord } from "../host/processes.js";
import { API_GROUP, MANAGED_BY, MANAGED_BY_LABEL, SYSTEM_NAMESPACE } from "../core/api/index.js";
import { runIn } from "../host/exec.js";
import { namespacePids } from "../host/namespaces.js";
import { PEER_RULE_TABLES } from "../core/network-fabric/gateway-nat.js";
import { listPlacements } from "../core/cluster/leftover-placements.js";
import { loadKubeconfigFile } from "../core/kube/client.js";

/** Names of every object of this project in the cluster of `kubeconfigPath`. */
export async function projectTraces(kubeconfigPath: string): Promise<string[]> {
  const kc = loadKubeconfigFile(kubeconfigPath);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const selector = { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}` };
  const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const [namespaces, nodes, leases, csrs, crds, roles, bindings, namespacedRoles, namespacedBindings, placements] =
    await Promise.all([
      core.listNamespace(),
      core.listNode(selector),
      kc.makeApiClient(k8s.CoordinationV1Api).listNamespacedLease({ namespace: "kube-node-lease", ...selector }),
      kc.makeApiClient(k8s.CertificatesV1Api).listCertificateSigningRequest(selector),
      kc.makeApiClient(k8s.ApiextensionsV1Api).listCustomResourceDefinition(),
      rbac.listClusterRole(selector),
      rbac.listClusterRoleBinding(selector),
      rbac.listRoleForAllNamespaces(selector),
      rbac.listRoleBindingForAllNamespaces(selector),
      listPlacements(kc, "test"),
    ]);
  const guards = await k8s.KubernetesObjectApi.makeApiClient(kc).list(
    "admissionregistration.k8s.io/v1",
    "ValidatingAdmissionPolicy",
    ...[undefined, undefined, undefined, undefined, undefined],
    `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
  );
  const [storageClasses, volumes] = await Promise.all([
    kc.makeApiClient(k8s.StorageV1Api).listStorageClass(selector),
    core.listPersistentVolume(selector),
  ]);
  return [
    ...namespaces.items
      .filter(
        (n) => n.metadata?.name?.startsWith("pulumi-liqo") || n.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY,
      )
      .map((n) => `namespace ${n.metadata?.name}`),
    ...nodes.items.map((n) => `node ${n.metadata?.name}`),
    ...leases.items.map((l) => `lease ${l.metadata?.name}`),
    ...csrs.items.map((c) => `csr ${c.metadata?.name}`),
    ...crds.items.filter((c) => c.spec.group === API_GROUP).map((c) => `crd ${c.metadata?.name}`),
    ...roles.items.map((r) => `clusterrole ${r.metadata?.name}`),
    ...bindings.items.map((b) => `clusterrolebinding ${b.metadata?.name}`),
    ...namespacedRoles.items.map((r) => `role ${r.metadata?.namespace}/${r.metadata?.name}`),
    ...namespacedBindings.items.map((b) => `rolebinding ${b.metadata?.namespace}/${b.metadata?.name}`),
    ...placements.map((p) => `${p.kind.toLowerCase()} ${p.name}`),
    ...guards.items.map((g) => `validatingadmissionpolicy ${g.metadata?.name}`),
    ...storageClasses.items.map((c) => `storageclass ${c.metadata?.name}`),
    ...volumes.items.map((v) => `persistentvolume ${v.metadata?.name}`),
  ];
}

/**
 * What a tunnel may leave in a local cluster's namespace and API: WireGuard links and their
 * wireguard-go processes, routes into them, the fabric's nft tables, policy rules and tagged rules, the
 * gateways' key Secrets, and the control sockets of `ifnames` (the socket directory is shared by
 * every namespace, so only named interfaces are checked there). Empty when nothing is left.
 */
export async function tunnelTraces(cluster: ClusterState, ifnames: readonly string[] = []): Promise<string[]> {
  const traces: string[] = [];
  const links = await runIn(cluster.netns, "ip", ["-o", "link", "show"]);
  traces.push(...[...links.matchAll(/^\d+: (lqw[0-9a-f]+)/gm)].map((m) => `link ${m[1]}`));
  for (const pid of await namespacePids(cluster.netns)) {
    const argv = (() => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      } catch {
        return [];
      }
    })();
    if (argv[0]?.endsWith("wireguard-go")) traces.push(`process wireguard-go ${argv.at(-2) ?? ""} (pid ${pid})`);
  }
  traces.push(
    ...(await runIn(cluster.netns, "ip", ["route", "show", "table", "all"]))
      .split("\n")
      .filter((line) => line.includes(" dev lqw"))
      .map((line) => `route ${line}`),
  );
  traces.push(
    ...(await runIn(cluster.netns, "ip", ["rule", "show"]))
      .split("\n")
      .filter((line) => line.includes("fwmark"))
      .map((line) => `rule ${line}`),
  );
  traces.push(
    ...(await runIn(cluster.netns, "nft", ["list", "tables"]))
      .split("\n")
      .filter((line) => line.includes(" pulumi-liqo-"))
      .map((line) => `nft ${line}`),
  );
  for (const table of PEER_RULE_TABLES) {
    traces.push(
      ...(await runIn(cluster.netns, "iptables", ["-w", "-t", table, "-S"]))
        .split("\n")
        .filter((line) => line.includes("pulumi-liqo:"))
        .map((line) => `iptables -t ${table} ${line}`),
    );
  }
  traces.push(
    ...ifnames
      .filter((ifname) => existsSync(wireguardSocketPath(ifname)))
      .map((ifname) => `socket ${wireguardSocketPath(ifname)}`),
  );
  const kc = loadKubeconfigFile(cluster.kubeconfig);
  const secrets = await kc
    .makeApiClient(k8s.CoreV1Api)
    .listNamespacedSecret({ namespace: SYSTEM_NAMESPACE })
    .catch(() => ({ items: [] as k8s.V1Secret[] }));
  traces.push(
    ...secrets.items
      .map((s) => s.metadata?.name ?? "")
      .filter((name) => name.startsWith("wireguard-"))
      .map((name) => `secret ${SYSTEM_NAMESPACE}/${name}`),
  );
  return traces;
}

/**
 * What of lab `name` (under `root`) exists on the host right now: its namespaces, its bridge and
 * veth links, any of `records` still running (a lab's processes and supervisors), its directory.
 * Empty when nothing is left.
 */
export async function labTraces(name: string, root: string, records: readonly ProcessRecord[]): Promise<string[]> {
  const found: string[] = [];
  for (const ns of (await run("ip", ["netns", "list"])).split("\n"))
    if (ns.startsWith(namespacePrefix(name))) found.push(`namespace ${ns}`);
  for (const line of (await run("ip", ["-o", "link", "show"])).split("\n")) {
    const link = line.split(":")[1]?.trim().split("@")[0] ?? "";
    if (link === bridgeName(name) || link.startsWith(`${bridgeName(name)}-`)) found.push(`link ${link}`);
  }
  for (const r of records) if (isRunning(r)) found.push(`process ${r.name} ${r.pid}`);
  // What the directory holds, so that a failure says what came back (and who wrote it).
  if (existsSync(join(root, name)))
    found.push(
      `directory ${join(root, name)} holding ${readdirSync(join(root, name), { recursive: true }).slice(0, 20).join(", ")}`,
    );
  return found;
}
