/**
 * Kubernetes resource quantities (`500m`, `2`, `4Gi`, `1500M`) as exact integers: CPU in
 * millicores, memory in bytes. Pure; errors quote the bad text.
 */

/** Thrown for text that is not a quantity; the message quotes it. */
export class QuantityParseError extends Error {
  /** Brand for checks across copies of this module (no `instanceof`). */
  readonly isQuantityParseError = true;
  constructor(
    readonly input: string,
    what: string,
  ) {
    super(`"${input}" is not a valid ${what} quantity (e.g. ${what === "cpu" ? "500m or 2" : "512Mi or 4Gi"})`);
    this.name = "QuantityParseError";
  }
}

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50 };
const DECIMAL: Record<string, number> = { "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15 };

function parse(text: string, what: "cpu" | "memory"): { value: number; suffix: string } {
  const match = /^(\d+(?:\.\d+)?)([a-zA-Z]*)$/.exec(String(text).trim());
  if (!match) throw new QuantityParseError(text, what);
  return { value: Number(match[1]), suffix: match[2]! };
}

/** CPU quantity to millicores: `500m` → 500, `2` → 2000, `1.5` → 1500. */
export function parseCpuMillis(text: string): number {
  const { value, suffix } = parse(text, "cpu");
  if (suffix === "m") return Math.round(value);
  if (suffix in DECIMAL) return Math.round(value * DECIMAL[suffix]! * 1000);
  throw new QuantityParseError(text, "cpu");
}

/** CPU quantity to nanocores, as resource metrics give it: `123456n` → 123456, `5m` → 5000000, `1` → 1e9. */
export function parseCpuNanocores(text: string): number {
  const { value, suffix } = parse(text, "cpu");
  const factor = { n: 1, u: 1e3, m: 1e6 }[suffix] ?? (suffix in DECIMAL ? DECIMAL[suffix]! * 1e9 : undefined);
  if (factor === undefined) throw new QuantityParseError(text, "cpu");
  return Math.round(value * factor);
}

/** Memory quantity to bytes: `4Gi` → 4294967296, `1500M` → 1500000000. */
export function parseMemoryBytes(text: string): number {
  const { value, suffix } = parse(text, "memory");
  const factor = BINARY[suffix] ?? DECIMAL[suffix];
  if (factor === undefined) throw new QuantityParseError(text, "memory");
  return Math.round(value * factor);
}

/** Millicores to the shortest exact text: 2000 → `2`, 1500 → `1500m`. */
export function formatCpuMillis(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${Math.floor(millis)}m`;
}

/** Bytes to the largest exact binary unit: 4294967296 → `4Gi`, 1000 → `1000`. */
export function formatMemoryBytes(bytes: number): string {
  for (const unit of ["Pi", "Ti", "Gi", "Mi", "Ki"]) {
    const factor = BINARY[unit]!;
    if (bytes >= factor && bytes % factor === 0) return `${bytes / factor}${unit}`;
  }
  return String(Math.floor(bytes));
}
