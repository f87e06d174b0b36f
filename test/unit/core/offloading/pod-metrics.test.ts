/** Offloaded pods' resource metrics: rates from the provider made counters, as a kubelet serves them. */
import {
  advanceCounters,
  parseGoDuration,
  resourceMetricsText,
  type MetricsCounters,
  type ProviderReading,
} from "../../../../core/offloading/pod-metrics.js";
import { parseCpuNanocores } from "../../../../core/negotiation/quantity.js";

const reading = (timestamp: string, cpu: string, memory = "10Mi", pod = "api-1"): ProviderReading => ({
  consumerNamespace: "store",
  metrics: {
    metadata: { name: pod, namespace: "store-0a1b2c" },
    timestamp,
    window: "20s",
    containers: [{ name: "api", usage: { cpu, memory } }],
  },
});
/** The first reading's time less its window: when the counted rates began. */
const started = Date.parse("2026-11-29T10:00:40Z");
const none: MetricsCounters = { containers: new Map(), nodeCpuSeconds: 0 };

describe("parseGoDuration and parseCpuNanocores", () => {
  test.each([
    ["15s", 15],
    ["1m0.5s", 60.5],
    ["1h2m", 3720],
    ["500ms", 0.5],
  ])("%s is %d s", (text, seconds) => expect(parseGoDuration(text)).toBeCloseTo(seconds));
  test("anything else is refused, naming it", () => expect(() => parseGoDuration("15 s")).toThrow('"15 s"'));
  test.each([
    ["123456n", 123456],
    ["250u", 250_000],
    ["5m", 5_000_000],
    ["2", 2e9],
  ])("%s is %d nanocores", (text, nanocores) => expect(parseCpuNanocores(text)).toBe(nanocores));
});

describe("advanceCounters", () => {
  test("a first reading counts its rate over its window; a newer one adds its rate since; the same one adds nothing", () => {
    const first = advanceCounters([reading("2026-11-29T10:01:00Z", "500m")], none);
    expect(first.samples).toEqual([
      {
        namespace: "store",
        pod: "api-1",
        container: "api",
        cpuSeconds: 10,
        memoryBytes: 10 * 2 ** 20,
        timestampMs: Date.parse("2026-11-29T10:01:00Z"),
        startedAtMs: started,
      },
    ]);
    const second = advanceCounters([reading("2026-11-29T10:01:15Z", "1")], first.counters);
    expect(second.samples[0]!.cpuSeconds).toBeCloseTo(25);
    const again = advanceCounters([reading("2026-11-29T10:01:15Z", "1")], second.counters);
    expect(again.samples[0]!.cpuSeconds).toBeCloseTo(25);
    expect(again.counters.nodeCpuSeconds).toBeCloseTo(25);
  });

  test("the node's counter is the sum of what its pods used, and never goes back when a pod goes", () => {
    const first = advanceCounters(
      [reading("2026-11-29T10:01:00Z", "1"), reading("2026-11-29T10:01:00Z", "1", "10Mi", "api-2")],
      none,
    );
    expect(first.counters.nodeCpuSeconds).toBeCloseTo(40);
    const oneGone = advanceCounters([reading("2026-11-29T10:01:10Z", "1")], first.counters);
    expect(oneGone.counters.nodeCpuSeconds).toBeCloseTo(50);
    const gone = advanceCounters([], oneGone.counters);
    expect([gone.samples, gone.counters.containers.size, gone.counters.nodeCpuSeconds]).toEqual([[], 0, 50]);
    // Seen again later: a new counter, started after everything the scraper stored of it.
    const back = advanceCounters([reading("2026-11-29T10:05:00Z", "500m")], gone.counters);
    expect(back.samples[0]).toMatchObject({ cpuSeconds: 10, startedAtMs: Date.parse("2026-11-29T10:04:40Z") });
  });

  test("a reading whose time is not a time is left out", () => {
    expect(advanceCounters([reading("yesterday", "1")], none).samples).toEqual([]);
  });
});

describe("resourceMetricsText", () => {
  test("serves what metrics-server reads, each sample with its time, label values escaped", () => {
    const { samples, counters } = advanceCounters([reading("2026-11-29T10:01:00Z", "500m")], none);
    const ms = Date.parse("2026-11-29T10:01:00Z");
    const text = resourceMetricsText([{ ...samples[0]!, pod: 'a"b' }], counters, 0);
    expect(text.split("\n").filter((line) => !line.startsWith("#"))).toEqual([
      `node_cpu_usage_seconds_total 10 ${ms}`,
      `node_memory_working_set_bytes ${10 * 2 ** 20} ${ms}`,
      `container_cpu_usage_seconds_total{container="api",namespace="store",pod="a\\"b"} 10 ${ms}`,
      `container_memory_working_set_bytes{container="api",namespace="store",pod="a\\"b"} ${10 * 2 ** 20} ${ms}`,
      `container_start_time_seconds{container="api",namespace="store",pod="a\\"b"} ${started / 1000} ${ms}`,
      "scrape_error 0",
      "",
    ]);
  });
});
