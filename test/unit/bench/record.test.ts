/** The figures of record: read from the performance page, compared with a run, written back. */
import { series } from "../../../bench/figures.js";
import { formatSlip, parseRecord, RECORD_END, RECORD_START, slips, withRecorded } from "../../../bench/record.js";

const PAGE = "# Performance\n\nProse.\n";
const serverMove = "a's gateway pod deleted: 200 ms pings unanswered";

describe("figures of record", () => {
  test("GIVEN a page without a record WHEN a run is recorded THEN the table is added and reads back as written", () => {
    const page = withRecorded(
      PAGE,
      { "gateway-move": [series(serverMove, "s", [1.8, 3.0]), series("iperf3 gateway", "Gbit/s", [1.6, 1.7])] },
      "2026-11-25",
      "npm run bench -- gateway-move --rounds 2",
    );
    expect(page.startsWith(PAGE)).toBe(true);
    expect(page).toContain(RECORD_START);
    expect(page.trimEnd().endsWith(RECORD_END)).toBe(true);
    expect(parseRecord(page)).toEqual([
      {
        section: "gateway-move",
        label: serverMove,
        median: 2.4,
        unit: "s",
        min: 1.8,
        max: 3,
        samples: 2,
        recorded: "2026-11-25",
        command: "npm run bench -- gateway-move --rounds 2",
      },
      expect.objectContaining({ label: "iperf3 gateway", median: 1.65, unit: "Gbit/s" }),
    ]);
  });

  test("GIVEN a recorded page WHEN another run records THEN its figures replace theirs, new ones join their section, the rest and the prose stay", () => {
    const first = withRecorded(
      `${PAGE}\nAfter.\n`,
      { tunnel: [series("iperf3 gateway", "Gbit/s", [1.6])], "gateway-move": [series(serverMove, "s", [2.4])] },
      "2026-11-25",
      "npm run bench",
    );
    const withProse = first.replace(RECORD_END, `${RECORD_END}\n\nMore prose.`);
    const second = withRecorded(
      withProse,
      { tunnel: [series("iperf3 gateway", "Gbit/s", [1.9]), series("first packet", "ms", [80])] },
      "2026-11-29",
      "npm run bench -- tunnel",
    );
    expect(parseRecord(second).map((r) => [r.section, r.label, r.median, r.recorded])).toEqual([
      ["tunnel", "iperf3 gateway", 1.9, "2026-11-29"],
      ["tunnel", "first packet", 80, "2026-11-29"],
      ["gateway-move", serverMove, 2.4, "2026-11-25"],
    ]);
    expect(second).toContain("Prose.");
    expect(second).toContain("More prose.");
    expect(second.split(RECORD_START)).toHaveLength(2);
  });

  test("GIVEN figures worse than their record beyond the tolerance and the recorded spread THEN they slipped, worst first; better or near ones did not", () => {
    const record = parseRecord(
      withRecorded(
        PAGE,
        {
          "gateway-move": [series(serverMove, "s", [1.8, 3.0]), series("client move", "s", [0.8, 1.2])],
          tunnel: [series("iperf3 gateway", "Gbit/s", [1.6, 1.7]), series("first packet", "ms", [100])],
        },
        "2026-11-25",
        "npm run bench",
      ),
    );
    const found = slips(
      [
        series(serverMove, "s", [6.0, 6.4]), // 2.6 × the record: slipped
        series("client move", "s", [1.1]), // worse, within the recorded spread: not
        series("iperf3 gateway", "Gbit/s", [1.2]), // throughput down 27 %: slipped
        series("first packet", "ms", [110]), // 10 % worse: within the tolerance
        series("first packet", "s", [9]), // another unit: not compared
        series("never recorded", "s", [99]),
      ],
      record,
    );
    expect(found.map((s) => [s.label, Math.round(s.worseBy * 100)])).toEqual([
      [serverMove, 158],
      ["iperf3 gateway", 27],
    ]);
    expect(formatSlip(found[0]!)).toMatch(
      /^SLIPPED a's gateway pod deleted: 200 ms pings unanswered +6\.20 s, 158 % worse than 2\.40 \[1\.80–3\.00\] of 2026-11-25 \(npm run bench\)$/,
    );
  });

  test("GIVEN rows printed indented under each of two parents THEN each is recorded and compared under its own parent", () => {
    const measured = [
      series("client deleted: pings unanswered", "s", [1.2]),
      series("  first answer after the delete", "s", [1.4]),
      series("server deleted: pings unanswered", "s", [1.4]),
      series("  first answer after the delete", "s", [1.6]),
    ];
    const record = parseRecord(withRecorded(PAGE, { "gateway-move": measured }, "2026-11-29", "npm run bench"));
    expect(record.map((r) => [r.label, r.median])).toEqual([
      ["client deleted: pings unanswered", 1.2],
      ["client deleted: pings unanswered › first answer after the delete", 1.4],
      ["server deleted: pings unanswered", 1.4],
      ["server deleted: pings unanswered › first answer after the delete", 1.6],
    ]);
    const later = [measured[0]!, measured[1]!, measured[2]!, series("  first answer after the delete", "s", [6.2])];
    expect(slips(later, record).map((s) => s.label)).toEqual([
      "server deleted: pings unanswered › first answer after the delete",
    ]);
  });

  test("GIVEN rows that do not read as figures THEN they are skipped, not misread", () => {
    const page = [
      RECORD_START,
      "| section | figure | median | unit | [min–max], n | recorded | command |",
      "| --- | --- | --- | --- | --- | --- | --- |",
      "| x | y | not a number | s | 1–2, 2 | d | c |",
      "| x | y | 1 | s | junk | d | c |",
      RECORD_END,
    ].join("\n");
    expect(parseRecord(page)).toEqual([]);
  });
});
