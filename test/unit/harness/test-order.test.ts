/** testOrder: the order Jest's workers take the test files in. */
import { testOrder, usesSharedLab, type TimedFile } from "../../../harness/test-order.js";

const file = (test: string, seconds: number, shared = true): TimedFile<string> => ({
  test,
  seconds,
  usesSharedLab: shared,
});
const names = (files: TimedFile<string>[]): string[] => files.map((f) => f.test);

describe("testOrder", () => {
  test("GIVEN files of several lengths WHEN ordered THEN longest first, equal lengths in their given order", () => {
    const files = [file("b", 2), file("c", 30), file("a", 7), file("d", 7)];
    expect(names(testOrder(files))).toEqual(["c", "a", "d", "b"]);
  });

  test("GIVEN files that use the shared lab and others WHEN ordered THEN every user comes first, longest first in each group", () => {
    const files = [
      file("p1", 300, false),
      file("s1", 20),
      file("u1", 1, false),
      file("s2", 200),
      file("p2", 90, false),
    ];
    expect(names(testOrder(files))).toEqual(["s2", "s1", "p1", "p2", "u1"]);
  });
});

describe("usesSharedLab", () => {
  test.each([
    ["const lab = await sharedLab();", true],
    ['await withSharedLabProfile("gateway-only", body);', true],
    ["const given = pluginOnSharedLab();", true],
    ['await expectBenchSectionFigures(section, ["--shared-lab"], deadlineMs);', true],
    ['await withLab([{ name: "a" }], {}, body);', false],
    ["expect(testOrder(files)).toEqual([]);", false],
    ["afterAll(releaseSharedLab); await retireSharedLab(name);", false],
  ])("GIVEN a file that says %j THEN it uses the shared lab: %s", (source, expected) => {
    expect(usesSharedLab(source)).toBe(expected);
  });
});
