/**
 * The JUnit report `e2e.test --report-dir` writes (Ginkgo's), read into one result per spec. Pure:
 * Ginkgo writes each `<testcase>` with its attributes on one tag, and a failure as a `<failure>` (or
 * `<error>`) child that says why in its text (`[FAILED] … In [It] at: file:line`), its `message`
 * left empty; that regular shape is all this reads, so no XML library.
 */

/** How a spec ended, as Ginkgo's report says it (`passed`, `failed`, `skipped`, `timedout`, `panicked`…). */
export type SpecStatus = string;

/** One spec of the report. */
export interface SpecResult {
  /** The spec's full text without Ginkgo's `[It] ` node prefix, e.g. `[sig-node] Pods should get a host IP [NodeConformance] [Conformance]`. */
  readonly name: string;
  readonly status: SpecStatus;
  /** Seconds it ran. */
  readonly seconds: number;
  /** Why it failed: the failure's message, else its text, whitespace folded; absent when it passed or was skipped. */
  readonly reason?: string;
}

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** `text` with XML's character references decoded (named, decimal and hexadecimal). */
export function decodeXml(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);/g, (whole, ref: string) => {
    if (ref.startsWith("#x")) return String.fromCodePoint(parseInt(ref.slice(2), 16));
    if (ref.startsWith("#")) return String.fromCodePoint(parseInt(ref.slice(1), 10));
    return ENTITIES[ref] ?? whole;
  });
}

/** The attributes of one start tag's text (`name="…" status="…"`), decoded. */
function attributes(tag: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const match of tag.matchAll(/([A-Za-z_:][-\w:.]*)="([^"]*)"/g)) found[match[1]!] = decodeXml(match[2]!);
  return found;
}

/**
 * The specs (Ginkgo `[It]` nodes) of a JUnit report, in report order; suite nodes (`[BeforeSuite]`,
 * `[ReportAfterSuite]`…) are left out. A spec the run never reached is `skipped`. Throws naming
 * `source` when the text holds no test suite at all (not a report, or cut short).
 */
export function parseJUnit(xml: string, source: string): SpecResult[] {
  if (!/<testsuite[\s>]/.test(xml)) throw new Error(`conformance: ${source} is not a JUnit report (no <testsuite>)`);
  const specs: SpecResult[] = [];
  const testcase = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const match of xml.matchAll(testcase)) {
    const attrs = attributes(match[1]!);
    const name = attrs["name"] ?? "";
    if (!name.startsWith("[It] ")) continue;
    const body = match[3] ?? "";
    const failure = /<(failure|error)\b([^>]*?)(\/>|>([\s\S]*?)<\/\1>)/.exec(body);
    const status = attrs["status"] ?? (failure ? "failed" : /<skipped\b/.test(body) ? "skipped" : "passed");
    const message = failure ? attributes(failure[2]!)["message"] || decodeXml(failure[4] ?? "") : undefined;
    specs.push({
      name: name.slice("[It] ".length),
      status,
      seconds: Number(attrs["time"] ?? 0),
      ...(message ? { reason: message.replace(/\s+/g, " ").trim() } : {}),
    });
  }
  return specs;
}
