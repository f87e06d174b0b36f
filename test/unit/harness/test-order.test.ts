/** testOrder: the order Jest's workers take the test files in. */
import { testOrder, type TimedFile } from "../../../harness/test-order.js";

const file = (test: string, seconds: number): TimedFile<string> => ({ test, seconds });
const names = (files: TimedFile<string>[]): string[] => files.map((f) => f.test);

describe("testOrder", () => {
  test("GIVEN files of several lengths WHEN ordered THEN longest first, equal lengths in their given order", () => {
    const files = [file("b", 2), file("c", 30), file("a", 7), file("d", 7)];
    expect(names(testOrder(files))).toEqual(["c", "a", "d", "b"]);
  });
});
