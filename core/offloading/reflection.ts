/**
 * How a consumer's pod and the provider's pod mirror each other (pure, no I/O): the request the
 * consumer's agent files for a pod bound to a virtual node, the pod the provider's agent makes of
 * it, the status that flows back (with the pod's address as the consumer sees it), and the
 * ConfigMaps and Secrets that go with it.
 */
import type {
  V1ConfigMap,
  V1Container,
  V1EnvVar,
  V1ObjectMeta,
  V1Pod,
  V1PodCondition,
  V1PodSpec,
  V1PodStatus,
  V1Secret,
  V1Volume,
} from "@kubernetes/client-node";
import {
  API_GROUP,
  API_GROUP_VERSION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  SYSTEM_NAMESPACE,
  tenantNamespace,
} from "../api/names.js";
import { POD_API_PORT, type TunnelEndpoint } from "../api/crds.js";
import { tenantRequestName, type OffloadedPod } from "../api/offloading.js";
import { Cidr } from "../net/cidr.js";
import { CLUSTER_DOMAIN, searchesOf } from "./dns-names.js";
import { translateAddress } from "../network-fabric/remap.js";
import { ALLOWED_SERVICE_ACCOUNT, type Refusal } from "./pod-policy.js";

/** Label on a provider's pod (and on a reflected object) naming the consumer pod's uid it stands for. */
export const CONSUMER_POD_UID_LABEL = `${API_GROUP}/consumer-pod-uid`;
/** Label on a reflected ConfigMap or Secret: it was copied from the consumer, and goes when no pod uses it. */
export const REFLECTED_LABEL = `${API_GROUP}/reflected`;
/** The consumer pod condition that says whether (and why not) the pod runs on the provider. */
export const OFFLOADED_CONDITION = "Offloaded";

/**
 * Fields of a consumer's pod spec that speak of the consumer's cluster and mean nothing, or worse,
 * on the provider: where to place it (the provider's scheduler places it among its own nodes),
 * which priority class and runtime class (names of the consumer's), and the consumer's service
 * account token volume (the provider's pod mounts none: see forgeRemotePod).
 */
function portableSpec(spec: V1PodSpec): V1PodSpec {
  const tokenVolumes = new Set(
    (spec.volumes ?? []).filter((v) => v.name.startsWith("kube-api-access-") && v.projected).map((v) => v.name),
  );
  const dropMounts = <T extends { volumeMounts?: { name: string }[] }>(container: T): T => ({
    ...container,
    ...(container.volumeMounts
      ? { volumeMounts: container.volumeMounts.filter((m) => !tokenVolumes.has(m.name)) }
      : {}),
  });
  const {
    nodeName: _nodeName,
    nodeSelector: _nodeSelector,
    affinity: _affinity,
    tolerations: _tolerations,
    schedulerName: _schedulerName,
    priority: _priority,
    priorityClassName: _priorityClassName,
    preemptionPolicy: _preemptionPolicy,
    runtimeClassName: _runtimeClassName,
    overhead: _overhead,
    ephemeralContainers: _ephemeralContainers,
    topologySpreadConstraints: _topologySpreadConstraints,
    ...rest
  } = spec;
  return {
    ...rest,
    containers: spec.containers.map(dropMounts),
    ...(spec.initContainers ? { initContainers: spec.initContainers.map(dropMounts) } : {}),
    ...(spec.volumes ? { volumes: spec.volumes.filter((v) => !tokenVolumes.has(v.name)) } : {}),
  };
}

/** A container image to change in place: the one change Kubernetes allows to a running pod's containers. */
export interface ImageChange {
  /** `containers` or `initContainers`. */
  readonly list: "containers" | "initContainers";
  /** The container's name. */
  readonly name: string;
  /** The image `wanted` names for it. */
  readonly image: string;
}

/**
 * The images `wanted` names that `current` does not run, container by container (matched by name,
 * in both lists). A consumer's pod whose image was changed yields its request's update; the
 * provider's pod, then, the patch that brings it to its request.
 */
export function imageChanges(current: V1PodSpec, wanted: V1PodSpec): ImageChange[] {
  const changes: ImageChange[] = [];
  for (const list of ["containers", "initContainers"] as const) {
    const running = new Map((current[list] ?? []).map((c) => [c.name, c.image]));
    for (const container of wanted[list] ?? []) {
      if (container.image && running.has(container.name) && running.get(container.name) !== container.image)
        changes.push({ list, name: container.name, image: container.image });
    }
  }
  return changes;
}

/**
 * The `activeDeadlineSeconds` `wanted` sets that `current` does not have, or undefined: the other
 * change Kubernetes allows to a running pod's spec (a deadline set, or shortened). A consumer's pod
 * given a deadline yields its request's update; the provider's pod, then, the patch. Pure.
 */
export function deadlineChange(current: V1PodSpec, wanted: V1PodSpec): number | undefined {
  const deadline = wanted.activeDeadlineSeconds;
  return deadline !== undefined && deadline !== current.activeDeadlineSeconds ? deadline : undefined;
}

/**
 * The annotations of a consumer's pod that go with it: all but those under Kubernetes' own prefixes
 * (`kubernetes.io/`, `k8s.io/` and their subdomains), which speak to the consumer's cluster
 * components (kubectl, controllers), and some of which would loosen the provider's runtime for the
 * pod (an AppArmor or seccomp profile named `unconfined`). Pure.
 */
export function portableAnnotations(annotations: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const kubernetesOwn = (key: string): boolean => {
    const prefix = key.includes("/") ? key.slice(0, key.indexOf("/")) : "";
    return ["kubernetes.io", "k8s.io"].some((own) => prefix === own || prefix.endsWith(`.${own}`));
  };
  return Object.fromEntries(Object.entries(annotations ?? {}).filter(([key]) => !kubernetesOwn(key)));
}

/**
 * What the provider's pod must change for its metadata to be its request's: a merge patch of
 * labels and annotations (null removes one), or undefined when they agree. The project's own
 * labels are the provider's and stay. Pure.
 */
export function metadataChanges(
  live: V1ObjectMeta,
  wanted: V1ObjectMeta,
): { labels?: Record<string, string | null>; annotations?: Record<string, string | null> } | undefined {
  const patch: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> } = {};
  for (const field of ["labels", "annotations"] as const) {
    const [before, after] = [live[field] ?? {}, wanted[field] ?? {}];
    const changed: Record<string, string | null> = {};
    for (const [key, value] of Object.entries(after)) if (before[key] !== value) changed[key] = value;
    for (const key of Object.keys(before)) if (!(key in after)) changed[key] = null;
    if (Object.keys(changed).length > 0) patch[field] = changed;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/** The request the consumer's agent files in its tenant namespace for `pod`, to run in `remoteNamespace`. */
export function forgeOffloadedPod(
  pod: V1Pod,
  remoteNamespace: string,
  tenantNamespace: string,
  options: { readonly consumerToken?: boolean } = {},
): OffloadedPod {
  const name = pod.metadata!.name!;
  const annotations = portableAnnotations(pod.metadata?.annotations);
  return {
    apiVersion: API_GROUP_VERSION,
    kind: "OffloadedPod",
    metadata: {
      name: tenantRequestName(remoteNamespace, name),
      namespace: tenantNamespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [CONSUMER_POD_UID_LABEL]: pod.metadata!.uid! },
    },
    spec: {
      namespace: remoteNamespace,
      name,
      consumerUid: pod.metadata!.uid!,
      ...(pod.metadata?.labels ? { labels: pod.metadata.labels } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      pod: portableSpec(pod.spec!),
      ...(options.consumerToken ? { consumerToken: true } : {}),
    },
  };
}

/** Where a kubelet mounts a pod's service account token, and where client libraries read it. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** The names an offloaded pod with its consumer's token reaches the consumer's API server by. */
export const CONSUMER_API_HOSTNAMES = [
  "kubernetes.default",
  "kubernetes.default.svc",
  "kubernetes.default.svc.cluster.local",
] as const;

/** Label on the Secret holding a consumer token, in a remote namespace. */
export const CONSUMER_TOKEN_LABEL = `${API_GROUP}/consumer-token`;

/** Annotation on that Secret: when the consumer's agent asks for a fresh token (RFC 3339). */
export const TOKEN_REFRESH_ANNOTATION = `${API_GROUP}/refresh-at`;

/** The Secret that holds the consumer token of the pod whose consumer uid is `consumerUid`; the provider derives it, never reads it from a request. */
export function consumerTokenSecretName(consumerUid: string): string {
  return `pulumi-liqo-token-${consumerUid}`;
}

/**
 * Whether the consumer's pod mounts a token of its service account: the projected volume
 * Kubernetes' ServiceAccount admission adds (`kube-api-access-*`), which an
 * `automountServiceAccountToken: false` leaves out.
 */
export function mountsServiceAccountToken(spec: V1PodSpec): boolean {
  return (spec.volumes ?? []).some(
    (v) => v.name.startsWith("kube-api-access-") && v.projected?.sources?.some((source) => source.serviceAccountToken),
  );
}

/** What a consumer token's Secret holds, as the consumer's agent got it. */
export interface ConsumerToken {
  /** The consumer pod: its name, uid and namespace on the consumer. */
  readonly pod: { readonly name: string; readonly uid: string; readonly namespace: string };
  /** The token the consumer's API server issued for the pod's service account, bound to the pod. */
  readonly token: string;
  /** The consumer's cluster CA (PEM), which its API server's certificate chains to. */
  readonly caCert: string;
  /** When to ask for a fresh one. */
  readonly refreshAt: Date;
}

/**
 * The Secret, in `remoteNamespace`, that the provider mounts as the pod's service account
 * directory: `token`, `ca.crt` and `namespace` (the consumer's, so that in-cluster clients work in
 * their own namespace), as a kubelet's projected volume has them.
 */
export function forgeConsumerTokenSecret(token: ConsumerToken, remoteNamespace: string): V1Secret {
  const encode = (text: string): string => Buffer.from(text, "utf8").toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: consumerTokenSecretName(token.pod.uid),
      namespace: remoteNamespace,
      labels: {
        [MANAGED_BY_LABEL]: MANAGED_BY,
        [CONSUMER_TOKEN_LABEL]: "true",
        [CONSUMER_POD_UID_LABEL]: token.pod.uid,
      },
      annotations: { [TOKEN_REFRESH_ANNOTATION]: token.refreshAt.toISOString() },
    },
    type: "Opaque",
    data: { token: encode(token.token), "ca.crt": encode(token.caCert), namespace: encode(token.pod.namespace) },
  };
}

/**
 * Why the provider cannot yet run a request that asks for its consumer's token: its pod would hold
 * the token with no way to the consumer's API server, and `kubernetes.default` would lead to this
 * cluster's own (which would be handed the consumer's token). Undefined when it can. Pure.
 */
export function refuseConsumerToken(
  request: OffloadedPod,
  consumerApiAddress: string | undefined,
): Refusal | undefined {
  if (!request.spec.consumerToken || consumerApiAddress) return undefined;
  return {
    reason: "TunnelNotReady",
    message:
      "the pod mounts its service account token, which leads to its consumer's API server through the tunnel, " +
      "and the tunnel to the consumer has no address for it yet",
  };
}

/** `env` with each of `wanted` whose name it does not set already. */
function withEnv(env: V1EnvVar[] | undefined, wanted: readonly V1EnvVar[]): V1EnvVar[] {
  const own = new Set((env ?? []).map((e) => e.name));
  return [...(env ?? []), ...wanted.filter((e) => !own.has(e.name))];
}

/**
 * `spec` given its consumer's token: the Secret mounted where a kubelet mounts a pod's token (in
 * every container that does not mount something there itself), `kubernetes.default` and its longer
 * names resolving to `consumerApiAddress` (the consumer gateway's tunnel address), and the
 * variables in-cluster clients read pointing at that name and POD_API_PORT.
 */
function withConsumerToken(spec: V1PodSpec, consumerUid: string, consumerApiAddress: string): V1PodSpec {
  const volume = "kube-api-access-consumer";
  const host = CONSUMER_API_HOSTNAMES[1];
  const env: V1EnvVar[] = [
    { name: "KUBERNETES_SERVICE_HOST", value: host },
    { name: "KUBERNETES_SERVICE_PORT", value: String(POD_API_PORT) },
    { name: "KUBERNETES_SERVICE_PORT_HTTPS", value: String(POD_API_PORT) },
    { name: "KUBERNETES_PORT", value: `tcp://${host}:${POD_API_PORT}` },
  ];
  const mount = <T extends V1Container>(container: T): T => ({
    ...container,
    env: withEnv(container.env, env),
    volumeMounts: (container.volumeMounts ?? []).some((m) => m.mountPath.replace(/\/+$/, "") === SERVICE_ACCOUNT_DIR)
      ? container.volumeMounts
      : [...(container.volumeMounts ?? []), { name: volume, mountPath: SERVICE_ACCOUNT_DIR, readOnly: true }],
  });
  return {
    ...spec,
    containers: spec.containers.map(mount),
    ...(spec.initContainers ? { initContainers: spec.initContainers.map(mount) } : {}),
    volumes: [
      ...(spec.volumes ?? []),
      { name: volume, secret: { secretName: consumerTokenSecretName(consumerUid), defaultMode: 0o644 } },
    ],
    // First: /etc/hosts answers with the first line naming a host.
    hostAliases: [{ ip: consumerApiAddress, hostnames: [...CONSUMER_API_HOSTNAMES] }, ...(spec.hostAliases ?? [])],
  };
}

/** Where an offloaded pod asks its names (core/offloading/dns-names.ts), and as which namespace. */
export interface ConsumerDns {
  /** The ClusterIP of the provider agent's DNS Service. */
  readonly nameserver: string;
  /** The pod's namespace on the consumer: the first of its search list, as at home. */
  readonly consumerNamespace: string;
}

/**
 * `spec` resolving its names as at home: through the provider agent's answerer for its consumer,
 * with the search list kubelet writes on the consumer. A pod that chose its own resolver
 * (`dnsPolicy: None` or `Default`) keeps it.
 */
function withConsumerDns(spec: V1PodSpec, dns: ConsumerDns | undefined): V1PodSpec {
  const policy = spec.dnsPolicy ?? "ClusterFirst";
  if (!dns || (policy !== "ClusterFirst" && policy !== "ClusterFirstWithHostNet")) return spec;
  return {
    ...spec,
    dnsPolicy: "None",
    // Merged with the pod's own dnsConfig as kubelet merges it with ClusterFirst: its entries after ours.
    dnsConfig: {
      nameservers: [dns.nameserver, ...(spec.dnsConfig?.nameservers ?? [])],
      searches: [...searchesOf(dns.consumerNamespace, CLUSTER_DOMAIN), ...(spec.dnsConfig?.searches ?? [])],
      options: [{ name: "ndots", value: "5" }, ...(spec.dnsConfig?.options ?? [])],
    },
  };
}

/**
 * The pod the provider's agent creates for a request it accepted. It never trusts the request for
 * placement or identity: whatever the request says, the pod is placed by the provider's scheduler,
 * runs as the namespace's default service account with none of its tokens, and carries the
 * project's labels. A request with `consumerToken` gets the consumer's token (`consumerApiAddress`:
 * where the consumer's API server answers through the tunnel; see refuseConsumerToken).
 */
export function forgeRemotePod(
  request: OffloadedPod,
  consumerClusterId: string,
  consumerApiAddress?: string,
  dns?: ConsumerDns,
): V1Pod {
  const portable = withConsumerDns(portableSpec(request.spec.pod), dns);
  const spec =
    request.spec.consumerToken && consumerApiAddress
      ? withConsumerToken(portable, request.spec.consumerUid, consumerApiAddress)
      : portable;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: request.spec.name,
      namespace: request.spec.namespace,
      labels: {
        ...(request.spec.labels ?? {}),
        [MANAGED_BY_LABEL]: MANAGED_BY,
        [REMOTE_CLUSTER_LABEL]: consumerClusterId,
        [CONSUMER_POD_UID_LABEL]: request.spec.consumerUid,
      },
      // Checked again here: the request is the consumer's to write.
      ...(request.spec.annotations ? { annotations: portableAnnotations(request.spec.annotations) } : {}),
    },
    // No token of the provider's is mounted: code using in-cluster config must not reach, as if it
    // were its own, the provider's API server.
    spec: {
      ...spec,
      serviceAccountName: ALLOWED_SERVICE_ACCOUNT,
      serviceAccount: undefined,
      automountServiceAccountToken: false,
    },
  };
}

/**
 * How this cluster sees a peer's pod addresses (a consumer its provider's, a provider its
 * consumer's): the peer's real pod CIDR, and the range it is seen under here.
 */
export interface PodAddressView {
  readonly real: Cidr;
  readonly asSeen: Cidr;
}

/**
 * This cluster's end of its tunnel to `peerClusterId`: its TunnelEndpoint in the system namespace
 * (written by this cluster's admin), or in the peer's tenant namespace (written by that consumer
 * with its identity, out-of-band); one its gateway refused is none. A consumer writing its own
 * claims no more there than the addresses of its own pods: its gateway chose the range they are
 * seen under, which only the tunnel leads to.
 */
const ownEndpointToward = (endpoints: readonly TunnelEndpoint[], peerClusterId: string): TunnelEndpoint | undefined =>
  endpoints.find(
    (e) =>
      [SYSTEM_NAMESPACE, tenantNamespace(peerClusterId)].includes(e.metadata.namespace ?? "") &&
      e.spec.remoteClusterId === peerClusterId &&
      e.status?.phase !== "Refused",
  );

/** This cluster's own pod range as its end of the tunnel to `peerClusterId` reports it; undefined until it has. Pure. */
export function ownPodRange(endpoints: readonly TunnelEndpoint[], peerClusterId: string): Cidr | undefined {
  const range = ownEndpointToward(endpoints, peerClusterId)?.status?.podCidr;
  try {
    return range ? Cidr.parse(range) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How this cluster sees peer `peerClusterId`'s pod addresses, from its own end of their tunnel (its
 * TunnelEndpoint in the system namespace); undefined until that end's gateway has said. Pure.
 */
export function peerAddressView(
  endpoints: readonly TunnelEndpoint[],
  peerClusterId: string,
): (PodAddressView & { readonly connected: boolean }) | undefined {
  const own = ownEndpointToward(endpoints, peerClusterId);
  const real = own?.spec.remote.podCidr;
  const asSeen = own?.status?.remotePodCidrAsSeen;
  if (!real || !asSeen) return undefined;
  try {
    return { real: Cidr.parse(real), asSeen: Cidr.parse(asSeen), connected: own.status?.phase === "Connected" };
  } catch {
    return undefined; // A gateway's view not yet complete.
  }
}

/**
 * Where peer `peerClusterId`'s end of the tunnel answers, as this cluster reaches it (its tunnel
 * address, which route agents send to the gateway's node): on a provider, where its consumer's API
 * server answers the pods it offloaded. Undefined until this end's gateway has said. Pure.
 */
export function peerTunnelAddress(endpoints: readonly TunnelEndpoint[], peerClusterId: string): string | undefined {
  return ownEndpointToward(endpoints, peerClusterId)?.status?.remoteTunnelAddress || undefined;
}

/** `address` as the consumer sees it; undefined when it is not a pod address of the provider. */
export function addressAsSeen(address: string | undefined, view: PodAddressView | undefined): string | undefined {
  if (!address || !view) return undefined;
  if (!view.real.contains(address)) return undefined;
  return translateAddress(address, view.real, view.asSeen);
}

/**
 * The consumer pod's status, from the provider pod's: phase, conditions, container statuses and
 * restarts as they are, and the address remapped to how the consumer reaches it (an address the
 * consumer cannot reach is left out, so no Service sends traffic to it).
 */
export function reflectPodStatus(
  remote: V1PodStatus | undefined,
  view: PodAddressView | undefined,
  hostIP: string | undefined,
): V1PodStatus {
  const podIP = addressAsSeen(remote?.podIP, view);
  const offloaded: V1PodCondition = {
    type: OFFLOADED_CONDITION,
    status: "True",
    reason: "Running" === remote?.phase ? "Running" : "Accepted",
    message: "the provider accepted the pod",
  };
  return {
    phase: remote?.phase ?? "Pending",
    conditions: [...(remote?.conditions ?? []), offloaded],
    ...(remote?.containerStatuses ? { containerStatuses: remote.containerStatuses } : {}),
    ...(remote?.initContainerStatuses ? { initContainerStatuses: remote.initContainerStatuses } : {}),
    ...(remote?.startTime ? { startTime: remote.startTime } : {}),
    ...(remote?.qosClass ? { qosClass: remote.qosClass } : {}),
    ...(remote?.message ? { message: remote.message } : {}),
    ...(remote?.reason ? { reason: remote.reason } : {}),
    ...(podIP ? { podIP, podIPs: [{ ip: podIP }] } : {}),
    ...(hostIP ? { hostIP, hostIPs: [{ ip: hostIP }] } : {}),
  };
}

/** The consumer pod's status when the provider refused it, or the pod cannot be offloaded: Pending, with why. */
export function refusedPodStatus(refusal: Refusal): V1PodStatus {
  return {
    phase: "Pending",
    conditions: [
      {
        type: OFFLOADED_CONDITION,
        status: "False",
        reason: refusal.reason,
        message: refusal.message,
      },
    ],
  };
}

/** The ConfigMaps and Secrets a pod spec reads: volumes, projected volumes, env, envFrom and image pull secrets. */
export function referencedObjects(spec: V1PodSpec): { configMaps: string[]; secrets: string[] } {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  const fromVolume = (v: V1Volume): void => {
    if (v.configMap?.name) configMaps.add(v.configMap.name);
    if (v.secret?.secretName) secrets.add(v.secret.secretName);
    for (const source of v.projected?.sources ?? []) {
      if (source.configMap?.name) configMaps.add(source.configMap.name);
      if (source.secret?.name) secrets.add(source.secret.name);
    }
  };
  (spec.volumes ?? []).forEach(fromVolume);
  for (const container of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    for (const env of container.env ?? []) {
      if (env.valueFrom?.configMapKeyRef?.name) configMaps.add(env.valueFrom.configMapKeyRef.name);
      if (env.valueFrom?.secretKeyRef?.name) secrets.add(env.valueFrom.secretKeyRef.name);
    }
    for (const from of container.envFrom ?? []) {
      if (from.configMapRef?.name) configMaps.add(from.configMapRef.name);
      if (from.secretRef?.name) secrets.add(from.secretRef.name);
    }
  }
  for (const pull of spec.imagePullSecrets ?? []) if (pull.name) secrets.add(pull.name);
  return { configMaps: [...configMaps].sort(), secrets: [...secrets].sort() };
}

/** The kube-root-ca.crt ConfigMap every namespace has of its own: never reflected over the provider's. */
export const NAMESPACE_OWN_CONFIGMAPS: ReadonlySet<string> = new Set(["kube-root-ca.crt"]);

/** Secret types a consumer may not reflect: they would make the provider mint or hold credentials. */
const UNREFLECTED_SECRET_TYPES: ReadonlySet<string> = new Set(["kubernetes.io/service-account-token"]);

const reflectedLabels = { [MANAGED_BY_LABEL]: MANAGED_BY, [REFLECTED_LABEL]: "true" };

/** The copy of a consumer ConfigMap in the remote namespace. */
export function forgeReflectedConfigMap(source: V1ConfigMap, remoteNamespace: string): V1ConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: source.metadata!.name!, namespace: remoteNamespace, labels: reflectedLabels },
    ...(source.data ? { data: source.data } : {}),
    ...(source.binaryData ? { binaryData: source.binaryData } : {}),
  };
}

/** The copy of a consumer Secret in the remote namespace; undefined for a type that is never reflected. */
export function forgeReflectedSecret(source: V1Secret, remoteNamespace: string): V1Secret | undefined {
  if (source.type && UNREFLECTED_SECRET_TYPES.has(source.type)) return undefined;
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: source.metadata!.name!, namespace: remoteNamespace, labels: reflectedLabels },
    ...(source.type ? { type: source.type } : {}),
    ...(source.data ? { data: source.data } : {}),
  };
}

/**
 * The name of the consumer namespace `namespace` on a provider: the same name, or (the default)
 * suffixed with the consumer's cluster id, so that two consumers' namespaces never collide.
 *
 * @throws Error naming the namespace when the result is longer than a namespace name may be.
 */
export function remoteNamespaceName(namespace: string, consumerClusterId: string, naming: "suffixed" | "same"): string {
  const name = naming === "same" ? namespace : `${namespace}-${consumerClusterId}`;
  if (name.length > 63) {
    throw new Error(
      `the remote name of namespace "${namespace}" would be "${name}", ${name.length} characters; ` +
        `a namespace name has at most 63 (use a shorter namespace, or naming "same")`,
    );
  }
  return name;
}
