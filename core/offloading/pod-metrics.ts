/**
 * The resource metrics of offloaded pods, as a kubelet serves them (`/metrics/resource`, what
 * metrics-server scrapes), made from what the provider's metrics API says of each pod
 * (`metrics.k8s.io` PodMetrics: a CPU rate over a window, and memory in use).
 *
 * A kubelet serves CPU as a counter (seconds used since the container started), and its scraper
 * makes a rate of two readings. The provider gives a rate: the counter is that rate integrated
 * over the time between the provider's readings, kept per container from one scrape to the next.
 * Its start is when the rates began (the first reading less its window), not the container's: a
 * scraper needs only a start before the readings, and a restart there goes on in the same counter,
 * its rates still right, so nothing but the metrics is read. Pure; the virtual node's kubelet
 * endpoint does the reading and keeps the counters.
 */
import { parseCpuNanocores, parseMemoryBytes } from "../negotiation/quantity.js";

/** A pod's figures as a provider's metrics API gives them (`metrics.k8s.io/v1beta1` PodMetrics). */
export interface PodMetrics {
  readonly metadata: { readonly name?: string; readonly namespace?: string };
  /** When the figures were read (RFC 3339). */
  readonly timestamp: string;
  /** The span the CPU rate is measured over, as a Go duration (`15s`, `1m0.5s`). */
  readonly window: string;
  readonly containers: readonly {
    readonly name: string;
    readonly usage: { readonly cpu?: string; readonly memory?: string };
  }[];
}

/** One container's CPU counter between scrapes. */
export interface CpuCounter {
  /** When the provider read the rate last counted. */
  readonly timestampMs: number;
  /** CPU seconds used since {@link startedAtMs}, as far as the rates tell. */
  readonly cpuSeconds: number;
  /** When the counted rates began: the first reading's time less its window. */
  readonly startedAtMs: number;
}

/** The counters of an endpoint: each container's, by `namespace/pod/container`, and the node's (their sum's growth). */
export interface MetricsCounters {
  readonly containers: ReadonlyMap<string, CpuCounter>;
  readonly nodeCpuSeconds: number;
}

/** What one scrape serves of one container, in the consumer's terms. */
export interface ContainerSample {
  /** The consumer's namespace (not the provider's remote one). */
  readonly namespace: string;
  readonly pod: string;
  readonly container: string;
  readonly cpuSeconds: number;
  readonly memoryBytes: number;
  readonly timestampMs: number;
  readonly startedAtMs: number;
}

/** A pod's figures read from its provider, with the consumer namespace it belongs to. */
export interface ProviderReading {
  readonly consumerNamespace: string;
  readonly metrics: PodMetrics;
}

/** A Go duration (`15s`, `1m0.5s`, `1h2m`, `500ms`) in seconds. */
export function parseGoDuration(text: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, µs: 1e-6, ns: 1e-9 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) throw new Error(`"${text}" is not a duration`);
  return parts.reduce((sum, [, value, unit]) => sum + Number(value) * units[unit!]!, 0);
}

/**
 * This scrape's samples and the counters for the next one. A container seen for the first time
 * counts what its first rate used over its window; then each newer reading adds its rate over the
 * time since the last one; a reading not newer leaves the count as it was. Counters of containers
 * not read this time are dropped.
 */
export function advanceCounters(
  readings: readonly ProviderReading[],
  previous: MetricsCounters,
): { samples: ContainerSample[]; counters: MetricsCounters } {
  const containers = new Map<string, CpuCounter>();
  const samples: ContainerSample[] = [];
  let nodeCpuSeconds = previous.nodeCpuSeconds;
  for (const { consumerNamespace, metrics } of readings) {
    const pod = metrics.metadata.name ?? "";
    const timestampMs = Date.parse(metrics.timestamp);
    if (Number.isNaN(timestampMs)) continue;
    const windowSeconds = parseGoDuration(metrics.window);
    for (const container of metrics.containers) {
      const rate = parseCpuNanocores(container.usage.cpu ?? "0") / 1e9;
      const key = `${consumerNamespace}/${pod}/${container.name}`;
      const last = previous.containers.get(key);
      const counter: CpuCounter = !last
        ? { timestampMs, cpuSeconds: rate * windowSeconds, startedAtMs: timestampMs - windowSeconds * 1000 }
        : timestampMs > last.timestampMs
          ? { ...last, timestampMs, cpuSeconds: last.cpuSeconds + (rate * (timestampMs - last.timestampMs)) / 1000 }
          : last;
      nodeCpuSeconds += counter.cpuSeconds - (last?.cpuSeconds ?? 0);
      containers.set(key, counter);
      samples.push({
        namespace: consumerNamespace,
        pod,
        container: container.name,
        cpuSeconds: counter.cpuSeconds,
        memoryBytes: parseMemoryBytes(container.usage.memory ?? "0"),
        timestampMs: counter.timestampMs,
        startedAtMs: counter.startedAtMs,
      });
    }
  }
  return { samples, counters: { containers, nodeCpuSeconds } };
}

/** A Prometheus label value, escaped. */
const label = (value: string): string => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

/**
 * The text a kubelet's `/metrics/resource` serves (Prometheus exposition format): the node's CPU
 * counter and memory (the sums of its offloaded pods'), and each container's CPU counter, memory
 * and start time, each sample with the time it was read.
 */
export function resourceMetricsText(
  samples: readonly ContainerSample[],
  counters: MetricsCounters,
  nowMs: number,
): string {
  const lines: string[] = [];
  const family = (name: string, type: "counter" | "gauge", help: string): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  };
  const at = samples.reduce((latest, s) => Math.max(latest, s.timestampMs), 0) || nowMs;
  family(
    "node_cpu_usage_seconds_total",
    "counter",
    "Cumulative cpu time consumed by the node's offloaded pods in core-seconds",
  );
  lines.push(`node_cpu_usage_seconds_total ${counters.nodeCpuSeconds} ${at}`);
  family("node_memory_working_set_bytes", "gauge", "Current working set of the node's offloaded pods in bytes");
  lines.push(`node_memory_working_set_bytes ${samples.reduce((sum, s) => sum + s.memoryBytes, 0)} ${at}`);
  const each = (name: string, type: "counter" | "gauge", help: string, value: (s: ContainerSample) => number): void => {
    family(name, type, help);
    for (const s of samples)
      lines.push(
        `${name}{container="${label(s.container)}",namespace="${label(s.namespace)}",pod="${label(s.pod)}"} ${value(s)} ${s.timestampMs}`,
      );
  };
  each(
    "container_cpu_usage_seconds_total",
    "counter",
    "Cumulative cpu time consumed by the container in core-seconds",
    (s) => s.cpuSeconds,
  );
  each(
    "container_memory_working_set_bytes",
    "gauge",
    "Current working set of the container in bytes",
    (s) => s.memoryBytes,
  );
  each(
    "container_start_time_seconds",
    "gauge",
    "Start time of the container since unix epoch in seconds",
    (s) => s.startedAtMs / 1000,
  );
  family("scrape_error", "gauge", "1 if there was an error while getting container metrics, 0 otherwise");
  lines.push("scrape_error 0");
  return `${lines.join("\n")}\n`;
}
