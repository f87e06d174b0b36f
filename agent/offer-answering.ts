/**
 * The provider's answer to resource requests: each pass relists every tenant's ResourceRequest,
 * computes the offer from the cluster's free allocatable capacity (or the fixed amounts asked),
 * and publishes it as the ResourceOffer of the same name when the request changed or a shared
 * offer moved by more than the threshold. Offers whose request is gone are removed.
 */
import { podRequests } from "../core/offloading/budget.js";
import { formatCpuMillis, formatMemoryBytes } from "../core/negotiation/quantity.js";
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  type ResourceOffer,
  type ResourceRequest,
} from "../core/api/index.js";
import { getClusterIdentity } from "../core/cluster/install.js";
import { deleteOptional, ensureObject, isNotFound } from "../core/kube/client.js";
import { computeFreeCapacity, computeOffer, offerChanged, type Capacity } from "../core/negotiation/offer.js";
import { VIRTUAL_NODE_LABEL } from "../core/virtual-node/node.js";
import type { Reporter } from "./reporter.js";
import { stateChanges } from "./watch.js";

/** Settings of offer answering. */
export interface OfferAnsweringOptions {
  /** Re-publish a shared offer when any dimension moves by more than this percentage. @default 10 */
  readonly thresholdPercent?: number;
}

/** The cluster's free allocatable capacity: schedulable real nodes' allocatable less their pods' requests. */
export async function getFreeCapacity(kc: k8s.KubeConfig): Promise<Capacity> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const [nodes, pods] = await Promise.all([
    core.listNode(),
    core.listPodForAllNamespaces({ fieldSelector: "status.phase!=Succeeded,status.phase!=Failed" }),
  ]);
  return computeFreeCapacity(
    nodes.items.map((n) => ({
      name: n.metadata?.name ?? "",
      allocatable: n.status?.allocatable,
      virtual: n.metadata?.labels?.[VIRTUAL_NODE_LABEL] === "true",
      schedulable: takesPods(n),
    })),
    pods.items
      .filter((p) => p.spec?.nodeName)
      .map((p) => {
        // Summed over containers (the largest init container's when more), as the scheduler counts.
        const taken = podRequests(p.spec!);
        return {
          nodeName: p.spec!.nodeName!,
          requests: { cpu: formatCpuMillis(taken.cpuMillis), memory: formatMemoryBytes(taken.memoryBytes) },
        };
      }),
  );
}

/** Whether a node can take a new pod: Ready and not cordoned. */
function takesPods(node: CapacityObject): boolean {
  const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
  return ready && node.spec?.unschedulable !== true;
}

/** A watch event's object, as far as free capacity is concerned. */
interface CapacityObject {
  readonly metadata?: { readonly name?: string; readonly uid?: string };
  readonly spec?: { readonly nodeName?: string; readonly unschedulable?: boolean };
  readonly status?: {
    readonly allocatable?: Record<string, string>;
    readonly phase?: string;
    readonly conditions?: readonly { readonly type: string; readonly status: string }[];
  };
}

/**
 * Filters of node and pod watch events down to those that move free capacity: a node added,
 * removed, cordoned, Ready or not, or with new allocatable; a pod placed, finished or removed. A virtual node's heartbeat
 * (a status post every 20 s) moves nothing and wakes nothing.
 */
export function capacityEventFilters(): {
  readonly nodes: (type: string, object: unknown) => boolean;
  readonly pods: (type: string, object: unknown) => boolean;
} {
  return {
    nodes: stateChanges<CapacityObject>(
      (node) => `${takesPods(node)} ${JSON.stringify(node.status?.allocatable ?? {})}`,
      (node) => node.metadata?.name,
    ),
    pods: stateChanges<CapacityObject>((pod) => `${pod.spec?.nodeName ?? ""} ${pod.status?.phase ?? ""}`),
  };
}

/** What a pass of offer answering did, and what the next one must watch for. */
export interface OfferPass {
  /** How many offers it published or removed. */
  readonly changes: number;
  /**
   * Whether some offer is a share of free capacity: capacity moves with nodes and pods, which the
   * watch of requests does not see (see {@link capacityEventFilters}).
   */
  readonly followsCapacity: boolean;
}

/** One pass of offer answering. */
export async function answerResourceRequests(
  kc: k8s.KubeConfig,
  reporter: Reporter,
  options: OfferAnsweringOptions = {},
): Promise<OfferPass> {
  const identity = await getClusterIdentity(kc);
  if (!identity) return { changes: 0, followsCapacity: false }; // Not installed yet (no Cluster resource): nothing can be asked of us.
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const list = async <T>(plural: string): Promise<T[] | undefined> => {
    try {
      const result = (await api.listClusterCustomObject({ group: API_GROUP, version: API_VERSION, plural })) as {
        items: T[];
      };
      return result.items;
    } catch (error) {
      if (isNotFound(error)) return undefined; // CRDs not installed (yet, or any more).
      throw error;
    }
  };
  const requests = await list<ResourceRequest>("resourcerequests");
  const offers = await list<ResourceOffer>("resourceoffers");
  if (!requests || !offers) return { changes: 0, followsCapacity: false };
  const key = (m: k8s.V1ObjectMeta | undefined): string => `${m?.namespace}/${m?.name}`;
  const offerOf = new Map(offers.map((o) => [key(o.metadata), o]));
  const free = requests.some((r) => r.spec.resources.sharePercent !== undefined)
    ? await getFreeCapacity(kc)
    : undefined;
  let changes = 0;

  for (const request of requests) {
    const generation = request.metadata.generation ?? 1;
    const resources = computeOffer(request.spec.resources, free ?? { cpuMillis: 0, memoryBytes: 0, pods: 0 });
    const current = offerOf.get(key(request.metadata));
    const stale = !current || current.spec.requestGeneration !== generation;
    const moved =
      current !== undefined &&
      request.spec.resources.sharePercent !== undefined &&
      offerChanged(current.spec.resources, resources, options.thresholdPercent ?? 10);
    if (!stale && !moved) continue;
    const offer: ResourceOffer = {
      apiVersion: API_GROUP_VERSION,
      kind: "ResourceOffer",
      metadata: {
        name: request.metadata.name!,
        namespace: request.metadata.namespace!,
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
      },
      spec: {
        providerClusterId: identity.clusterId,
        providerClusterName: identity.clusterName,
        resources,
        requestGeneration: generation,
      },
    };
    await ensureObject(kc, offer);
    reporter.info(
      `offer answering: ${key(request.metadata)} offered cpu ${resources.cpu}, memory ${resources.memory}, pods ` +
        `${resources.pods} (request generation ${generation})`,
    );
    changes += 1;
  }
  const requested = new Set(requests.map((r) => key(r.metadata)));
  for (const offer of offers) {
    if (requested.has(key(offer.metadata))) continue;
    await deleteOptional(() =>
      api.deleteNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: offer.metadata.namespace!,
        plural: "resourceoffers",
        name: offer.metadata.name!,
      }),
    );
    reporter.info(`offer answering: withdrew offer ${key(offer.metadata)} (its request is gone)`);
    changes += 1;
  }
  return { changes, followsCapacity: free !== undefined };
}
