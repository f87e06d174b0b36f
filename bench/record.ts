/**
 * The figures of record: the last figure the bench recorded for each of its series, kept in one
 * table of docs/performance.md between two markers. Every run compares its figures with it and
 * prints those that slipped beside the targets, so that a figure that got worse is seen even where
 * no target covers it; `--record` writes this run's figures into it, with the date and the command.
 * Pure: the page's text goes in and comes out.
 */
import { formatNumber, type Series } from "./figures.js";

/** The marker lines the table sits between. */
export const RECORD_START =
  "<!-- bench record: start (written by npm run bench -- … --record; do not edit by hand) -->";
export const RECORD_END = "<!-- bench record: end -->";

/** The table's header. */
const HEADER = [
  "| section | figure | median | unit | [min–max], n | recorded | command |",
  "| --- | --- | --- | --- | --- | --- | --- |",
];

/** One recorded figure. */
export interface RecordedFigure {
  /** The bench section that measured it, e.g. `gateway-move`. */
  readonly section: string;
  /** The series label, as the bench prints it. */
  readonly label: string;
  readonly median: number;
  readonly unit: string;
  readonly min: number;
  readonly max: number;
  readonly samples: number;
  /** The day it was measured, `YYYY-MM-DD`. */
  readonly recorded: string;
  /** The command that measured it. */
  readonly command: string;
}

/** A figure of this run that is worse than its record. */
export interface Slip {
  readonly label: string;
  readonly unit: string;
  readonly now: number;
  readonly recorded: RecordedFigure;
  /** How much worse, relative to the recorded median (0.5: half again as bad). */
  readonly worseBy: number;
}

/** How much worse than its record a median may be before it counts as slipped (the machine is shared, and noisy). */
export const SLIP_TOLERANCE = 0.2;

/** Whether more of `unit` is better: throughput; every other unit of the bench (time, memory, CPU) is better lower. */
export const higherIsBetter = (unit: string): boolean => /bit\/s$/.test(unit);

/**
 * The label each of a section's series is recorded under: its own, or, for a row the bench prints
 * indented under another (`  first answer after the delete`), the two joined (`… › first answer
 * after the delete`), since such rows repeat under each parent.
 */
export function recordLabels(list: readonly Series[]): string[] {
  let parent = "";
  return list.map((s) => {
    if (!/^\s/.test(s.label)) return (parent = s.label.trim());
    return `${parent} › ${s.label.trim()}`;
  });
}

/** The rows between the markers of `page`, or none when it has no record yet. */
export function parseRecord(page: string): RecordedFigure[] {
  const start = page.indexOf(RECORD_START);
  const end = page.indexOf(RECORD_END);
  if (start < 0 || end < start) return [];
  const rows = page
    .slice(start + RECORD_START.length, end)
    .split("\n")
    .slice(HEADER.length + 1);
  return rows.flatMap((row): RecordedFigure[] => {
    const cells = row
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
    const spread = /^([\d.]+)–([\d.]+), (\d+)$/.exec(cells[4] ?? "");
    if (cells.length !== 7 || !spread || !Number.isFinite(Number(cells[2]))) return [];
    return [
      {
        section: cells[0]!,
        label: cells[1]!,
        median: Number(cells[2]),
        unit: cells[3]!,
        min: Number(spread[1]),
        max: Number(spread[2]),
        samples: Number(spread[3]),
        recorded: cells[5]!,
        command: cells[6]!.replace(/^`|`$/g, ""),
      },
    ];
  });
}

/**
 * The figures of `measured` worse than their record by more than {@link SLIP_TOLERANCE} and
 * outside the recorded spread, worst first. A figure in another unit, or with no record, is not compared.
 */
export function slips(measured: readonly Series[], record: readonly RecordedFigure[]): Slip[] {
  const labels = recordLabels(measured);
  return measured
    .flatMap((s, i): Slip[] => {
      const label = labels[i]!;
      const recorded = record.find((r) => r.label === label && r.unit === s.unit);
      if (!recorded || recorded.median === 0) return [];
      const higher = higherIsBetter(s.unit);
      const worseBy = ((higher ? -1 : 1) * (s.median - recorded.median)) / Math.abs(recorded.median);
      const outside = higher ? s.median < recorded.min : s.median > recorded.max;
      return worseBy > SLIP_TOLERANCE && outside ? [{ label, unit: s.unit, now: s.median, recorded, worseBy }] : [];
    })
    .sort((x, y) => y.worseBy - x.worseBy);
}

/** One printed line of a slip, beside the targets. */
export function formatSlip(slip: Slip): string {
  const { recorded } = slip;
  return (
    `SLIPPED ${slip.label.padEnd(57)} ${formatNumber(slip.now).padStart(8)} ${slip.unit}, ` +
    `${Math.round(slip.worseBy * 100)} % worse than ${formatNumber(recorded.median)} ` +
    `[${formatNumber(recorded.min)}–${formatNumber(recorded.max)}] of ${recorded.recorded} (${recorded.command})`
  );
}

const rowOf = (r: RecordedFigure): string =>
  `| ${[
    r.section,
    r.label,
    formatNumber(r.median),
    r.unit,
    `${formatNumber(r.min)}–${formatNumber(r.max)}, ${r.samples}`,
    r.recorded,
    `\`${r.command}\``,
  ].join(" | ")} |`;

/**
 * `page` with the figures of `measured` (by section) recorded: each replaces the row of its label,
 * or is added after its section's rows; the others stay. A page without the markers gets the table at its end.
 */
export function withRecorded(
  page: string,
  measured: Readonly<Record<string, readonly Series[]>>,
  recorded: string,
  command: string,
): string {
  const figures = [...parseRecord(page)];
  for (const [section, list] of Object.entries(measured)) {
    const labels = recordLabels(list);
    for (const [i, s] of list.entries()) {
      const label = labels[i]!;
      const figure: RecordedFigure = {
        section,
        label,
        median: s.median,
        unit: s.unit,
        min: s.min,
        max: s.max,
        samples: s.samples.length,
        recorded,
        command,
      };
      const at = figures.findIndex((r) => r.label === label);
      const lastOfSection = figures.findLastIndex((r) => r.section === section);
      if (at >= 0) figures[at] = figure;
      else figures.splice(lastOfSection >= 0 ? lastOfSection + 1 : figures.length, 0, figure);
    }
  }
  const table = [RECORD_START, ...HEADER, ...figures.map(rowOf), RECORD_END].join("\n");
  const start = page.indexOf(RECORD_START);
  const end = page.indexOf(RECORD_END);
  if (start < 0 || end < start) return `${page.trimEnd()}\n\n${table}\n`;
  return `${page.slice(0, start)}${table}${page.slice(end + RECORD_END.length)}`;
}
