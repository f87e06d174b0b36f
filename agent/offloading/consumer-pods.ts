/**
 * The consumer's side of offloaded pods, per peering, as a kubelet would be for its virtual node:
 * each pod bound to the node, in a namespace offloaded to that peering's provider, is asked for
 * there (an OffloadedPod, with the identity the peering issued) with the ConfigMaps and Secrets it
 * reads, and its service account's token (consumer-tokens.ts); the provider pod's status comes
 * back onto it, with the address as this cluster reaches it; a refusal shows as its `Offloaded` condition and an event. A pod being deleted here is
 * withdrawn there first, and removed here once the provider's is gone; a request whose pod is gone
 * here is withdrawn. Pods of namespaces that are not offloaded are never sent anywhere.
 */
import * as k8s from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import type { NamespaceOffloading, OffloadedPod, OutgoingPeering } from "../../core/api/index.js";
import { describeFailure, ensureObject, isNotFound, readOptional, serverOf } from "../../core/kube/client.js";
import { deleteOffloading, listOffloading } from "../../core/offloading/objects.js";
import type { Refusal } from "../../core/offloading/pod-policy.js";
import { eventsToReflect } from "../../core/offloading/events.js";
import {
  forgeOffloadedPod,
  forgeReflectedConfigMap,
  forgeReflectedSecret,
  deadlineChange,
  imageChanges,
  metadataChanges,
  mountsServiceAccountToken,
  NAMESPACE_OWN_CONFIGMAPS,
  OFFLOADED_CONDITION,
  portableAnnotations,
  referencedObjects,
  REFLECTED_LABEL,
  reflectPodStatus,
  refusedPodStatus,
  type PodAddressView,
} from "../../core/offloading/reflection.js";
import type { Reporter } from "../reporter.js";
import type { HeldCopies } from "./consumer-shortcuts.js";
import { reflectTokens } from "./consumer-tokens.js";
import { mapLimited, POD_WORKERS } from "../limited.js";
import { internalIpOf } from "../../core/kube/nodes.js";

const STEP = "offloading (consumer)";

/** One peering as the pod reflection works with it. */
export interface PeeringReach {
  readonly peering: OutgoingPeering;
  /** The peering's identity on its provider. */
  readonly provider: k8s.KubeConfig;
  /** How this cluster sees the provider's pod addresses; undefined while the tunnel has not said. */
  readonly view?: PodAddressView;
}

/** What a pass over one peering's pods found. */
export interface PodPass {
  /** Whether something waits on the provider (a pod starting, a removal under way): pass again soon. */
  readonly pending: boolean;
  /** Consumer namespaces that still have pods on this peering's virtual node. */
  readonly namespacesWithPods: ReadonlySet<string>;
  /** The copies of ConfigMaps and Secrets the provider holds, per consumer namespace. */
  readonly copies: ReadonlyMap<string, HeldCopies>;
}

/** The remote namespace each consumer namespace offloaded to this virtual node has, once its provider accepted it. */
export function offloadedNamespaces(
  offloadings: readonly NamespaceOffloading[],
  virtualNode: string,
): Map<string, string> {
  const ready = new Map<string, string>();
  for (const o of offloadings) {
    if (o.metadata.deletionTimestamp || !o.spec.virtualNodes.includes(virtualNode)) continue;
    const report = o.status?.remotes?.find((r) => r.virtualNode === virtualNode);
    if (report?.phase === "Ready") ready.set(o.metadata.namespace!, o.spec.remoteNamespace);
  }
  return ready;
}

/** The parts of a pod status this side writes, in a form two of them compare by. */
function comparable(status: k8s.V1PodStatus | undefined): string {
  const strip = (conditions: k8s.V1PodCondition[] | undefined) =>
    (conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message }));
  return JSON.stringify({
    phase: status?.phase,
    conditions: strip(status?.conditions),
    containerStatuses: status?.containerStatuses,
    initContainerStatuses: status?.initContainerStatuses,
    podIP: status?.podIP,
    hostIP: status?.hostIP,
    observedGeneration: status?.observedGeneration,
  });
}

/** Writes a consumer pod's status when it differs, keeping the scheduler's PodScheduled condition, and says why in an event when the pod is refused anew. */
async function writePodStatus(
  kc: k8s.KubeConfig,
  pod: k8s.V1Pod,
  next: k8s.V1PodStatus,
  reporter: Reporter,
): Promise<void> {
  const scheduled = (pod.status?.conditions ?? []).filter((c) => c.type === "PodScheduled");
  const status = {
    ...next,
    conditions: [...scheduled, ...(next.conditions ?? []).filter((c) => c.type !== "PodScheduled")],
    // As a kubelet does: this status answers the pod's spec as of this generation, which this pass
    // has sent on to the provider (a spec the provider has not seen yet gets no status write).
    ...(pod.metadata?.generation !== undefined ? { observedGeneration: pod.metadata.generation } : {}),
  };
  if (comparable(pod.status) === comparable(status)) return;
  const { name, namespace, uid } = pod.metadata!;
  await kc
    .makeApiClient(k8s.CoreV1Api)
    .patchNamespacedPodStatus(
      { name: name!, namespace: namespace!, body: { metadata: { uid }, status } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )
    .catch((error: unknown) => {
      if (isNotFound(error)) return; // Gone meanwhile.
      return describeFailure(`${STEP}: writing the status of Pod ${namespace}/${name}`, serverOf(kc))(error);
    });
  const before = pod.status?.conditions?.find((c) => c.type === OFFLOADED_CONDITION);
  const after = status.conditions.find((c) => c.type === OFFLOADED_CONDITION);
  if (after?.status === "False" && (before?.status !== "False" || before.reason !== after.reason)) {
    await recordEvent(
      kc,
      { apiVersion: "v1", kind: "Pod", metadata: pod.metadata },
      { reason: after.reason!, message: after.message ?? "" },
    );
    reporter.warn(`${STEP}: pod ${namespace}/${name} not offloaded: ${after.reason}: ${after.message}`);
  }
}

/** The copies of provider events made so far, per virtual node (events.ts names them). */
const reflectedEventNames = new Map<string, Set<string>>();

/**
 * The events about pods in `remoteNamespace` on the provider. Best effort: a provider whose
 * agent does not grant them yet (an older version) gives none, and the pods are reflected anyway.
 */
async function podEventsOf(provider: k8s.KubeConfig, remoteNamespace: string): Promise<k8s.CoreV1Event[]> {
  return provider
    .makeApiClient(k8s.CoreV1Api)
    .listNamespacedEvent({ namespace: remoteNamespace, fieldSelector: "involvedObject.kind=Pod" })
    .then(
      (list) => list.items,
      () => [],
    );
}

/** Makes the consumer's copies of provider events (events.ts checked them); one made before is skipped. */
async function copyEvents(kc: k8s.KubeConfig, copies: readonly k8s.CoreV1Event[], made: Set<string>): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  for (const copy of copies) {
    const { name, namespace } = copy.metadata!;
    await core.createNamespacedEvent({ namespace: namespace!, body: copy }).catch((error: unknown) => {
      if ((error as { code?: number }).code === 409) return; // Made before this agent started.
      describeFailure(
        `${STEP}: copying the provider's event ${name} onto Pod ${namespace}/${copy.involvedObject.name}`,
        serverOf(kc),
      )(error);
    });
    made.add(name!);
  }
}

/** A Warning event on `object` (a pod, a Service), as `kubectl describe` shows it. */
export async function recordEvent(
  kc: k8s.KubeConfig,
  object: { readonly apiVersion: string; readonly kind: string; readonly metadata?: k8s.V1ObjectMeta },
  refusal: Refusal,
): Promise<void> {
  const { name, namespace, uid } = object.metadata!;
  const { apiVersion, kind } = object;
  const now = new Date();
  await kc
    .makeApiClient(k8s.CoreV1Api)
    .createNamespacedEvent({
      namespace: namespace!,
      body: {
        metadata: { name: `${name}.${randomBytes(8).toString("hex")}`, namespace },
        involvedObject: { apiVersion, kind, name, namespace, uid },
        reason: refusal.reason,
        message: refusal.message,
        type: "Warning",
        source: { component: "pulumi-liqo-agent" },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      },
    })
    .catch(describeFailure(`${STEP}: recording an event on ${kind} ${namespace}/${name}`, serverOf(kc)));
}

/**
 * Copies the ConfigMaps and Secrets that `pods` read into `remoteNamespace` when they differ from
 * the copies there, and removes the copies none of them reads any more; resolves the copies held.
 */
async function reflectObjects(
  kc: k8s.KubeConfig,
  reach: PeeringReach,
  namespace: string,
  remoteNamespace: string,
  pods: readonly k8s.V1Pod[],
): Promise<HeldCopies> {
  const local = kc.makeApiClient(k8s.CoreV1Api);
  const remote = reach.provider.makeApiClient(k8s.CoreV1Api);
  const endpoint = serverOf(reach.provider);
  const wanted = { configMaps: new Set<string>(), secrets: new Set<string>() };
  for (const pod of pods) {
    const refs = referencedObjects(pod.spec!);
    refs.configMaps.filter((n) => !NAMESPACE_OWN_CONFIGMAPS.has(n)).forEach((n) => wanted.configMaps.add(n));
    refs.secrets.forEach((n) => wanted.secrets.add(n));
  }
  const selector = { namespace: remoteNamespace, labelSelector: `${REFLECTED_LABEL}=true` };
  const [copiedConfigMaps, copiedSecrets] = await Promise.all([
    remote.listNamespacedConfigMap(selector),
    remote.listNamespacedSecret(selector),
  ]).catch(describeFailure(`${STEP}: listing the reflected objects in ${remoteNamespace}`, endpoint));
  const copies = new Map<string, { data?: unknown; binaryData?: unknown; type?: string }>([
    ...copiedConfigMaps.items.map((c) => [`ConfigMap/${c.metadata!.name}`, c] as const),
    ...copiedSecrets.items.map((s) => [`Secret/${s.metadata!.name}`, s] as const),
  ]);
  const sameContent = (
    a: { data?: unknown; binaryData?: unknown },
    b: { data?: unknown; binaryData?: unknown } | undefined,
  ) =>
    b !== undefined &&
    JSON.stringify(a.data ?? {}) === JSON.stringify(b.data ?? {}) &&
    JSON.stringify(a.binaryData ?? {}) === JSON.stringify(b.binaryData ?? {});
  const optional = async <T>(read: () => Promise<T>): Promise<T | undefined> =>
    read().catch((error: unknown) => {
      if (isNotFound(error)) return undefined; // The pod waits for it there as it would here.
      throw error;
    });
  for (const name of wanted.configMaps) {
    const source = await optional(() => local.readNamespacedConfigMap({ name, namespace }));
    if (!source) {
      // Deleted here: an optional volume's file goes there too, as it would on this cluster's kubelet.
      wanted.configMaps.delete(name);
      continue;
    }
    const copy = forgeReflectedConfigMap(source, remoteNamespace);
    if (sameContent(copy, copies.get(`ConfigMap/${name}`))) continue;
    await ensureObject(reach.provider, copy).catch(
      describeFailure(`${STEP}: reflecting ConfigMap ${namespace}/${name} to ${remoteNamespace}`, endpoint),
    );
  }
  for (const name of wanted.secrets) {
    const source = await optional(() => local.readNamespacedSecret({ name, namespace }));
    const copy = source && forgeReflectedSecret(source, remoteNamespace);
    if (!source) wanted.secrets.delete(name);
    if (!copy || sameContent(copy, copies.get(`Secret/${name}`))) continue;
    await ensureObject(reach.provider, copy).catch(
      // The message names the Secret, never its content.
      describeFailure(`${STEP}: reflecting Secret ${namespace}/${name} to ${remoteNamespace}`, endpoint),
    );
  }
  for (const key of copies.keys()) {
    const [kind, name] = key.split("/") as ["ConfigMap" | "Secret", string];
    if ((kind === "ConfigMap" ? wanted.configMaps : wanted.secrets).has(name)) continue;
    const remove =
      kind === "ConfigMap"
        ? remote.deleteNamespacedConfigMap({ name, namespace: remoteNamespace })
        : remote.deleteNamespacedSecret({ name, namespace: remoteNamespace });
    await remove.catch((error: unknown) => {
      if (!isNotFound(error))
        describeFailure(`${STEP}: removing reflected ${kind} ${remoteNamespace}/${name}`, endpoint)(error);
    });
  }
  return wanted;
}

/** Finishes the removal of a consumer pod whose provider side is gone, as its kubelet would (grace 0, this very pod). */
async function finishRemoval(kc: k8s.KubeConfig, pod: k8s.V1Pod): Promise<void> {
  const { name, namespace, uid } = pod.metadata!;
  await kc
    .makeApiClient(k8s.CoreV1Api)
    .deleteNamespacedPod({
      name: name!,
      namespace: namespace!,
      // In the body: with a body, the API server reads no option from the query.
      body: { gracePeriodSeconds: 0, preconditions: { uid } },
    })
    .catch((error: unknown) => {
      const code = (error as { code?: number }).code;
      if (code === 404 || code === 409) return; // Gone, or another pod of that name by now.
      return describeFailure(`${STEP}: removing Pod ${namespace}/${name}`, serverOf(kc))(error);
    });
}

/** One pass over the pods bound to one peering's virtual node. */
export async function reflectPeeringPods(
  kc: k8s.KubeConfig,
  reach: PeeringReach,
  offloadings: readonly NamespaceOffloading[],
  reporter: Reporter,
): Promise<PodPass> {
  const { peering, provider } = reach;
  const virtualNode = peering.spec.virtualNodeName;
  const tenant = peering.spec.tenantNamespace;
  const local = kc.makeApiClient(k8s.CoreV1Api);
  const remote = provider.makeApiClient(k8s.CoreV1Api);
  const pods = (
    await local
      .listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${virtualNode}` })
      .catch(describeFailure(`${STEP}: listing the pods on virtual node ${virtualNode}`, serverOf(kc)))
  ).items;
  // The node's address is each pod's host IP, as a kubelet reports its own (the virtual node's
  // kubelet endpoint: logs and exec of these pods go there).
  const node = await readOptional(() => local.readNode({ name: virtualNode })).catch(
    describeFailure(`${STEP}: reading virtual node ${virtualNode}`, serverOf(kc)),
  );
  const hostIP = internalIpOf(node);
  const requests = (await listOffloading<OffloadedPod>(provider, "offloadedpods", tenant)) ?? [];
  const requestOf = new Map(requests.map((r) => [r.spec.consumerUid, r]));
  const remoteOf = offloadedNamespaces(offloadings, virtualNode);
  const awaited = new Set(
    offloadings
      .filter((o) => !o.metadata.deletionTimestamp && o.spec.virtualNodes.includes(virtualNode))
      .filter(
        (o) =>
          !["Ready", "Refused"].includes(o.status?.remotes?.find((r) => r.virtualNode === virtualNode)?.phase ?? ""),
      )
      .map((o) => o.metadata.namespace!),
  );
  const withdrawn = new Set(
    offloadings
      .filter((o) => o.metadata.deletionTimestamp && o.spec.virtualNodes.includes(virtualNode))
      .map((o) => o.metadata.namespace!),
  );
  const remotePods = new Map<string, k8s.V1Pod>();
  const remoteEvents = new Map<string, k8s.CoreV1Event[]>();
  for (const remoteNamespace of new Set(remoteOf.values())) {
    const listed = await remote
      .listNamespacedPod({ namespace: remoteNamespace })
      .catch(describeFailure(`${STEP}: listing the pods of ${remoteNamespace}`, serverOf(provider)));
    for (const p of listed.items) remotePods.set(`${remoteNamespace}/${p.metadata!.name}`, p);
    remoteEvents.set(remoteNamespace, await podEventsOf(provider, remoteNamespace));
  }
  const made = reflectedEventNames.get(virtualNode) ?? new Set<string>();
  reflectedEventNames.set(virtualNode, made);
  let pending = false;
  const namespacesWithPods = new Set<string>();
  const byNamespace = new Map<string, k8s.V1Pod[]>();
  for (const pod of pods) {
    const namespace = pod.metadata!.namespace!;
    const request = requestOf.get(pod.metadata!.uid!);
    // A pod that was never offloaded does not hold its namespace's withdrawal up: a controller
    // replacing the drained pods may make ones the virtual node takes again (held there by their
    // own spec, or admitted before the placement stopped), and waiting for them never ends. Each
    // is removed below like the others; once the withdrawal is through, one bound here stays
    // Pending, saying why (NamespaceNotOffloaded).
    if (request || !withdrawn.has(namespace)) namespacesWithPods.add(namespace);
    if (pod.metadata?.deletionTimestamp) {
      pending = true;
      if (request) {
        if (!request.metadata.deletionTimestamp)
          await deleteOffloading(provider, "offloadedpods", tenant, request.metadata.name!);
        continue;
      }
      await finishRemoval(kc, pod);
      continue;
    }
    const remoteNamespace = remoteOf.get(namespace);
    if (!remoteNamespace && awaited.has(namespace)) {
      pending = true; // Its provider has not answered for the namespace yet.
      continue;
    }
    if (withdrawn.has(namespace) || (!remoteNamespace && request)) {
      // Its namespace is no longer offloaded there (withdrawn, or that peering taken out of it):
      // the pod goes, through the removal above, and its controller makes another.
      await local.deleteNamespacedPod({ name: pod.metadata!.name!, namespace }).catch((error: unknown) => {
        if (!isNotFound(error))
          describeFailure(`${STEP}: removing Pod ${namespace}/${pod.metadata!.name}`, serverOf(kc))(error);
      });
      pending = true;
      continue;
    }
    if (!remoteNamespace) {
      await writePodStatus(
        kc,
        pod,
        refusedPodStatus({
          reason: "NamespaceNotOffloaded",
          message: `namespace ${namespace} is not offloaded to provider ${peering.spec.providerClusterName} (virtual node ${virtualNode}), or not yet`,
        }),
        reporter,
      );
      continue;
    }
    byNamespace.set(namespace, [...(byNamespace.get(namespace) ?? []), pod]);
  }
  const tokensOf = new Map(offloadings.map((o) => [o.metadata.namespace!, o.spec.serviceAccountTokens ?? "consumer"]));
  const copies = new Map<string, HeldCopies>();
  for (const [namespace, namespacePods] of byNamespace) {
    const remoteNamespace = remoteOf.get(namespace)!;
    copies.set(namespace, await reflectObjects(kc, reach, namespace, remoteNamespace, namespacePods));
    // Without a tunnel to this provider nothing would lead its pods back to this cluster's API
    // server: they get no token, as with serviceAccountTokens "none".
    const withToken =
      tokensOf.get(namespace) === "none" || !reach.view
        ? []
        : namespacePods.filter((pod) => mountsServiceAccountToken(pod.spec!));
    await reflectTokens(kc, provider, namespace, remoteNamespace, withToken, new Date());
    const tokenUids = new Set(withToken.map((pod) => pod.metadata!.uid!));
    // Each pod's calls wait on both API servers: several pods at once, as many kubelet workers would.
    // Pods not asked for yet go first: the provider can start nothing before their requests, and
    // the statuses of the others only wait to be read again.
    const asked = (pod: k8s.V1Pod): boolean => requestOf.has(pod.metadata!.uid!);
    const newFirst = [...namespacePods.filter((p) => !asked(p)), ...namespacePods.filter(asked)];
    const stillPending = await mapLimited(newFirst, POD_WORKERS, async (pod): Promise<boolean> => {
      const request = requestOf.get(pod.metadata!.uid!);
      // A pod without a request asks for one; one whose image (kubectl set image), deadline, labels or
      // annotations changed here updates it, and the provider patches its pod.
      const outdated =
        request &&
        !request.metadata.deletionTimestamp &&
        (imageChanges(request.spec.pod, pod.spec!).length > 0 ||
          deadlineChange(request.spec.pod, pod.spec!) !== undefined ||
          metadataChanges(
            { labels: request.spec.labels, annotations: request.spec.annotations },
            { labels: pod.metadata?.labels, annotations: portableAnnotations(pod.metadata?.annotations) },
          ) !== undefined);
      if (!request || outdated) {
        const consumerToken = tokenUids.has(pod.metadata!.uid!);
        await ensureObject(provider, forgeOffloadedPod(pod, remoteNamespace, tenant, { consumerToken })).catch(
          describeFailure(
            `${STEP}: ${request ? "updating the request of" : "asking for"} pod ${namespace}/${pod.metadata!.name}`,
            serverOf(provider),
          ),
        );
        return true;
      }
      const answer = request.status;
      const current = answer?.observedGeneration === (request.metadata.generation ?? 1);
      if (current && answer?.phase === "Refused") {
        await writePodStatus(
          kc,
          pod,
          refusedPodStatus({ reason: answer.reason ?? "Refused", message: answer.message ?? "" }),
          reporter,
        );
        return false;
      }
      const live = remotePods.get(`${remoteNamespace}/${pod.metadata!.name}`);
      if (!current || !live) return true;
      const status = reflectPodStatus(live.status, reach.view, hostIP);
      await writePodStatus(kc, pod, status, reporter);
      await copyEvents(kc, eventsToReflect(remoteEvents.get(remoteNamespace) ?? [], pod, live, made, new Date()), made);
      // Still starting: pass again soon. Running with its address, or finished (a Job's), it is not.
      return status.phase === "Pending" || (status.phase === "Running" && !status.podIP);
    });
    pending ||= stillPending.some(Boolean);
  }
  // The names of copies of pods gone here are forgotten: the set stays as small as the node's pods.
  const podNames = new Set(pods.map((p) => p.metadata!.name!));
  for (const name of made) if (!podNames.has(name.slice(0, name.lastIndexOf(".")))) made.delete(name);
  const uids = new Set(pods.map((p) => p.metadata!.uid!));
  for (const request of requests) {
    if (uids.has(request.spec.consumerUid) || request.metadata.deletionTimestamp) continue;
    await deleteOffloading(provider, "offloadedpods", tenant, request.metadata.name!);
  }
  return { pending, namespacesWithPods, copies };
}
