/**
 * The consumer's side of Services across a peering: each Service of a namespace offloaded to the
 * peering's provider is asked for there (a ReflectedService in the tenant namespace, with the
 * identity the peering issued), with the endpoints that stay on this cluster at their own
 * addresses. The provider makes the Service in the remote namespace, where an offloaded pod finds
 * it by the same name through the provider's cluster DNS. A request whose Service is gone, or
 * whose namespace is no longer offloaded there, is withdrawn; a refusal shows as a Warning event
 * on the Service.
 *
 * An ExternalName Service is asked for as its host alone: the provider makes nothing of it, and its
 * agent answers the name to this consumer's pods (agent/dns).
 *
 * This agent may read Services and EndpointSlices only in offloaded namespaces (REFLECTOR_ROLE):
 * it watches them in each namespace with pods on its virtual nodes, and passes again every 10 s.
 */
import * as k8s from "@kubernetes/client-node";
import { isDeepStrictEqual } from "node:util";
import {
  API_GROUP_VERSION,
  tenantRequestName,
  type NamespaceOffloading,
  type ReflectedService,
} from "../../core/api/index.js";
import { describeFailure, ensureObject, serverOf } from "../../core/kube/client.js";
import type { Cidr } from "../../core/net/cidr.js";
import { deleteOffloading, listOffloading } from "../../core/offloading/objects.js";
import { SERVICE_NAME_LABEL, serviceRequestOf } from "../../core/offloading/service-reflection.js";
import { offloadedNamespaces, recordEvent, type PeeringReach } from "./consumer-pods.js";

const STEP = "offloading (consumer)";

/** The refusals already shown on a Service, by request name: each is shown once, not at every pass. */
const shownRefusals = new Map<string, string>();

/**
 * One pass over the Services of the namespaces offloaded through one peering. `ownPods` is this
 * cluster's pod range as its end of the peering's tunnel reports it; without it (no tunnel yet) the
 * Services are asked for without endpoints here.
 */
export async function reflectPeeringServices(
  kc: k8s.KubeConfig,
  reach: PeeringReach,
  offloadings: readonly NamespaceOffloading[],
  ownPods: Cidr | undefined,
): Promise<void> {
  const { peering, provider } = reach;
  const tenant = peering.spec.tenantNamespace;
  const virtualNode = peering.spec.virtualNodeName;
  // A provider whose Cluster predates Services across peerings has no such kind: nothing to ask.
  const requests = await listOffloading<ReflectedService>(provider, "reflectedservices", tenant);
  if (!requests) return;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  const existing = new Map(requests.map((r) => [r.metadata.name!, r]));
  const wanted = new Set<string>();
  for (const [namespace, remoteNamespace] of offloadedNamespaces(offloadings, virtualNode)) {
    const [services, slices] = await Promise.all([
      core.listNamespacedService({ namespace }),
      discovery.listNamespacedEndpointSlice({ namespace }),
    ]).catch(describeFailure(`${STEP}: listing the Services of ${namespace}`, serverOf(kc)));
    for (const service of services.items) {
      const serviceName = service.metadata!.name!;
      const own = slices.items.filter((s) => s.metadata?.labels?.[SERVICE_NAME_LABEL] === serviceName);
      const request = serviceRequestOf(service, own, (e) => e.nodeName === virtualNode, ownPods);
      if ("skipped" in request) continue;
      const name = tenantRequestName(remoteNamespace, serviceName);
      wanted.add(name);
      const current = existing.get(name);
      // Compared by value: the API server keeps an object's keys in an order of its own.
      if (!current || !isDeepStrictEqual(current.spec.service, request)) {
        const object: ReflectedService = {
          apiVersion: API_GROUP_VERSION,
          kind: "ReflectedService",
          metadata: { name, namespace: tenant },
          spec: { namespace: remoteNamespace, service: request },
        };
        await ensureObject(provider, object).catch(
          describeFailure(`${STEP}: asking for Service ${namespace}/${serviceName}`, serverOf(provider)),
        );
        continue;
      }
      const answer = current.status;
      const refused =
        answer?.phase === "Refused" && answer.observedGeneration === (current.metadata.generation ?? 1)
          ? `${answer.observedGeneration} ${answer.reason}`
          : undefined;
      if (refused && shownRefusals.get(name) !== refused) {
        await recordEvent(
          kc,
          { apiVersion: "v1", kind: "Service", metadata: service.metadata },
          {
            reason: answer!.reason ?? "Refused",
            message: `provider ${peering.spec.providerClusterName} refused it: ${answer!.message ?? ""}`,
          },
        );
      }
      if (refused) shownRefusals.set(name, refused);
      else shownRefusals.delete(name);
    }
  }
  for (const request of requests) {
    const name = request.metadata.name!;
    if (wanted.has(name) || request.metadata.deletionTimestamp) continue;
    await deleteOffloading(provider, "reflectedservices", tenant, name);
    shownRefusals.delete(name);
  }
}
