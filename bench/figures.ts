/**
 * Figures of a benchmark: a series of samples summed up as median and spread, ratios of two
 * medians measured side by side, and the machine the run happened on. Pure except `machine`.
 */
import { cpus, release, totalmem } from "node:os";
import { readFileSync } from "node:fs";

/** A series of measurements of one thing, in one unit. */
export interface Series {
  /** What was measured. */
  readonly label: string;
  /** Unit of the samples. @example "s" */
  readonly unit: string;
  /** Every sample, in the order taken. */
  readonly samples: readonly number[];
  /** The middle sample (mean of the two middle ones for an even count). */
  readonly median: number;
  /** Smallest and largest sample. */
  readonly min: number;
  readonly max: number;
}

/** Sums up `samples`; refuses an empty series, which would only print as a false figure. */
export function series(label: string, unit: string, samples: readonly number[]): Series {
  if (samples.length === 0) throw new Error(`${label}: no samples`);
  const sorted = [...samples].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { label, unit, samples, median, min: sorted[0]!, max: sorted.at(-1)! };
}

/** A target the run must show: `value` compared with `limit`. */
export interface Target {
  /** What the target says, e.g. "peering up ≤ 1.5 × empty up". */
  readonly label: string;
  /** The measured figure the target is about. */
  readonly value: number;
  /** The bound. */
  readonly limit: number;
  /** Whether `value` must stay at most (`max`) or at least (`min`) `limit`. */
  readonly kind: "max" | "min";
  /** Whether the run met it. */
  readonly met: boolean;
}

/** What a section of the benchmark found. */
export interface SectionResult {
  readonly series: Series[];
  readonly targets: Target[];
  /** Further figures of the section, for the JSON. */
  readonly details?: Record<string, unknown>;
}

/** Progress lines go to stderr; the table goes to stdout. */
export type Log = (line: string) => void;

/** A target of `value` against `limit`. */
export function target(label: string, value: number, kind: "max" | "min", limit: number): Target {
  return { label, value, limit, kind, met: kind === "max" ? value <= limit : value >= limit };
}

/** `numerator / denominator` of two medians, rounded to 2 decimals. */
export function ratio(numerator: Series, denominator: Series): number {
  return Math.round((numerator.median / denominator.median) * 100) / 100;
}

/** `minuend - subtrahend` of two medians, rounded to 2 decimals. */
export function difference(minuend: Series, subtrahend: Series): number {
  return Math.round((minuend.median - subtrahend.median) * 100) / 100;
}

/** A number as printed in the table: 2 decimals below 10, 1 below 100, whole above. */
export function formatNumber(value: number): string {
  return Math.abs(value) < 10 ? value.toFixed(2) : Math.abs(value) < 100 ? value.toFixed(1) : value.toFixed(0);
}

/** One table line of a series: label, median, [min–max], sample count. */
export function formatSeries(s: Series): string {
  const spread = s.samples.length > 1 ? `  [${formatNumber(s.min)}–${formatNumber(s.max)}] n=${s.samples.length}` : "";
  return `${s.label.padEnd(58)} ${formatNumber(s.median).padStart(8)} ${s.unit}${spread}`;
}

/** One table line of a target. */
export function formatTarget(t: Target): string {
  const bound = `${t.kind === "max" ? "≤" : "≥"} ${formatNumber(t.limit)}`;
  return `${t.met ? "met   " : "MISSED"} ${t.label.padEnd(58)} ${formatNumber(t.value).padStart(8)} (${bound})`;
}

/** The machine a run happened on, for the figures of docs/performance.md. */
export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly kernel: string;
  readonly node: string;
  /** Load averages (1, 5, 15 min) when the run started: the machine is shared. */
  readonly loadAtStart: readonly number[];
}

/** Describes this machine. */
export function machine(): Machine {
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).map(Number);
  return {
    cpu: cpus()[0]?.model.trim() ?? "unknown",
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    loadAtStart: load,
  };
}

/** Seconds `body` took, with its result. */
export async function timed<T>(body: () => Promise<T>): Promise<{ seconds: number; result: T }> {
  const start = performance.now();
  const result = await body();
  return { seconds: (performance.now() - start) / 1000, result };
}
