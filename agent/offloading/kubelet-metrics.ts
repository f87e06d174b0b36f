/**
 * The resource metrics the virtual nodes' kubelet endpoint serves (`/metrics/resource`, what
 * metrics-server scrapes): for each pod offloaded through this agent, what its provider's metrics
 * API says of it, read with the identity the peering issued (which may read only the pod metrics of
 * the namespaces the provider made for this consumer), in the consumer's names. The counters are
 * kept across scrapes (core/offloading/pod-metrics.ts). A provider that serves no metrics API, or
 * cannot be reached, gives nothing this time; the others are served.
 */
import * as k8s from "@kubernetes/client-node";
import type { NamespaceOffloading, OutgoingPeering } from "../../core/api/index.js";
import { describeKubeError } from "../../core/kube/errors.js";
import { listOffloading } from "../../core/offloading/objects.js";
import {
  advanceCounters,
  resourceMetricsText,
  type MetricsCounters,
  type PodMetrics,
  type ProviderReading,
} from "../../core/offloading/pod-metrics.js";
import { listOutgoingPeerings } from "../../core/virtual-node/outgoing-peering.js";
import { recentPeeringIdentity } from "../heartbeat.js";
import type { Reporter } from "../reporter.js";
import { offloadedNamespaces } from "./consumer-pods.js";

const STEP = "kubelet endpoint: metrics";

/** What one provider says of the pods of one remote namespace. */
async function readNamespace(
  provider: k8s.KubeConfig,
  consumerNamespace: string,
  remoteNamespace: string,
): Promise<ProviderReading[]> {
  const metrics = (await provider.makeApiClient(k8s.CustomObjectsApi).listNamespacedCustomObject({
    group: "metrics.k8s.io",
    version: "v1beta1",
    namespace: remoteNamespace,
    plural: "pods",
  })) as { items: PodMetrics[] };
  return metrics.items.map((m) => ({ consumerNamespace, metrics: m }));
}

/** The metrics of one agent's offloaded pods, scrape after scrape. */
export class OffloadedPodMetrics {
  private counters: MetricsCounters = { containers: new Map(), nodeCpuSeconds: 0 };
  /** Scrapes one at a time: each advances the counters the last one left. */
  private last: Promise<unknown> = Promise.resolve();
  /** The providers whose last read failed, with why: said once, not at every scrape. */
  private readonly failing = new Map<string, string>();

  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly reporter: Reporter,
  ) {}

  /**
   * One scrape: the text a kubelet's `/metrics/resource` serves, of the pods on the virtual nodes
   * `mayRead` lets through; undefined, and nothing read, when it lets none through. Otherwise every
   * virtual node is read, so that the counters go on whoever asks.
   */
  scrape(mayRead: (virtualNode: string) => Promise<boolean>): Promise<string | undefined> {
    const next = this.last.then(() => this.read(mayRead));
    this.last = next.catch(() => undefined);
    return next;
  }

  private async read(mayRead: (virtualNode: string) => Promise<boolean>): Promise<string | undefined> {
    const [peerings, offloadings] = await Promise.all([
      listOutgoingPeerings(this.kc),
      listOffloading<NamespaceOffloading>(this.kc, "namespaceoffloadings"),
    ]);
    // Asked first: a caller that may read no virtual node costs no provider a read.
    const allowed: boolean[] = [];
    for (const peering of peerings) allowed.push(await mayRead(peering.spec.virtualNodeName));
    if (!allowed.includes(true)) return undefined;
    const routes = peerings.map((peering) => ({
      peering,
      remoteOf: offloadedNamespaces(offloadings ?? [], peering.spec.virtualNodeName),
    }));
    const readings = await Promise.all(routes.map(({ peering, remoteOf }) => this.readPeering(peering, remoteOf)));
    const { samples, counters } = advanceCounters(readings.flat(), this.counters);
    this.counters = counters;
    const served = new Set(routes.filter((_, i) => allowed[i]).flatMap(({ remoteOf }) => [...remoteOf.keys()]));
    return resourceMetricsText(
      samples.filter((s) => served.has(s.namespace)),
      counters,
      Date.now(),
    );
  }

  /** What the provider of `peering` says of the pods offloaded to it; nothing when it cannot say. */
  private async readPeering(
    peering: OutgoingPeering,
    remoteOf: ReadonlyMap<string, string>,
  ): Promise<ProviderReading[]> {
    const provider = peering.spec.providerClusterName;
    try {
      const identity = await recentPeeringIdentity(this.kc, peering, Date.now());
      const read = await Promise.all(
        [...remoteOf].map(([consumerNamespace, remote]) => readNamespace(identity, consumerNamespace, remote)),
      );
      if (this.failing.delete(provider))
        this.reporter.info(`${STEP}: provider ${provider} gives its pods' metrics again`);
      return read.flat();
    } catch (error) {
      const why = describeKubeError(error);
      if (this.failing.get(provider) !== why)
        this.reporter.warn(`${STEP}: provider ${provider} gives no metrics of the pods offloaded to it: ${why}`);
      this.failing.set(provider, why);
      return [];
    }
  }
}
