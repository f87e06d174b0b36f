/**
 * What the DNS answerer knows of the consumers' pods here: which consumer each address belongs to,
 * and each consumer's zone (core/offloading/dns-names.ts). All of it is read from what this side
 * made: the pods and namespaces it labelled for a consumer, the RemoteNamespace of that
 * consumer's tenant namespace for the name its namespace has on the consumer, and this cluster's
 * end of the consumer's tunnel for where its API server answers.
 */
import * as k8s from "@kubernetes/client-node";
import {
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  SYSTEM_NAMESPACE,
  tenantNamespace,
  type ReflectedService,
  type RemoteNamespace,
} from "../../core/api/index.js";
import { REMOTE_NAMESPACE_LABEL } from "../../core/api/names.js";
import { CONSUMER_DNS_SERVICE } from "../../core/cluster/agent-components.js";
import { describeFailure, readOptional, serverOf } from "../../core/kube/client.js";
import { listTunnelEndpoints } from "../../core/network-fabric/endpoints.js";
import {
  CLUSTER_DOMAIN,
  consumerNamespaceOf,
  podOwnName,
  zonesOf,
  type ConsumerZone,
  type HeldExternalName,
} from "../../core/offloading/dns-names.js";
import { listOffloading } from "../../core/offloading/objects.js";
import { CONSUMER_POD_UID_LABEL, peerTunnelAddress } from "../../core/offloading/reflection.js";
import { refuseServiceRequest, type ServiceRequest } from "../../core/offloading/service-reflection.js";

const STEP = "consumer DNS";

/** The ClusterIP of the agent's DNS Service, or undefined where the install has none (an earlier release's). */
export async function consumerDnsAddress(kc: k8s.KubeConfig): Promise<string | undefined> {
  const service = await readOptional(() =>
    kc.makeApiClient(k8s.CoreV1Api).readNamespacedService({ name: CONSUMER_DNS_SERVICE, namespace: SYSTEM_NAMESPACE }),
  ).catch(describeFailure(`${STEP}: reading Service ${SYSTEM_NAMESPACE}/${CONSUMER_DNS_SERVICE}`, serverOf(kc)));
  const address = service?.spec?.clusterIP;
  return address && address !== "None" ? address : undefined;
}

/** The consumers' pods and zones, as one listing found them. */
interface Snapshot {
  readonly at: number;
  readonly consumerOf: ReadonlyMap<string, string>;
  readonly zones: ReadonlyMap<string, ConsumerZone>;
}

/** A listing older than this is done again before answering: a pod's address may pass to another's. */
const MAX_AGE_MS = 5000;
/** An address not in the listing lists again, at most this often. */
const MISS_INTERVAL_MS = 1000;
/** How long an address not listed is looked for: a pod asks before its status has its address. */
const UNKNOWN_WAIT_MS = 3000;

/**
 * The zone of the consumer whose pod has an address: listed from the API server, again when older
 * than {@link MAX_AGE_MS} and while an address is not known, one listing at a time for every
 * question waiting.
 */
export class ConsumerZones {
  private snapshot: Snapshot | undefined;
  private listing: Promise<Snapshot> | undefined;

  constructor(private readonly kc: k8s.KubeConfig) {}

  /** The zone of the consumer whose pod has `address`, or undefined when no consumer's pod has it. */
  async zoneOf(address: string): Promise<ConsumerZone | undefined> {
    const deadline = Date.now() + UNKNOWN_WAIT_MS;
    let snapshot = this.snapshot;
    if (!snapshot || Date.now() - snapshot.at > MAX_AGE_MS) snapshot = await this.list();
    for (;;) {
      const consumer = snapshot.consumerOf.get(address);
      if (consumer !== undefined) return snapshot.zones.get(consumer) ?? { consumer, namespaces: new Map() };
      if (Date.now() >= deadline) return undefined;
      const wait = Math.min(snapshot.at + MISS_INTERVAL_MS, deadline) - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      snapshot = await this.list();
    }
  }

  private list(): Promise<Snapshot> {
    this.listing ??= this.read()
      .then((snapshot) => (this.snapshot = snapshot))
      .finally(() => (this.listing = undefined));
    return this.listing;
  }

  private async read(): Promise<Snapshot> {
    const at = Date.now();
    const core = this.kc.makeApiClient(k8s.CoreV1Api);
    const managed = `${MANAGED_BY_LABEL}=${MANAGED_BY},${REMOTE_CLUSTER_LABEL}`;
    const [namespaces, pods, requests, services, tunnelEnds] = await Promise.all([
      core.listNamespace({ labelSelector: `${managed},${REMOTE_NAMESPACE_LABEL}=true` }),
      core.listPodForAllNamespaces({ labelSelector: `${managed},${CONSUMER_POD_UID_LABEL}` }),
      listOffloading<RemoteNamespace>(this.kc, "remotenamespaces"),
      listOffloading<ReflectedService>(this.kc, "reflectedservices"),
      listTunnelEndpoints(this.kc, STEP),
    ]).catch(describeFailure(`${STEP}: listing the namespaces and pods made for consumers`, serverOf(this.kc)));
    const consumerOfNamespace = new Map(
      namespaces.items.map((ns) => [ns.metadata!.name!, ns.metadata!.labels![REMOTE_CLUSTER_LABEL]!]),
    );
    const mirrored = [...consumerOfNamespace].map(([here, consumer]) => {
      const request = (requests ?? []).find(
        (r) => r.metadata.name === here && r.metadata.namespace === tenantNamespace(consumer),
      );
      return { here, consumer, consumerNamespace: consumerNamespaceOf(here, request?.spec?.consumerNamespace) };
    });
    const theirNamespace = new Map(mirrored.map((ns) => [ns.here, ns.consumerNamespace]));
    const consumerOf = new Map<string, string>();
    const ownNames = new Map<string, Map<string, string>>();
    for (const pod of pods.items) {
      const here = pod.metadata?.namespace ?? "";
      const consumer = consumerOfNamespace.get(here);
      // A pod counts only in a namespace made for the consumer its label names.
      if (!consumer || pod.metadata?.labels?.[REMOTE_CLUSTER_LABEL] !== consumer) continue;
      const ownName = podOwnName(pod.spec?.hostname, pod.spec?.subdomain, theirNamespace.get(here)!, CLUSTER_DOMAIN);
      for (const { ip } of pod.status?.podIPs ?? (pod.status?.podIP ? [{ ip: pod.status.podIP }] : [])) {
        consumerOf.set(ip, consumer);
        if (ownName) ownNames.set(consumer, (ownNames.get(consumer) ?? new Map()).set(ip, ownName));
      }
    }
    const zones = new Map(
      [...zonesOf(mirrored, heldExternalNames(services ?? [], consumerOfNamespace))].map(([consumer, zone]) => {
        const apiAddress = peerTunnelAddress(tunnelEnds, consumer);
        const names = ownNames.get(consumer);
        return [consumer, { ...zone, ...(apiAddress ? { apiAddress } : {}), ...(names ? { ownNames: names } : {}) }];
      }),
    );
    return { at, consumerOf, zones };
  }
}

/**
 * The ExternalName Services the provider's agent accepted of each consumer, in a namespace made
 * here for that consumer, by a request of its own tenant, as of the request's current generation;
 * checked again here, as the request is the consumer's to write.
 */
function heldExternalNames(
  requests: readonly ReflectedService[],
  consumerOfNamespace: ReadonlyMap<string, string>,
): HeldExternalName[] {
  return requests.flatMap((request) => {
    const here = request.spec?.namespace;
    const consumer = consumerOfNamespace.get(here ?? "");
    const current =
      request.status?.phase === "Accepted" && request.status.observedGeneration === (request.metadata.generation ?? 1);
    const service = request.spec?.service as ServiceRequest | undefined;
    if (!consumer || !current || request.metadata.namespace !== tenantNamespace(consumer)) return [];
    if (service?.externalName === undefined || refuseServiceRequest(service, undefined)) return [];
    return [{ consumer, here: here!, service: service.name, target: service.externalName }];
  });
}
