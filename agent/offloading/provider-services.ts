/**
 * The provider's side of Services across a peering: each pass relists every tenant's
 * ReflectedServices and answers them. A request counts only in a live tenant namespace, for a
 * remote namespace this agent made for that tenant's consumer, under the name its Service and
 * namespace give it (so one Service has one request); its Service must pass
 * `refuseServiceRequest` (ClusterIP or headless, endpoints among the consumer's pods as this
 * side's tunnel knows them; or ExternalName, which is answered by this agent's DNS to the
 * consumer's pods only, and makes nothing). Then the Service is made in the remote namespace, and an EndpointSlice
 * of the consumer's endpoints at the addresses this side of the tunnel reaches them by (not ready
 * while the tunnel is down). A Service or slice made here that no accepted request stands for any
 * more is removed; a Service of that name that is not this project's is never touched.
 */
import * as k8s from "@kubernetes/client-node";
import {
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  tenantRequestName,
  type ReflectedService,
} from "../../core/api/index.js";
import { getClusterIdentity } from "../../core/cluster/install.js";
import { deleteOptional, describeFailure, ensureObject, isNotFound, serverOf } from "../../core/kube/client.js";
import { statusOf } from "../../core/kube/errors.js";
import { Cidr } from "../../core/net/cidr.js";
import { listTunnelEndpoints } from "../../core/network-fabric/endpoints.js";
import { isRemoteNamespaceOf } from "../../core/offloading/namespaces.js";
import { listOffloading, writeOffloadingStatus } from "../../core/offloading/objects.js";
import type { Refusal } from "../../core/offloading/pod-policy.js";
import { peerAddressView } from "../../core/offloading/reflection.js";
import {
  forgeOutsideSlice,
  forgeReflectedService,
  keptClusterIP,
  outsideSliceName,
  reflectedLabels,
  SERVICE_NAME_LABEL,
  refuseServiceRequest,
  withTunnelDown,
  type ServiceRequest,
} from "../../core/offloading/service-reflection.js";
import type { Reporter } from "../reporter.js";
import { byAge, sameAnswer, tenantsOf } from "./provider-side.js";

const STEP = "offloading (provider services)";

/**
 * Why a request of consumer `consumer` for object `objectName` (a Service, a claim; of `kind`) of
 * its remote namespace `spec.namespace` is not held here, or undefined when its namespace and name
 * are right: a namespace made here for that consumer, and the one request name the object has.
 */
export function refuseTarget(
  request: { readonly metadata: k8s.V1ObjectMeta; readonly spec: { readonly namespace: string } },
  objectName: unknown,
  kind: string,
  consumer: string,
  namespaces: ReadonlyMap<string, k8s.V1Namespace>,
): Refusal | undefined {
  const namespace = request.spec.namespace;
  const target = namespaces.get(namespace);
  if (!isRemoteNamespaceOf(target, consumer) || target?.metadata?.deletionTimestamp)
    return {
      reason: "NamespaceNotReady",
      message: `namespace ${JSON.stringify(namespace)} is not one this consumer was given`,
    };
  if (typeof objectName === "string" && request.metadata.name !== tenantRequestName(namespace, objectName))
    return {
      reason: "Invalid",
      message: `metadata.name: a request for ${kind} ${objectName} of ${namespace} is named ${tenantRequestName(namespace, objectName)}`,
    };
  return undefined;
}

/**
 * The namespaces made for consumers here (tenant and remote ones, by their labels): the live
 * tenants, each namespace by name, and each live remote namespace with the consumer it was made for.
 */
export async function consumerNamespaces(kc: k8s.KubeConfig, step: string) {
  const namespaces = (
    await kc
      .makeApiClient(k8s.CoreV1Api)
      .listNamespace({ labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY},${REMOTE_CLUSTER_LABEL}` })
      .catch(describeFailure(`${step}: listing the namespaces made for consumers`, serverOf(kc)))
  ).items;
  const { live: tenants } = tenantsOf(namespaces);
  const byName = new Map(namespaces.map((ns) => [ns.metadata!.name!, ns]));
  const remoteNamespaces = namespaces.flatMap((ns) => {
    const consumer = ns.metadata?.labels?.[REMOTE_CLUSTER_LABEL];
    return consumer &&
      [...tenants.values()].includes(consumer) &&
      isRemoteNamespaceOf(ns, consumer) &&
      !ns.metadata?.deletionTimestamp
      ? [{ namespace: ns.metadata!.name!, consumer }]
      : [];
  });
  return { tenants, byName, remoteNamespaces };
}

/** This cluster's service range as its install recorded it; undefined when none is (or it does not parse). */
async function ownServiceRange(kc: k8s.KubeConfig): Promise<Cidr | undefined> {
  const recorded = (await getClusterIdentity(kc))?.serviceCidr;
  try {
    return recorded ? Cidr.parse(recorded) : undefined;
  } catch {
    return undefined;
  }
}

/** One pass of the provider's side of Services; resolves how many objects it made, changed or removed. */
export async function answerServiceRequests(kc: k8s.KubeConfig, reporter: Reporter): Promise<number> {
  const requests = await listOffloading<ReflectedService>(kc, "reflectedservices");
  if (!requests) return 0;
  const endpoint = serverOf(kc);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  // Only the project's namespaces (tenant and remote ones carry these labels): a request for any other is refused.
  const { tenants, byName, remoteNamespaces } = await consumerNamespaces(kc, STEP);
  if (requests.length === 0 && remoteNamespaces.length === 0) return 0;
  const tunnelEnds = await listTunnelEndpoints(kc, STEP);
  const providerServices = await ownServiceRange(kc);
  let changes = 0;
  const kept = new Set<string>();
  for (const request of [...requests].sort(byAge)) {
    const consumer = tenants.get(request.metadata.namespace ?? "");
    if (!consumer || request.metadata.deletionTimestamp) continue;
    const view = peerAddressView(tunnelEnds, consumer);
    const serviceName = (request.spec.service as { name?: unknown } | null)?.name;
    const refusal =
      refuseTarget(request, serviceName, "Service", consumer, byName) ??
      refuseServiceRequest(request.spec.service, view?.real);
    const generation = request.metadata.generation ?? 1;
    const where = `${request.spec.namespace}/${(request.spec.service as ServiceRequest | undefined)?.name}`;
    let answer: { phase: "Accepted" | "Refused"; reason?: string; message?: string } = refusal
      ? { phase: "Refused", ...refusal }
      : { phase: "Accepted" };
    // An ExternalName is held as a name only: this agent's DNS answers it to the consumer's pods
    // (agent/dns), and no Service is made of it (one of an earlier type of that name goes, below).
    if (!refusal && (request.spec.service as ServiceRequest).externalName === undefined) {
      const wanted = request.spec.service as ServiceRequest;
      const taken = await holdService(kc, wanted, request.spec.namespace, consumer, view, providerServices).catch(
        describeFailure(`${STEP}: applying Service ${where} for consumer ${consumer}`, endpoint),
      );
      if (taken) answer = { phase: "Refused", ...taken };
      else kept.add(`${request.spec.namespace}/${wanted.name}`);
    }
    if (!sameAnswer(request.status, { ...answer, observedGeneration: generation })) {
      await writeOffloadingStatus(kc, "reflectedservices", request, {
        reason: null,
        message: null,
        ...answer,
        observedGeneration: generation,
      });
      if (answer.phase === "Refused")
        reporter.warn(`${STEP}: refused Service ${where} of consumer ${consumer}: ${answer.reason}: ${answer.message}`);
      else reporter.info(`${STEP}: holding Service ${where} for consumer ${consumer}`);
      changes += 1;
    }
  }
  // What no accepted request stands for any more: its Service and its slice of the consumer's endpoints.
  for (const { namespace, consumer } of remoteNamespaces) {
    const labelSelector = Object.entries(reflectedLabels(consumer))
      .map(([key, value]) => `${key}=${value}`)
      .join(",");
    const [services, slices] = await Promise.all([
      core.listNamespacedService({ namespace, labelSelector }),
      discovery.listNamespacedEndpointSlice({ namespace, labelSelector }),
    ]).catch(describeFailure(`${STEP}: listing the Services made in ${namespace}`, endpoint));
    for (const { metadata } of services.items) {
      if (kept.has(`${namespace}/${metadata!.name}`)) continue;
      await deleteOptional(() => core.deleteNamespacedService({ name: metadata!.name!, namespace })).catch(
        describeFailure(`${STEP}: deleting Service ${namespace}/${metadata!.name}`, endpoint),
      );
      reporter.info(`${STEP}: removed Service ${namespace}/${metadata!.name}: no accepted request stands for it`);
      changes += 1;
    }
    for (const { metadata } of slices.items) {
      if (kept.has(`${namespace}/${metadata!.labels![SERVICE_NAME_LABEL]}`)) continue;
      await deleteOptional(() => discovery.deleteNamespacedEndpointSlice({ name: metadata!.name!, namespace })).catch(
        describeFailure(`${STEP}: deleting EndpointSlice ${namespace}/${metadata!.name}`, endpoint),
      );
      changes += 1;
    }
  }
  return changes;
}

/**
 * Makes (or brings up to date) the Service of an accepted request and its slice of the consumer's
 * endpoints; resolves a refusal instead when a Service of that name is someone else's.
 */
async function holdService(
  kc: k8s.KubeConfig,
  request: ServiceRequest,
  namespace: string,
  consumer: string,
  view: ReturnType<typeof peerAddressView>,
  providerServices: Cidr | undefined,
): Promise<Refusal | undefined> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  const existing = await core.readNamespacedService({ name: request.name, namespace }).catch((error: unknown) => {
    if (isNotFound(error)) return undefined;
    throw error;
  });
  const ours = Object.entries(reflectedLabels(consumer)).every(([k, v]) => existing?.metadata?.labels?.[k] === v);
  if (existing && !ours)
    return { reason: "NameTaken", message: `Service ${namespace}/${request.name} exists and is not this consumer's` };
  // Headless or not cannot change in place (a ClusterIP is immutable): the old one goes first.
  const replaced = existing && (existing.spec?.clusterIP === "None") !== request.headless;
  if (replaced) await core.deleteNamespacedService({ name: request.name, namespace });
  if (existing && !replaced) {
    await ensureObject(kc, forgeReflectedService(request, namespace, consumer, existing.spec?.clusterIP));
  } else {
    const kept = keptClusterIP(request.clusterIP, providerServices);
    await ensureObject(kc, forgeReflectedService(request, namespace, consumer, kept)).catch((error: unknown) => {
      // Taken already here (422, or 409 while another create holds it): the API server picks one instead.
      if (!kept || ![409, 422].includes(statusOf(error) ?? 0)) throw error;
      return ensureObject(kc, forgeReflectedService(request, namespace, consumer));
    });
  }
  // An accepted request lists endpoints only when this side's tunnel knows the consumer's range (`view`).
  if (request.outside.length > 0 && view)
    await ensureObject(
      kc,
      forgeOutsideSlice(view.connected ? request : withTunnelDown(request), namespace, consumer, view),
    );
  else
    await deleteOptional(() =>
      discovery.deleteNamespacedEndpointSlice({ name: outsideSliceName(request.name), namespace }),
    );
  return undefined;
}
