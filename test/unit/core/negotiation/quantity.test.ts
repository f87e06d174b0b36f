import {
  formatCpuMillis,
  formatMemoryBytes,
  parseCpuMillis,
  parseMemoryBytes,
} from "../../../../core/negotiation/quantity.js";

describe("quantities", () => {
  test.each([
    ["500m", 500],
    ["2", 2000],
    ["1.5", 1500],
    ["0", 0],
    ["1k", 1_000_000],
  ])("GIVEN cpu %s WHEN parsed THEN it is %i millicores", (text, millis) => {
    expect(parseCpuMillis(text)).toBe(millis);
  });

  test.each([
    ["4Gi", 4 * 2 ** 30],
    ["512Mi", 512 * 2 ** 20],
    ["1500M", 1.5e9],
    ["1000", 1000],
    ["1.5Gi", 1.5 * 2 ** 30],
  ])("GIVEN memory %s WHEN parsed THEN it is %i bytes", (text, bytes) => {
    expect(parseMemoryBytes(text)).toBe(bytes);
  });

  test.each(["", "two", "5Xi", "-1", "1 Gi"])("GIVEN %p WHEN parsed THEN the error quotes it", (text) => {
    expect(() => parseMemoryBytes(text)).toThrow(`"${text}" is not a valid memory quantity`);
    expect(() => parseCpuMillis(text)).toThrow(`"${text}" is not a valid cpu quantity`);
  });

  test("GIVEN any millicore count WHEN formatted and parsed back THEN it is unchanged", () => {
    for (const millis of [0, 1, 999, 1000, 1500, 2000, 123456])
      expect(parseCpuMillis(formatCpuMillis(millis))).toBe(millis);
  });

  test("GIVEN any byte count WHEN formatted and parsed back THEN it is unchanged, in the largest exact unit", () => {
    for (const bytes of [0, 1000, 2 ** 10, 3 * 2 ** 20, 4 * 2 ** 30, 2 ** 30 + 1])
      expect(parseMemoryBytes(formatMemoryBytes(bytes))).toBe(bytes);
    expect(formatMemoryBytes(4 * 2 ** 30)).toBe("4Gi");
    expect(formatMemoryBytes(2 ** 30 + 2 ** 20)).toBe("1025Mi");
  });
});
