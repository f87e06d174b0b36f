/**
 * What a `Cluster` installs in its Kubernetes cluster so that it can take part in peerings: the
 * system namespace, the project's CustomResourceDefinitions, the cluster's stable identity and the
 * auth service's TLS material; and the inverse, {@link uninstallCluster}, which leaves nothing.
 *
 * Every `ensure*` step is idempotent: run twice (a retried `pulumi up`, or a run after a crash) it
 * converges on the same objects, and it keeps what must stay stable (the cluster id, a TLS
 * certificate that still fits).
 */
import * as k8s from "@kubernetes/client-node";
import { randomBytes, X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import { forgeCertificateAuthority, forgeServingCertificate } from "../pki/x509.js";
import {
  API_GROUP,
  API_VERSION,
  AUTH_TLS_SECRET,
  CLUSTER_IDENTITY_CONFIGMAP,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  SYSTEM_NAMESPACE,
  describeOwner,
  isClusterId,
  mayTake,
} from "../api/names.js";
import { forgeCustomResourceDefinitions } from "../api/crds.js";
import { deleteOptional, describeFailure, ensureObject, readOptional, serverOf } from "../kube/client.js";
import { statusOf } from "../kube/errors.js";
import { deleteNamespaceAndPods } from "../kube/namespaces.js";
import { poll, type PollOptions } from "../wait/poll.js";
import { removeAllPlacements } from "./leftover-placements.js";
import { deleteRemoteNamespaceGuard } from "./remote-namespace-guard.js";
import { forgePlacementService } from "./agent-workloads.js";
import { PLACEMENT_SERVICE, PLACEMENT_TLS_NAME, PLACEMENT_TLS_SECRET } from "../api/names.js";

/** Step name used in errors and waits of this module. */
const STEP = "cluster install";

/** Labels every object installed here carries, so that uninstall and leak checks find them. */
const MANAGED_LABELS = { [MANAGED_BY_LABEL]: MANAGED_BY } as const;

/** Knobs shared by the steps that wait. */
export interface InstallWaitOptions {
  /** How long to wait for the cluster to settle (CRDs established, namespaces gone). @default 120000 */
  readonly timeoutMs?: number;
  /** The operation's shared deadline; aborting it ends the wait early. */
  readonly signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 120_000;

/** Creates (or keeps) the namespace holding the project's own objects. */
export async function ensureSystemNamespace(kc: k8s.KubeConfig): Promise<void> {
  await ensureObject(kc, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: SYSTEM_NAMESPACE, labels: { ...MANAGED_LABELS, ...SYSTEM_POD_SECURITY } },
  }).catch(describeFailure(`${STEP}: applying Namespace ${SYSTEM_NAMESPACE}`, serverOf(kc)));
}

/**
 * The Pod Security level of the project's namespace: `privileged`, because the gateway and the
 * route agent run on the node's network with NET_ADMIN (and the gateway with /dev/net/tun), which
 * `baseline` forbids. Only this namespace says so; the tenants' namespaces and the namespaces that
 * offloaded pods run in set no level, so a cluster that enforces one by default holds those pods to it.
 */
export const SYSTEM_POD_SECURITY = { "pod-security.kubernetes.io/enforce": "privileged" } as const;

/**
 * Applies the project's CustomResourceDefinitions and waits until the API server serves each one
 * (condition `Established`), because creating a custom resource before that fails with 404.
 */
export async function ensureCustomResourceDefinitions(
  kc: k8s.KubeConfig,
  options: InstallWaitOptions = {},
): Promise<void> {
  const endpoint = serverOf(kc);
  const api = kc.makeApiClient(k8s.ApiextensionsV1Api);
  for (const crd of forgeCustomResourceDefinitions()) {
    const name = crd.metadata!.name!;
    await ensureObject(kc, crd).catch(describeFailure(`${STEP}: applying CustomResourceDefinition ${name}`, endpoint));
    await poll(
      { step: STEP, object: `CustomResourceDefinition ${name} Established`, endpoint },
      { timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, signal: options.signal },
      async () => {
        const live = await api.readCustomResourceDefinition({ name });
        const conditions = live.status?.conditions ?? [];
        const established = conditions.find((c) => c.type === "Established");
        if (established?.status === "True") return { done: true, value: undefined };
        const naming = conditions.find((c) => c.type === "NamesAccepted");
        if (naming?.status === "False")
          return { failed: true, reason: `names not accepted: ${naming.message ?? naming.reason ?? "no reason"}` };
        return { done: false, state: conditions.map((c) => `${c.type}=${c.status}`).join(", ") || "no conditions yet" };
      },
    );
  }
}

/** A cluster's identity as the peering protocol knows it. */
export interface ClusterIdentity {
  /** Stable id of the cluster: 16 lowercase hex characters, created once at install. */
  readonly clusterId: string;
  /** Human-readable name the operator gave the cluster, e.g. `eu-west`. */
  readonly clusterName: string;
  /** API server URL as peers reach it, e.g. `https://172.29.1.10:6443`. */
  readonly apiServerUrl: string;
  /** PEM of the CA that signed the API server's serving certificate, for peers to verify it. */
  readonly apiServerCaPem: string;
  /** The cluster's pod CIDR, which its gateway announces to peers; absent on clusters installed without one. */
  readonly podCidr?: string;
  /** The cluster's service CIDR, which its gateway never lets a peer's range be seen under. */
  readonly serviceCidr?: string;
  /** The cluster's external CIDR, which its gateway announces to peers beside the pod CIDR. */
  readonly externalCidr?: string;
  /**
   * `host:port` where peers reach the cluster's gateway, which it announces when it serves a
   * tunnel; absent on clusters installed before it was recorded.
   */
  readonly gatewayEndpoint?: string;
}

/** Input of {@link ensureClusterIdentity}: everything of the identity but the generated id. */
export interface ClusterIdentityArgs {
  /** Human-readable name of the cluster. */
  readonly clusterName: string;
  /**
   * API server URL as peers reach it (which may differ from the operator's kubeconfig, e.g.
   * behind NAT). @example "https://203.0.113.7:6443"
   */
  readonly apiServerUrl: string;
  /** PEM of the CA that signed the API server's serving certificate. */
  readonly apiServerCaPem: string;
  /** The cluster's pod CIDR. @example "10.100.0.0/16" */
  readonly podCidr?: string;
  /** The cluster's service CIDR. @example "10.200.0.0/16" */
  readonly serviceCidr?: string;
  /** The cluster's external CIDR, if any. @example "10.220.0.0/24" */
  readonly externalCidr?: string;
  /** Where peers reach the cluster's gateway, once known (unset: the one recorded stays). @example "203.0.113.7:51820" */
  readonly gatewayEndpoint?: string;
  /**
   * URN of the `Cluster` resource that installs it. Recorded with the identity: another `Cluster`
   * resource on the same cluster is refused while this one's install is there.
   */
  readonly owner?: string;
  /** URN of the `Cluster` resource whose install `owner` took over by an import: its record is overwritten. */
  readonly takenFrom?: string;
}

/** What {@link ensureClusterIdentity} returns. */
export interface ClusterIdentityResult {
  /** The cluster's stable id (the existing one when the identity was already installed). */
  readonly clusterId: string;
}

export { isClusterId } from "../api/names.js";

/** A fresh cluster id: 64 random bits, as 16 lowercase hex characters. */
export function forgeClusterId(): string {
  return randomBytes(8).toString("hex");
}

/** Annotation of the identity ConfigMap naming the `Cluster` resource (URN) that installed it. */
export const INSTALL_OWNER_ANNOTATION = `${API_GROUP}/owner`;

function identityConfigMap(clusterId: string, args: ClusterIdentityArgs): k8s.V1ConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: CLUSTER_IDENTITY_CONFIGMAP,
      namespace: SYSTEM_NAMESPACE,
      labels: { ...MANAGED_LABELS },
      ...(args.owner ? { annotations: { [INSTALL_OWNER_ANNOTATION]: args.owner } } : {}),
    },
    data: {
      clusterId,
      clusterName: args.clusterName,
      apiServerUrl: args.apiServerUrl,
      apiServerCa: args.apiServerCaPem,
      ...(args.podCidr ? { podCidr: args.podCidr } : {}),
      ...(args.serviceCidr ? { serviceCidr: args.serviceCidr } : {}),
      ...(args.externalCidr ? { externalCidr: args.externalCidr } : {}),
      ...(args.gatewayEndpoint ? { gatewayEndpoint: args.gatewayEndpoint } : {}),
    },
  };
}

/**
 * Records the cluster's identity in the cluster-identity ConfigMap. The id is created once and then
 * reused: peers name tenant namespaces and identities after it, so it must never change while the
 * cluster is installed. The first writer wins a race through `create` (409 for the loser, who then
 * adopts the winner's id); name, URL and CA are then applied and may change freely.
 */
export async function ensureClusterIdentity(
  kc: k8s.KubeConfig,
  args: ClusterIdentityArgs,
): Promise<ClusterIdentityResult> {
  const endpoint = serverOf(kc);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const read = (): Promise<k8s.V1ConfigMap | undefined> => readIdentityConfigMap(kc);
  const existing = await read();
  refuseOtherOwner(kc, existing, args.owner, args.takenFrom);
  let clusterId = existing?.data?.["clusterId"];
  if (!isClusterId(clusterId)) {
    const fresh = forgeClusterId();
    try {
      await core.createNamespacedConfigMap({ namespace: SYSTEM_NAMESPACE, body: identityConfigMap(fresh, args) });
      clusterId = fresh;
    } catch (error) {
      if (statusOf(error) !== 409)
        describeFailure(
          `${STEP}: creating ConfigMap ${SYSTEM_NAMESPACE}/${CLUSTER_IDENTITY_CONFIGMAP}`,
          endpoint,
        )(error);
      // Someone else created it meanwhile (or it held a malformed id): keep theirs if it is valid,
      // unless it is another Cluster resource's, created at the same time as this one.
      const winner = await read();
      refuseOtherOwner(kc, winner, args.owner, args.takenFrom);
      const theirs = winner?.data?.["clusterId"];
      clusterId = isClusterId(theirs) ? theirs : fresh;
    }
  }
  // An endpoint not known yet (its load balancer is asked again) keeps the one recorded meanwhile.
  const recorded = existing?.data?.["gatewayEndpoint"];
  const kept = args.gatewayEndpoint === undefined && recorded ? { ...args, gatewayEndpoint: recorded } : args;
  await ensureObject(kc, identityConfigMap(clusterId, kept)).catch(
    describeFailure(`${STEP}: applying ConfigMap ${SYSTEM_NAMESPACE}/${CLUSTER_IDENTITY_CONFIGMAP}`, endpoint),
  );
  return { clusterId };
}

/** The identity ConfigMap as stored; undefined when there is none. */
function readIdentityConfigMap(kc: k8s.KubeConfig): Promise<k8s.V1ConfigMap | undefined> {
  return readOptional(() =>
    kc
      .makeApiClient(k8s.CoreV1Api)
      .readNamespacedConfigMap({ name: CLUSTER_IDENTITY_CONFIGMAP, namespace: SYSTEM_NAMESPACE }),
  ).catch(
    describeFailure(`${STEP}: reading ConfigMap ${SYSTEM_NAMESPACE}/${CLUSTER_IDENTITY_CONFIGMAP}`, serverOf(kc)),
  );
}

/**
 * Throws when the install belongs to another `Cluster` resource than `owner`: two resources on one
 * cluster would share its identity, and deleting either would uninstall the other's. An install
 * that names no owner (made outside the engine, or before owners were recorded) is taken over, and
 * so is the install of `takenFrom`, which `owner` was imported from.
 */
function refuseOtherOwner(
  kc: k8s.KubeConfig,
  configMap: k8s.V1ConfigMap | undefined,
  owner: string | undefined,
  takenFrom: string | undefined,
): void {
  const holder = configMap?.metadata?.annotations?.[INSTALL_OWNER_ANNOTATION];
  if (!holder || mayTake(holder, owner, takenFrom)) return;
  throw new Error(
    `${STEP}: the cluster at ${serverOf(kc)} is already installed by Cluster ${describeOwner(holder)} (cluster ID ${configMap?.data?.["clusterId"] ?? "?"}); ` +
      `one cluster takes one Cluster resource: use that one's outputs, or delete it first (nothing was changed)`,
  );
}

/** URN of the `Cluster` resource whose install is on the cluster; undefined when none is recorded. */
export async function getInstallOwner(kc: k8s.KubeConfig): Promise<string | undefined> {
  return (await readIdentityConfigMap(kc))?.metadata?.annotations?.[INSTALL_OWNER_ANNOTATION];
}

/**
 * Refuses, before anything is written, an install of the cluster by another `Cluster` resource
 * than the one (`owner`, its URN) whose install is there, or the one `owner` took it over from.
 */
export async function checkInstallOwner(
  kc: k8s.KubeConfig,
  owner: string | undefined,
  takenFrom: string | undefined,
): Promise<void> {
  if (owner) refuseOtherOwner(kc, await readIdentityConfigMap(kc), owner, takenFrom);
}

/** Reads the cluster's identity; undefined when the cluster is not installed (or the record is incomplete). */
export async function getClusterIdentity(kc: k8s.KubeConfig): Promise<ClusterIdentity | undefined> {
  const cm = await readIdentityConfigMap(kc);
  const data = cm?.data ?? {};
  const { clusterId, clusterName, apiServerUrl, apiServerCa, podCidr, serviceCidr, externalCidr, gatewayEndpoint } =
    data;
  if (!isClusterId(clusterId) || clusterName === undefined || !apiServerUrl || !apiServerCa) return undefined;
  return {
    clusterId,
    clusterName,
    apiServerUrl,
    apiServerCaPem: apiServerCa,
    ...(podCidr ? { podCidr } : {}),
    ...(serviceCidr ? { serviceCidr } : {}),
    ...(externalCidr ? { externalCidr } : {}),
    ...(gatewayEndpoint ? { gatewayEndpoint } : {}),
  };
}

/** Input of {@link ensureAuthServiceTls}. */
export interface AuthServiceTlsArgs {
  /**
   * Names under which consumers reach the auth service: IP addresses or DNS names; each becomes a
   * subject alternative name of its serving certificate. @example ["172.29.1.10", "auth.example.com"]
   */
  readonly hosts: readonly string[];
}

/** What {@link ensureAuthServiceTls} returns. */
export interface AuthServiceTlsResult {
  /** PEM of the CA that consumers must trust to verify the auth service (the `ca.crt` of the Secret). */
  readonly caPem: string;
  /** PEM of the serving certificate (the `tls.crt` of the Secret), which the agent reports serving. */
  readonly certPem: string;
}

/**
 * A DNS name every auth service certificate carries besides its hosts: in-band, a consumer reaches
 * the auth service at an address inside the tunnel, which no certificate names, and verifies it
 * under this name instead.
 */
export const AUTH_SERVICE_TLS_NAME = "pulumi-liqo-auth";

/** One spelling per address: IPv6 has many (`::1`, `0:0:0:0:0:0:0:1`), and Node prints SANs its own way. */
function canonicalIp(ip: string): string {
  return isIP(ip) === 6 ? new URL(`http://[${ip}]`).hostname : ip;
}

/** Renew a serving certificate that expires within this margin, rather than hand out one about to lapse. */
const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

/**
 * Whether a serving certificate's subject alternative names cover every host (exact match: the
 * auth service has no wildcard names) and it stays valid for the renewal margin. Pure.
 */
export function servingCertificateCovers(certPem: string, hosts: readonly string[], now: number = Date.now()): boolean {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return false;
  }
  if (Date.parse(cert.validTo) - RENEW_BEFORE_MS < now) return false;
  const names = new Set(
    (cert.subjectAltName ?? "")
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "")
      .map((entry) =>
        entry.startsWith("IP Address:")
          ? `IP Address:${canonicalIp(entry.slice("IP Address:".length))}`
          : entry.toLowerCase(),
      ),
  );
  return hosts.every((host) => names.has(isIP(host) ? `IP Address:${canonicalIp(host)}` : `dns:${host.toLowerCase()}`));
}

/** Reads the Secret `name` of the system namespace, if there is one. */
function readSystemSecret(kc: k8s.KubeConfig, name: string): Promise<k8s.V1Secret | undefined> {
  return readOptional(() =>
    kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE }),
  ).catch(describeFailure(`${STEP}: reading Secret ${SYSTEM_NAMESPACE}/${name}`, serverOf(kc)));
}

/** The auth service's CA certificate (public: consumers are handed it), or undefined when there is none. Writes nothing. */
export async function getAuthServiceCa(kc: k8s.KubeConfig): Promise<string | undefined> {
  const ca = (await readSystemSecret(kc, AUTH_TLS_SECRET))?.data?.["ca.crt"];
  return ca ? Buffer.from(ca, "base64").toString("utf8") : undefined;
}

/**
 * Ensures the TLS Secret `secret` of the system namespace (`tls.crt`, `tls.key`, `ca.crt`) serves
 * `hosts`. An existing Secret is kept as long as its certificate covers them: its CA is handed out
 * (to consumers, to the API server), so replacing it without need would break those who hold it.
 * Otherwise a new CA (`caName`) and serving certificate are made; the CA key is not kept: nothing
 * else is ever signed with it.
 */
async function ensureServingTlsSecret(
  kc: k8s.KubeConfig,
  secret: string,
  caName: string,
  hosts: readonly string[],
): Promise<AuthServiceTlsResult> {
  const existing = await readSystemSecret(kc, secret);
  const decode = (key: string): string => Buffer.from(existing?.data?.[key] ?? "", "base64").toString("utf8");
  if (existing && decode("tls.key") && decode("ca.crt") && servingCertificateCovers(decode("tls.crt"), hosts)) {
    return { caPem: decode("ca.crt"), certPem: decode("tls.crt") };
  }
  const ca = forgeCertificateAuthority(caName);
  const dnsNames = hosts.filter((h) => !isIP(h)).map((h) => h.toLowerCase());
  const ips = hosts.filter((h) => isIP(h));
  const serving = forgeServingCertificate(ca, dnsNames[0] ?? ips[0]!, dnsNames, ips);
  const b64 = (text: string): string => Buffer.from(text, "utf8").toString("base64");
  await ensureObject(kc, {
    apiVersion: "v1",
    kind: "Secret",
    type: "kubernetes.io/tls",
    metadata: { name: secret, namespace: SYSTEM_NAMESPACE, labels: { ...MANAGED_LABELS } },
    // `data`, not `stringData`: server-side apply tracks `stringData` poorly (it is write-only).
    data: { "tls.crt": b64(serving.cert), "tls.key": b64(serving.key), "ca.crt": b64(ca.cert) },
  } as k8s.V1Secret).catch(describeFailure(`${STEP}: applying Secret ${SYSTEM_NAMESPACE}/${secret}`, serverOf(kc)));
  return { caPem: ca.cert, certPem: serving.cert };
}

/**
 * Ensures the auth service's TLS Secret for `hosts` (and {@link AUTH_SERVICE_TLS_NAME}); see
 * ensureServingTlsSecret for when an existing one is kept.
 */
export async function ensureAuthServiceTls(
  kc: k8s.KubeConfig,
  args: AuthServiceTlsArgs,
): Promise<AuthServiceTlsResult> {
  if (args.hosts.length === 0)
    throw new Error(`${STEP}: auth service TLS at ${serverOf(kc)}: no hosts given (need at least one IP or DNS name)`);
  return ensureServingTlsSecret(kc, AUTH_TLS_SECRET, "pulumi-liqo auth service CA", [
    ...args.hosts,
    AUTH_SERVICE_TLS_NAME,
  ]);
}

/**
 * Where the API server serves no MutatingAdmissionPolicy: what the agent's placement webhook needs
 * from the install (../offloading/placement-webhook.ts): its TLS Secret, for the name the API
 * server dials, and the ClusterIP Service in front of the agent's listener.
 */
export async function ensurePlacementWebhook(kc: k8s.KubeConfig): Promise<void> {
  await ensureServingTlsSecret(kc, PLACEMENT_TLS_SECRET, "pulumi-liqo placement webhook CA", [PLACEMENT_TLS_NAME]);
  await ensureObject(kc, forgePlacementService()).catch(
    describeFailure(`${STEP}: applying Service ${SYSTEM_NAMESPACE}/${PLACEMENT_SERVICE}`, serverOf(kc)),
  );
}

/** How {@link uninstallCluster} removes, and how long it waits. */
export interface UninstallOptions extends InstallWaitOptions {
  /**
   * Keep the CRDs, removing every object of them instead: for a cluster installed again at once.
   * Kubernetes' quota controller pauses while its discovery sees kinds go or come back (up to 30 s
   * each), and the next install waits for it (tenant-quota.ts).
   */
  readonly keepDefinitions?: boolean;
}

/**
 * Removes everything a `Cluster` installed and everything the project created in it: every
 * namespace labelled managed-by pulumi-liqo (the system namespace and the tenant namespaces, with
 * all they hold), every such CertificateSigningRequest, the pod-placement policies of offloaded
 * namespaces, and the CRDs (which takes their custom resources along; with `keepDefinitions`, only
 * those objects). Waits until they are gone, so that "destroy leaves nothing" holds when it returns.
 * Idempotent: on a clean cluster it does nothing.
 */
export async function uninstallCluster(kc: k8s.KubeConfig, options: UninstallOptions = {}): Promise<void> {
  const endpoint = serverOf(kc);
  const selector = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const certificates = kc.makeApiClient(k8s.CertificatesV1Api);
  const extensions = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const timing = { timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, signal: options.signal };

  const csrs = await certificates
    .listCertificateSigningRequest({ labelSelector: selector })
    .catch(describeFailure(`${STEP}: listing CSRs`, endpoint));
  for (const csr of csrs.items) {
    await deleteOptional(() => certificates.deleteCertificateSigningRequest({ name: csr.metadata!.name! })).catch(
      describeFailure(`${STEP}: deleting CertificateSigningRequest ${csr.metadata!.name!}`, endpoint),
    );
  }

  // Namespaces first, while the CRDs still exist, so the namespace controller removes custom
  // resources inside them the ordinary way.
  const listed = await core
    .listNamespace({ labelSelector: selector })
    .catch(describeFailure(`${STEP}: listing namespaces`, endpoint));
  const namespaces = new Set([SYSTEM_NAMESPACE, ...listed.items.map((ns) => ns.metadata!.name!)]);
  for (const name of namespaces) {
    await deleteNamespaceAndPods(kc, name).catch(describeFailure(`${STEP}: deleting Namespace ${name}`, endpoint));
  }
  for (const name of namespaces) {
    await poll({ step: STEP, object: `Namespace ${name} deleted`, endpoint }, timing, async () => {
      // The agent that would honour the project's finalizers (on a tenant's requests) goes with
      // the system namespace: once a namespace is being deleted, they only hold it up.
      await releaseProjectFinalizers(kc, name);
      const live = await readOptional(() => core.readNamespace({ name }));
      return live
        ? { done: false, state: `phase ${live.status?.phase ?? "unknown"}` }
        : { done: true, value: undefined };
    });
  }

  // Objects outside those namespaces (a NamespaceOffloading in an application's namespace) keep
  // the agent's finalizers; the agent that would honour them is gone, and a CRD is not removed
  // while an object of it waits on one.
  await releaseProjectFinalizers(kc, undefined);
  // What the project granted in an application's namespace (the agent's right to read an offloaded
  // namespace's ConfigMaps and Secrets) outlives a forced uninstall that withdrew no offloading.
  await deleteProjectRbacOutside(kc, selector);
  // And the placement of their pods, which would otherwise send them to virtual nodes that are gone.
  await removeAllPlacements(kc, STEP);
  // The remote namespaces it guarded are gone.
  await deleteRemoteNamespaceGuard(kc, STEP);
  if (options.keepDefinitions) return deleteProjectObjects(kc, timing);
  const crdNames = forgeCustomResourceDefinitions().map((crd) => crd.metadata!.name!);
  for (const name of crdNames) {
    await deleteOptional(() => extensions.deleteCustomResourceDefinition({ name })).catch(
      describeFailure(`${STEP}: deleting CustomResourceDefinition ${name}`, endpoint),
    );
  }
  for (const name of crdNames) {
    await poll({ step: STEP, object: `CustomResourceDefinition ${name} deleted`, endpoint }, timing, async () => {
      const live = await readOptional(() => extensions.readCustomResourceDefinition({ name }));
      return live ? { done: false, state: "still present (terminating)" } : { done: true, value: undefined };
    });
  }
}

/** Deletes every object of the project's kinds left anywhere (their finalizers released before), and waits until they are gone. */
async function deleteProjectObjects(kc: k8s.KubeConfig, timing: PollOptions): Promise<void> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const endpoint = serverOf(kc);
  for (const definition of forgeCustomResourceDefinitions()) {
    const plural = definition.spec.names.plural;
    for (const { name, namespace } of await listProjectObjects(kc, plural, undefined)) {
      await deleteOptional(() =>
        api.deleteNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION,
          plural,
          namespace: namespace!,
          name: name!,
        }),
      ).catch(describeFailure(`${STEP}: deleting ${plural} ${namespace}/${name}`, endpoint));
    }
    await poll({ step: STEP, object: `every ${plural} deleted`, endpoint }, timing, async () => {
      const names = (await listProjectObjects(kc, plural, undefined)).map((meta) => `${meta.namespace}/${meta.name}`);
      return names.length === 0
        ? { done: true, value: undefined }
        : { done: false, state: `left: ${names.join(", ")}` };
    });
  }
}

/**
 * The metadata of every object of the project's kind `plural`, in `namespace` or anywhere; none
 * when the kind does not exist (a cluster never installed, or its CRDs already gone).
 */
async function listProjectObjects(
  kc: k8s.KubeConfig,
  plural: string,
  namespace: string | undefined,
): Promise<k8s.V1ObjectMeta[]> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const resource = { group: API_GROUP, version: API_VERSION, plural };
  const listed = (await readOptional(() =>
    namespace ? api.listNamespacedCustomObject({ ...resource, namespace }) : api.listClusterCustomObject(resource),
  ).catch(describeFailure(`${STEP}: listing ${plural}`, serverOf(kc)))) as
    { items: { metadata: k8s.V1ObjectMeta }[] } | undefined;
  return (listed?.items ?? []).map((object) => object.metadata);
}

/** Deletes every RoleBinding and Role labelled as the project's, in whichever namespace is left. */
async function deleteProjectRbacOutside(kc: k8s.KubeConfig, selector: string): Promise<void> {
  const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const fail = (what: string) => describeFailure(`${STEP}: ${what}`, serverOf(kc));
  type Remove = (object: { name: string; namespace: string }) => Promise<unknown>;
  const kinds: { kind: string; list: () => Promise<{ items: k8s.KubernetesObject[] }>; remove: Remove }[] = [
    {
      kind: "RoleBinding",
      list: () => rbac.listRoleBindingForAllNamespaces({ labelSelector: selector }),
      remove: (object) => rbac.deleteNamespacedRoleBinding(object),
    },
    {
      kind: "Role",
      list: () => rbac.listRoleForAllNamespaces({ labelSelector: selector }),
      remove: (object) => rbac.deleteNamespacedRole(object),
    },
  ];
  for (const { kind, list, remove } of kinds) {
    const listed = await list().catch(fail(`listing the project's ${kind}s`));
    for (const { metadata } of listed.items) {
      const object = { name: metadata!.name!, namespace: metadata!.namespace! };
      await deleteOptional(() => remove(object)).catch(fail(`deleting ${kind} ${object.namespace}/${object.name}`));
    }
  }
}

/** Removes this project's finalizers from every object of its kinds (in `namespace`, or anywhere) that still holds one. */
async function releaseProjectFinalizers(kc: k8s.KubeConfig, namespace: string | undefined): Promise<void> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const endpoint = serverOf(kc);
  const ours = (f: string): boolean => f.startsWith(`${API_GROUP}/`);
  for (const definition of forgeCustomResourceDefinitions()) {
    const plural = definition.spec.names.plural;
    for (const metadata of await listProjectObjects(kc, plural, namespace)) {
      const finalizers = metadata.finalizers ?? [];
      if (!finalizers.some(ours)) continue;
      const { name } = metadata;
      const where = metadata.namespace!;
      await readOptional(() =>
        api.patchNamespacedCustomObject(
          {
            group: API_GROUP,
            version: API_VERSION,
            namespace: where,
            plural,
            name: name!,
            body: { metadata: { finalizers: finalizers.filter((f) => !ours(f)) } },
          },
          k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
        ),
      ).catch(describeFailure(`${STEP}: releasing the finalizers of ${plural} ${where}/${name}`, endpoint));
    }
  }
}
