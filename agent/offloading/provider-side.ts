/**
 * The provider's side of offloading: each pass relists every tenant's RemoteNamespaces and
 * OffloadedPods and answers them. A namespace is made when its name is the consumer's to take; a
 * pod is made when its spec passes the provider's rules (pod-policy.ts) and fits in the offer
 * (budget.ts), else it is refused with a reason, and nothing is made for it. What no request
 * stands for any more (a namespace, a pod, also one whose request's finalizer a consumer stripped)
 * is removed, and an accepted pod that is gone is made again.
 *
 * Nothing a consumer writes is trusted: a request counts only in a live tenant namespace, for the
 * consumer that namespace belongs to, and the pod made of it is placed and labelled by this side.
 */
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  tenantNamespace,
  type OffloadedPod,
  type OfferedResources,
  type OffloadingAnswer,
  type RemoteNamespace,
  type ResourceOffer,
} from "../../core/api/index.js";
import { forgeRemotePodsBinding } from "../../core/cluster/agent-rbac.js";
import { describeFailure, ensureObject, serverOf } from "../../core/kube/client.js";
import { ensureObjectQuota } from "../../core/kube/quota.js";
import { deleteNamespaceAndPods } from "../../core/kube/namespaces.js";
import { forgeRemoteNamespaceQuota } from "../../core/offloading/remote-namespace-quota.js";
import {
  formatCpuMillis,
  formatMemoryBytes,
  parseCpuMillis,
  parseMemoryBytes,
} from "../../core/negotiation/quantity.js";
import { hasFinished, podRequests, refuseOverOffer, type PodRequests } from "../../core/offloading/budget.js";
import {
  forgeRemoteNamespace,
  forgeRemoteNamespaceBinding,
  isRemoteNamespaceOf,
  refuseRemoteNamespace,
} from "../../core/offloading/namespaces.js";
import { REMOTE_NAMESPACE_LABEL } from "../../core/api/names.js";
import { listOffloading, setOffloadingFinalizer, writeOffloadingStatus } from "../../core/offloading/objects.js";
import { refusePodSpec, type Refusal } from "../../core/offloading/pod-policy.js";
import { claimsOf, isHeldClaimOf, refuseUnheldClaims } from "../../core/offloading/claim-reflection.js";
import {
  CONSUMER_POD_UID_LABEL,
  forgeRemotePod,
  deadlineChange,
  imageChanges,
  metadataChanges,
  peerTunnelAddress,
  refuseConsumerToken,
} from "../../core/offloading/reflection.js";
import { listTunnelEndpoints } from "../../core/network-fabric/endpoints.js";
import { consumerNamespaceOf } from "../../core/offloading/dns-names.js";
import { consumerDnsAddress } from "../dns/zones.js";
import { mapLimited, POD_WORKERS } from "../limited.js";
import type { Reporter } from "../reporter.js";

const STEP = "offloading (provider)";

/** Finalizer this side keeps on a request it accepted, until what it made for it is gone. */
export const PROVIDER_FINALIZER = `${API_GROUP}/provider`;

/**
 * The consumer each tenant namespace belongs to, by the namespace's name: the live ones, and those
 * being deleted (a peering ended), whose requests count as withdrawn: what was made for them goes,
 * then their finalizers, so that the tenant namespace can go too.
 */
export function tenantsOf(namespaces: readonly k8s.V1Namespace[]): {
  live: Map<string, string>;
  ending: Map<string, string>;
} {
  const live = new Map<string, string>();
  const ending = new Map<string, string>();
  for (const ns of namespaces) {
    const id = ns.metadata?.labels?.[REMOTE_CLUSTER_LABEL];
    const name = ns.metadata?.name;
    if (!id || !name || name !== tenantNamespace(id)) continue;
    (ns.metadata?.deletionTimestamp ? ending : live).set(name, id);
  }
  return { live, ending };
}

/** The sum of the offers a consumer holds here (one per peering). */
function offerOf(offers: readonly ResourceOffer[]): OfferedResources {
  const cpu = offers.reduce((sum, o) => sum + parseCpuMillis(o.spec.resources.cpu), 0);
  const memory = offers.reduce((sum, o) => sum + parseMemoryBytes(o.spec.resources.memory), 0);
  return {
    cpu: formatCpuMillis(cpu),
    memory: formatMemoryBytes(memory),
    pods: offers.reduce((sum, o) => sum + o.spec.resources.pods, 0),
  };
}

export const sameAnswer = (a: OffloadingAnswer | undefined, b: OffloadingAnswer): boolean =>
  a?.phase === b.phase &&
  a?.reason === b.reason &&
  a?.message === b.message &&
  a?.observedGeneration === b.observedGeneration;

export const byAge = <T extends { metadata: k8s.V1ObjectMeta }>(a: T, b: T): number =>
  String(a.metadata.creationTimestamp ?? "").localeCompare(String(b.metadata.creationTimestamp ?? ""));

/** An API error's status code and message, when it is one. */
function apiRefusal(error: unknown): { code: number; message: string } | undefined {
  const code = (error as { code?: number }).code;
  if (typeof code !== "number" || code < 400 || code >= 500) return undefined;
  const body = (error as { body?: unknown }).body;
  const parsed = typeof body === "string" ? (JSON.parse(body) as { message?: string }) : (body as { message?: string });
  return { code, message: parsed?.message ?? String(error) };
}

/**
 * Brings a running pod to its request: its images and its deadline (the changes Kubernetes allows
 * to a running pod's spec), its labels and annotations (which its downward API volume follows); any
 * other change of the request is refused, and the pod runs on as it is.
 */
async function bringToRequest(
  core: k8s.CoreV1Api,
  live: k8s.V1Pod,
  request: OffloadedPod,
  consumer: string,
): Promise<{ outcome: Pick<OffloadingAnswer, "phase" | "reason" | "message">; images: number }> {
  const refusal = refusePodSpec(request.spec.pod);
  if (refusal) return { outcome: { phase: "Refused", ...refusal }, images: 0 };
  const changes = imageChanges(live.spec!, request.spec.pod);
  const deadline = deadlineChange(live.spec!, request.spec.pod);
  const metadata = metadataChanges(live.metadata!, forgeRemotePod(request, consumer).metadata!);
  if (changes.length === 0 && deadline === undefined && !metadata) return { outcome: { phase: "Accepted" }, images: 0 };
  const images: Record<string, { name: string; image: string }[]> = {};
  for (const { list, name, image } of changes) (images[list] ??= []).push({ name, image });
  const patch = { ...images, ...(deadline !== undefined ? { activeDeadlineSeconds: deadline } : {}) };
  try {
    await core.patchNamespacedPod(
      {
        name: live.metadata!.name!,
        namespace: live.metadata!.namespace!,
        body: { ...(metadata ? { metadata } : {}), ...(Object.keys(patch).length > 0 ? { spec: patch } : {}) },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.StrategicMergePatch),
    );
    return { outcome: { phase: "Accepted" }, images: changes.length };
  } catch (error) {
    const refused = apiRefusal(error);
    // This agent's own right to patch missing (an install from before it had one) is not the pod's fault.
    if (!refused || (refused.code === 403 && refused.message.includes("cannot patch resource"))) throw error;
    return {
      images: 0,
      outcome: {
        phase: "Refused",
        reason: "Invalid",
        message: `the provider's API server refused the new images or deadline: ${refused.message}`,
      },
    };
  }
}

/** What a pass did. */
export interface OffloadingPass {
  /** Namespaces and pods made or removed, answers written. */
  readonly changes: number;
}

/** One pass of the provider's side of offloading. */
export async function answerOffloadingRequests(kc: k8s.KubeConfig, reporter: Reporter): Promise<OffloadingPass> {
  const endpoint = serverOf(kc);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const [namespaceRequests, podRequestObjects, offers] = await Promise.all([
    listOffloading<RemoteNamespace>(kc, "remotenamespaces"),
    listOffloading<OffloadedPod>(kc, "offloadedpods"),
    listOffloading<ResourceOffer>(kc, "resourceoffers"),
  ]);
  if (!namespaceRequests || !podRequestObjects || !offers) return { changes: 0 };
  const managed = `${MANAGED_BY_LABEL}=${MANAGED_BY},${REMOTE_CLUSTER_LABEL}`;
  const [namespaces, pods] = await Promise.all([
    core.listNamespace({ labelSelector: managed }),
    core.listPodForAllNamespaces({ labelSelector: `${managed},${CONSUMER_POD_UID_LABEL}` }),
  ]).catch(describeFailure(`${STEP}: listing the namespaces and pods made for consumers`, endpoint));
  const { live: tenants, ending } = tenantsOf(namespaces.items);
  // Where each consumer's API server answers its pods through the tunnel: read only when a pod asks.
  const tunnelEnds = podRequestObjects.some((r) => r.spec.consumerToken) ? await listTunnelEndpoints(kc, STEP) : [];
  const withdrawn = (request: RemoteNamespace | OffloadedPod): boolean =>
    request.metadata.deletionTimestamp !== undefined || ending.has(request.metadata.namespace ?? "");
  let changes = 0;
  const answer = async (
    plural: "remotenamespaces" | "offloadedpods",
    object: RemoteNamespace | OffloadedPod,
    next: OffloadingAnswer,
  ): Promise<void> => {
    if (sameAnswer(object.status, next)) return;
    await writeOffloadingStatus(kc, plural, object, { reason: null, message: null, ...next });
    if (next.phase === "Refused") {
      reporter.warn(
        `${STEP}: refused ${plural} ${object.metadata.namespace}/${object.metadata.name}: ${next.reason}: ${next.message}`,
      );
    }
    changes += 1;
  };

  // Namespaces: the oldest request for a name wins it. Whether a name is taken is read once a
  // pass, for every request (any namespace may hold it, not only those made here).
  const everyNamespace = new Map<string, k8s.V1Namespace>(
    namespaceRequests.length === 0
      ? []
      : (await core.listNamespace().catch(describeFailure(`${STEP}: listing the namespaces`, endpoint))).items.map(
          (ns) => [ns.metadata!.name!, ns],
        ),
  );
  const granted = new Map<string, string>();
  for (const request of [...namespaceRequests].sort(byAge)) {
    const consumer = tenants.get(request.metadata.namespace ?? "") ?? ending.get(request.metadata.namespace ?? "");
    if (!consumer) continue;
    const name = request.metadata.name!;
    const generation = request.metadata.generation ?? 1;
    const existing = everyNamespace.get(name);
    if (withdrawn(request)) {
      // The namespace (and every pod in it) goes first; the finalizer last, so that the consumer
      // sees the request go only once the namespace is gone.
      if (isRemoteNamespaceOf(existing, consumer)) {
        if (!existing!.metadata!.deletionTimestamp) {
          await deleteNamespaceAndPods(kc, name).catch(
            describeFailure(`${STEP}: deleting Namespace ${name}`, endpoint),
          );
          reporter.info(`${STEP}: removing namespace ${name}: consumer ${consumer} withdrew it`);
          changes += 1;
        }
        continue;
      }
      await setOffloadingFinalizer(kc, "remotenamespaces", request, PROVIDER_FINALIZER, false);
      continue;
    }
    const refusal: Refusal | undefined =
      granted.has(name) && granted.get(name) !== consumer
        ? { reason: "NameTaken", message: `namespace "${name}" is already another consumer's` }
        : existing?.metadata?.deletionTimestamp
          ? undefined
          : refuseRemoteNamespace(name, existing, consumer);
    if (refusal) {
      await answer("remotenamespaces", request, { phase: "Refused", ...refusal, observedGeneration: generation });
      continue;
    }
    granted.set(name, consumer);
    if (existing?.metadata?.deletionTimestamp) continue; // The last one of that name is still going: made next pass.
    if (!existing || request.status?.phase !== "Accepted") {
      await ensureObject(kc, forgeRemoteNamespace(name, consumer)).catch(
        describeFailure(`${STEP}: applying Namespace ${name} for consumer ${consumer}`, endpoint),
      );
      // The quota first: the consumer's RoleBinding lets it store ConfigMaps and Secrets here.
      await ensureObjectQuota(kc, forgeRemoteNamespaceQuota(name, consumer), STEP);
      for (const binding of [forgeRemoteNamespaceBinding(name, consumer), forgeRemotePodsBinding(name)]) {
        await ensureObject(kc, binding).catch(
          describeFailure(`${STEP}: applying RoleBinding ${name}/${binding.metadata!.name}`, endpoint),
        );
      }
      reporter.info(`${STEP}: made namespace ${name} for consumer ${consumer}`);
      changes += 1;
    }
    await setOffloadingFinalizer(kc, "remotenamespaces", request, PROVIDER_FINALIZER, true);
    await answer("remotenamespaces", request, { phase: "Accepted", observedGeneration: generation });
  }
  for (const ns of namespaces.items) {
    const name = ns.metadata!.name!;
    if (ns.metadata?.labels?.[REMOTE_NAMESPACE_LABEL] !== "true" || ns.metadata.deletionTimestamp) continue;
    if (granted.get(name) === ns.metadata.labels[REMOTE_CLUSTER_LABEL]) continue;
    await deleteNamespaceAndPods(kc, name).catch(describeFailure(`${STEP}: deleting Namespace ${name}`, endpoint));
    reporter.info(`${STEP}: removed namespace ${name}: no request of its consumer stands for it any more`);
    changes += 1;
  }

  // Offloaded pods ask their names of this agent (core/offloading/dns-names.ts), each as of its consumer namespace.
  const consumerNamespaces = new Map<string, string>();
  for (const request of namespaceRequests) {
    const here = request.metadata.name!;
    const tenant = request.metadata.namespace ?? "";
    if (granted.get(here) === (tenants.get(tenant) ?? ending.get(tenant)))
      consumerNamespaces.set(here, consumerNamespaceOf(here, request.spec?.consumerNamespace));
  }
  // Read once a pass, and only when a pod is to be made.
  let nameserver: Promise<string | undefined> | undefined;
  const dnsOf = async (namespace: string) => {
    const address = await (nameserver ??= consumerDnsAddress(kc));
    return address
      ? { nameserver: address, consumerNamespace: consumerNamespaces.get(namespace) ?? namespace }
      : undefined;
  };

  // The claims made here for a consumer, per remote namespace: read once a pass, and only for a pod that mounts one.
  const heldClaims = new Map<string, Promise<Set<string>>>();
  const heldClaimsIn = (namespace: string, consumer: string): Promise<Set<string>> => {
    const listing =
      heldClaims.get(namespace) ??
      core
        .listNamespacedPersistentVolumeClaim({ namespace })
        .catch(describeFailure(`${STEP}: listing the claims of ${namespace}`, endpoint))
        .then((list) => new Set(list.items.filter((c) => isHeldClaimOf(c, consumer)).map((c) => c.metadata!.name!)));
    heldClaims.set(namespace, listing);
    return listing;
  };

  // Pods, per consumer: those accepted before count against the offer first, then the others by age.
  const podOf = new Map(pods.items.map((p) => [`${p.metadata!.namespace}/${p.metadata!.name}`, p]));
  const wanted = new Set<string>();
  const toMake: { request: OffloadedPod; key: string; consumer: string; consumerApiAddress: string | undefined }[] = [];
  for (const [tenant, consumer] of [...tenants, ...ending]) {
    const offer = offerOf(offers.filter((o) => o.metadata.namespace === tenant));
    const consumerApiAddress = peerTunnelAddress(tunnelEnds, consumer);
    const requests = podRequestObjects.filter((r) => r.metadata.namespace === tenant);
    const accepted = (r: OffloadedPod): boolean =>
      r.status?.phase === "Accepted" && r.status.observedGeneration === (r.metadata.generation ?? 1);
    const ordered = [...requests.filter(accepted).sort(byAge), ...requests.filter((r) => !accepted(r)).sort(byAge)];
    const running: PodRequests[] = [];
    for (const request of ordered) {
      const generation = request.metadata.generation ?? 1;
      const key = `${request.spec.namespace}/${request.spec.name}`;
      if (granted.get(request.spec.namespace) !== consumer && !withdrawn(request)) {
        await answer("offloadedpods", request, {
          phase: "Refused",
          reason: "NamespaceNotReady",
          message: `namespace "${request.spec.namespace}" is not one this consumer was given`,
          observedGeneration: generation,
        });
        continue;
      }
      const live = podOf.get(key);
      const ours = live?.metadata?.labels?.[CONSUMER_POD_UID_LABEL] === request.spec.consumerUid;
      if (withdrawn(request)) {
        // The pod goes first (below, as no request stands for it); the finalizer once it is gone.
        if (!ours) await setOffloadingFinalizer(kc, "offloadedpods", request, PROVIDER_FINALIZER, false);
        continue;
      }
      if (ours) wanted.add(key);
      if (accepted(request)) {
        if (ours && !hasFinished(live!)) running.push(podRequests(live!.spec!));
        if (live) continue;
        // Accepted, and gone: the provider lost it (a node went, someone deleted it). Made again below.
        reporter.warn(`${STEP}: pod ${key} of consumer ${consumer} is gone; making it again`);
      } else if (request.status?.phase === "Refused" && request.status.observedGeneration === generation) {
        // A refusal stands until the spec changes, except that an offer's room may free up, and a tunnel come up.
        if (!["ExceedsOffer", "TunnelNotReady"].includes(request.status.reason ?? "")) continue;
      }
      if (live && !ours) continue; // An older pod of that name is still going; it is removed below.
      if (live && ours) {
        // Made for an earlier generation of the request (its consumer changed the spec since), or
        // made and not answered (this agent stopped in between): the pod is brought to the request.
        const { outcome, images } = await bringToRequest(core, live, request, consumer).catch(
          describeFailure(`${STEP}: patching Pod ${key} for consumer ${consumer}`, endpoint),
        );
        if (!hasFinished(live)) running.push(podRequests(live.spec!));
        await answer("offloadedpods", request, { ...outcome, observedGeneration: generation });
        if (outcome.phase === "Accepted" && images > 0)
          reporter.info(`${STEP}: changed ${images} image(s) of pod ${key} for consumer ${consumer}`);
        continue;
      }
      let refusal: Refusal | undefined;
      try {
        refusal =
          refusePodSpec(request.spec.pod) ??
          refuseConsumerToken(request, consumerApiAddress) ??
          (claimsOf(request.spec.pod.volumes).length > 0
            ? refuseUnheldClaims(request.spec.pod, await heldClaimsIn(request.spec.namespace, consumer))
            : undefined) ??
          refuseOverOffer(offer, running, podRequests(request.spec.pod));
      } catch (error) {
        refusal = { reason: "Invalid", message: (error as Error).message };
      }
      if (refusal) {
        await answer("offloadedpods", request, { phase: "Refused", ...refusal, observedGeneration: generation });
        continue;
      }
      // Counted against the offer now, made below with the others of this pass.
      running.push(podRequests(request.spec.pod));
      wanted.add(key);
      toMake.push({ request, key, consumer, consumerApiAddress });
    }
  }
  // Several at once, as a kubelet's workers start pods: made one after the other, hundreds of pods
  // would each wait on every one before it.
  await mapLimited(toMake, POD_WORKERS, async ({ request, key, consumer, consumerApiAddress }) => {
    const generation = request.metadata.generation ?? 1;
    let refusal: Refusal | undefined;
    try {
      await core.createNamespacedPod({
        namespace: request.spec.namespace,
        body: forgeRemotePod(request, consumer, consumerApiAddress, await dnsOf(request.spec.namespace)),
      });
      await setOffloadingFinalizer(kc, "offloadedpods", request, PROVIDER_FINALIZER, true);
      reporter.info(`${STEP}: made pod ${key} for consumer ${consumer}`);
      changes += 1;
    } catch (error) {
      const refused = apiRefusal(error);
      if (!refused) return describeFailure(`${STEP}: creating Pod ${key} for consumer ${consumer}`, endpoint)(error);
      if (refused.code === 409) return; // A pod of that name, not listed yet: the next pass sees it.
      // This agent's own right in a namespace it just made may take a moment to apply: not the pod's fault.
      if (refused.code === 403 && refused.message.includes("cannot create resource")) {
        return describeFailure(`${STEP}: creating Pod ${key} for consumer ${consumer}`, endpoint)(error);
      }
      refusal = { reason: "Invalid", message: `the provider's API server refused the pod: ${refused.message}` };
    }
    await answer(
      "offloadedpods",
      request,
      refusal
        ? { phase: "Refused", ...refusal, observedGeneration: generation }
        : { phase: "Accepted", observedGeneration: generation },
    );
  });
  for (const [key, pod] of podOf) {
    if (wanted.has(key) || pod.metadata?.deletionTimestamp) continue;
    await core
      .deleteNamespacedPod({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace! })
      .catch(describeFailure(`${STEP}: deleting Pod ${key}`, endpoint));
    reporter.info(`${STEP}: removed pod ${key}: no request stands for it any more`);
    changes += 1;
  }
  return { changes };
}
