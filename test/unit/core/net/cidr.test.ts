/** Cidr values: parsing that quotes bad input, containment, overlap and address arithmetic. */
import { Cidr, CidrParseError, formatIpv4, parseIpv4 } from "../../../../core/net/cidr.js";

/** Runs `f`, expecting it to throw, and returns what it threw. */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw, got none");
}

/** Asserts the error is a branded CidrParseError that quotes `input`. */
function expectParseErrorQuoting(error: unknown, input: string): void {
  const e = error as Partial<CidrParseError> & Error;
  expect(e.isCidrParseError).toBe(true);
  expect(e.name).toBe("CidrParseError");
  expect(e.input).toBe(input);
  expect(e.message).toContain(`"${input}"`);
}

describe("Cidr.parse", () => {
  test.each(["10.244.0.0/16", "0.0.0.0/0", "192.168.1.7/32", "172.29.3.0/24", "255.255.255.255/32", "10.0.0.0/8"])(
    "GIVEN the canonical text %s WHEN parsed THEN toString gives the same text back",
    (text) => {
      expect(Cidr.parse(text).toString()).toBe(text);
    },
  );

  test("GIVEN a /n block WHEN parsed THEN its size is 2^(32-n) and its prefix length is n", () => {
    for (const n of [0, 1, 8, 16, 24, 31, 32]) {
      const cidr = Cidr.parse(`0.0.0.0/${n}`);
      expect(cidr.prefixLength).toBe(n);
      expect(cidr.size).toBe(2 ** (32 - n));
    }
  });

  test("GIVEN a block WHEN parsed THEN its network number is the parsed network address", () => {
    const cidr = Cidr.parse("10.244.0.0/16");
    expect(cidr.network).toBe(parseIpv4("10.244.0.0"));
  });

  test.each([
    "",
    "10.0.0.0",
    "10.0.0.0/",
    "/16",
    "10.0.0/16",
    "10.0.0.0.0/16",
    "10.0.0.256/32",
    "10.0.0.-1/32",
    "a.b.c.d/8",
    "10.0.0.0/x",
    "10.0.0.0/16/2",
    "10.0.0.0/123",
    "10.0.0.0/-1",
    "fd00::/64",
    "1e1.0.0.0/8",
    "10.0.0.0 /8",
  ])("GIVEN the bad text %j WHEN parsed THEN a branded CidrParseError quotes it", (text) => {
    expectParseErrorQuoting(
      thrown(() => Cidr.parse(text)),
      text,
    );
  });

  test("GIVEN a bad CIDR WHEN parsed THEN the error is an Error too, for callers that print it", () => {
    expect(thrown(() => Cidr.parse("nonsense"))).toBeInstanceOf(Error);
  });

  test("GIVEN an address with host bits set WHEN parsed THEN it is refused with a suggestion of the network", () => {
    const error = thrown(() => Cidr.parse("10.1.2.3/16"));
    expectParseErrorQuoting(error, "10.1.2.3/16");
    expect((error as Error).message).toMatch(/host bits/);
    expect((error as Error).message).toContain("did you mean 10.1.0.0/16?");
  });

  test("GIVEN host bits set at several prefix lengths WHEN parsed THEN the suggestion is itself a valid CIDR containing the address", () => {
    for (const [address, n] of [
      ["192.168.1.77", 24],
      ["10.255.255.255", 8],
      ["1.2.3.4", 0],
      ["172.29.1.9", 30],
      ["10.0.0.1", 31],
    ] as const) {
      const message = (thrown(() => Cidr.parse(`${address}/${n}`)) as Error).message;
      const suggestion = /did you mean (\S+)\?/.exec(message)?.[1];
      expect(suggestion).toBeDefined();
      const suggested = Cidr.parse(suggestion!);
      expect(suggested.prefixLength).toBe(n);
      expect(suggested.contains(address)).toBe(true);
    }
  });

  test.each(["10.0.0.0/33", "10.0.0.0/99"])(
    "GIVEN the prefix of %s above 32 WHEN parsed THEN the error says the allowed range",
    (text) => {
      const error = thrown(() => Cidr.parse(text));
      expectParseErrorQuoting(error, text);
      expect((error as Error).message).toMatch(/between 0 and 32/);
    },
  );

  test("GIVEN a bad address part WHEN parsed THEN the error quotes both the whole text and the address part", () => {
    const message = (thrown(() => Cidr.parse("10.0.300.0/24")) as Error).message;
    expect(message).toContain('"10.0.300.0/24"');
    expect(message).toContain('"10.0.300.0"');
  });
});

describe("Cidr.nth", () => {
  test("GIVEN a /24 WHEN asked for offsets 0, 1 and 255 THEN it gives the network, first host and broadcast address", () => {
    const cidr = Cidr.parse("172.29.4.0/24");
    expect(cidr.nth(0)).toBe("172.29.4.0");
    expect(cidr.nth(1)).toBe("172.29.4.1");
    expect(cidr.nth(255)).toBe("172.29.4.255");
  });

  test("GIVEN any in-range offset WHEN asked THEN the address lies in the block", () => {
    const cidr = Cidr.parse("10.8.0.0/13");
    for (const offset of [0, 1, 255, 256, 65535, 65536, cidr.size - 1]) {
      expect(cidr.contains(cidr.nth(offset))).toBe(true);
      expect(parseIpv4(cidr.nth(offset))).toBe(cidr.network + offset);
    }
  });

  test("GIVEN an offset across an octet boundary WHEN asked THEN the carry reaches the next octet", () => {
    expect(Cidr.parse("10.0.0.0/16").nth(256)).toBe("10.0.1.0");
  });

  test.each([-1, 256, 1000, 0.5, Number.NaN, Number.POSITIVE_INFINITY])(
    "GIVEN the offset %p outside a /24 WHEN asked THEN a RangeError names the offset and the block",
    (offset) => {
      const error = thrown(() => Cidr.parse("10.0.0.0/24").nth(offset));
      expect(error).toBeInstanceOf(RangeError);
      expect((error as Error).message).toContain(String(offset));
      expect((error as Error).message).toContain("10.0.0.0/24");
    },
  );

  test("GIVEN a /32 WHEN asked THEN only offset 0 exists", () => {
    const cidr = Cidr.parse("192.0.2.7/32");
    expect(cidr.nth(0)).toBe("192.0.2.7");
    expect(() => cidr.nth(1)).toThrow(RangeError);
  });

  test("GIVEN 0.0.0.0/0 WHEN asked for the last offset THEN it is 255.255.255.255 and one more is refused", () => {
    const all = Cidr.parse("0.0.0.0/0");
    expect(all.nth(2 ** 32 - 1)).toBe("255.255.255.255");
    expect(() => all.nth(2 ** 32)).toThrow(RangeError);
  });
});

describe("Cidr.contains", () => {
  test("GIVEN a block WHEN asked about its first and last address THEN both are inside", () => {
    const cidr = Cidr.parse("10.244.0.0/16");
    expect(cidr.contains("10.244.0.0")).toBe(true);
    expect(cidr.contains("10.244.255.255")).toBe(true);
  });

  test("GIVEN a block WHEN asked about the addresses just before and just after it THEN both are outside", () => {
    const cidr = Cidr.parse("10.244.0.0/16");
    expect(cidr.contains("10.243.255.255")).toBe(false);
    expect(cidr.contains("10.245.0.0")).toBe(false);
  });

  test("GIVEN 0.0.0.0/0 WHEN asked about the lowest and highest address THEN both are inside", () => {
    const all = Cidr.parse("0.0.0.0/0");
    expect(all.contains("0.0.0.0")).toBe(true);
    expect(all.contains("255.255.255.255")).toBe(true);
  });

  test("GIVEN a /32 WHEN asked THEN it contains its own address only", () => {
    const one = Cidr.parse("10.0.0.5/32");
    expect(one.contains("10.0.0.5")).toBe(true);
    expect(one.contains("10.0.0.4")).toBe(false);
    expect(one.contains("10.0.0.6")).toBe(false);
  });

  test("GIVEN a bad address WHEN asked THEN a branded CidrParseError quotes it", () => {
    expectParseErrorQuoting(
      thrown(() => Cidr.parse("10.0.0.0/8").contains("10.0.0")),
      "10.0.0",
    );
  });
});

describe("Cidr.overlaps", () => {
  const overlapsBothWays = (a: string, b: string): [boolean, boolean] => [
    Cidr.parse(a).overlaps(Cidr.parse(b)),
    Cidr.parse(b).overlaps(Cidr.parse(a)),
  ];

  test("GIVEN two adjacent blocks WHEN compared THEN they do not overlap, either way round", () => {
    expect(overlapsBothWays("10.0.0.0/24", "10.0.1.0/24")).toEqual([false, false]);
    expect(overlapsBothWays("10.0.0.0/25", "10.0.0.128/25")).toEqual([false, false]);
  });

  test("GIVEN a block nested in another WHEN compared THEN they overlap, either way round", () => {
    expect(overlapsBothWays("10.0.0.0/8", "10.244.3.0/24")).toEqual([true, true]);
  });

  test("GIVEN a block nested at the very end of another WHEN compared THEN they overlap", () => {
    expect(overlapsBothWays("10.0.0.0/16", "10.0.255.255/32")).toEqual([true, true]);
  });

  test("GIVEN identical blocks WHEN compared THEN they overlap", () => {
    expect(overlapsBothWays("10.50.0.0/16", "10.50.0.0/16")).toEqual([true, true]);
  });

  test("GIVEN disjoint distant blocks WHEN compared THEN they do not overlap", () => {
    expect(overlapsBothWays("10.100.0.0/16", "10.200.0.0/16")).toEqual([false, false]);
  });

  test("GIVEN 0.0.0.0/0 WHEN compared with any block THEN they overlap", () => {
    for (const other of ["0.0.0.0/32", "255.255.255.255/32", "10.0.0.0/8", "0.0.0.0/0"]) {
      expect(overlapsBothWays("0.0.0.0/0", other)).toEqual([true, true]);
    }
  });

  test("GIVEN two /32 blocks WHEN compared THEN they overlap exactly when the addresses are equal", () => {
    expect(overlapsBothWays("10.0.0.1/32", "10.0.0.1/32")).toEqual([true, true]);
    expect(overlapsBothWays("10.0.0.1/32", "10.0.0.2/32")).toEqual([false, false]);
  });

  test("GIVEN pairs of blocks WHEN compared THEN overlap agrees with whether either block's bounds lie in the other", () => {
    const blocks = [
      "10.0.0.0/8",
      "10.0.0.0/24",
      "10.0.1.0/24",
      "10.0.0.128/25",
      "10.1.0.0/16",
      "11.0.0.0/8",
      "10.0.0.255/32",
      "0.0.0.0/1",
      "128.0.0.0/1",
    ];
    for (const a of blocks) {
      for (const b of blocks) {
        const [x, y] = [Cidr.parse(a), Cidr.parse(b)];
        const bounds = (c: Cidr): string[] => [c.nth(0), c.nth(c.size - 1)];
        const expected = bounds(y).some((addr) => x.contains(addr)) || bounds(x).some((addr) => y.contains(addr));
        expect([a, b, x.overlaps(y)]).toEqual([a, b, expected]);
      }
    }
  });
});

describe("parseIpv4 and formatIpv4", () => {
  test.each(["0.0.0.0", "255.255.255.255", "10.244.0.1", "172.29.250.10", "192.168.100.2", "1.2.3.4"])(
    "GIVEN the address %s WHEN parsed and formatted THEN it reads back unchanged",
    (address) => {
      expect(formatIpv4(parseIpv4(address))).toBe(address);
    },
  );

  test("GIVEN numbers across the 32-bit range WHEN formatted and parsed THEN they read back unchanged", () => {
    for (const value of [
      0,
      1,
      255,
      256,
      65535,
      65536,
      2 ** 24 - 1,
      2 ** 24,
      2 ** 31 - 1,
      2 ** 31,
      2 ** 32 - 1,
      0xdeadbeef,
    ]) {
      expect(parseIpv4(formatIpv4(value))).toBe(value);
    }
  });

  test("GIVEN an address WHEN parsed THEN the first octet is the most significant", () => {
    expect(parseIpv4("1.0.0.0")).toBe(2 ** 24);
    expect(parseIpv4("0.0.0.1")).toBe(1);
    expect(parseIpv4("255.255.255.255")).toBe(2 ** 32 - 1);
  });

  test("GIVEN addresses above 2^31 WHEN parsed THEN the number is unsigned", () => {
    expect(parseIpv4("128.0.0.0")).toBeGreaterThan(0);
    expect(parseIpv4("200.1.1.1")).toBeGreaterThan(parseIpv4("127.255.255.255"));
  });

  test.each([
    "",
    "1.2.3",
    "1.2.3.4.5",
    "1.2.3.256",
    "1..3.4",
    "1.2.3.4 ",
    " 1.2.3.4",
    "1.2.3.x",
    "1.2.3.-4",
    "1.2.3.1234",
    "0x1.2.3.4",
  ])("GIVEN the bad address %j WHEN parsed THEN a branded CidrParseError quotes it", (text) => {
    expectParseErrorQuoting(
      thrown(() => parseIpv4(text)),
      text,
    );
  });
});

describe("Cidr.covering", () => {
  test.each([
    [["10.100.1.0/24"], "10.100.1.0/24"],
    [["10.100.1.0/24", "10.100.2.0/24"], "10.100.0.0/22"],
    [["10.100.1.0/24", "10.100.0.0/24"], "10.100.0.0/23"],
    [["10.244.0.0/24", "10.244.1.0/24", "10.244.255.0/24"], "10.244.0.0/16"],
    [["10.0.0.0/8", "10.1.2.0/24"], "10.0.0.0/8"],
    [["10.0.0.0/24", "192.168.0.0/24"], "0.0.0.0/0"],
  ])("GIVEN blocks %j WHEN covered THEN the smallest block holding them all is %s", (blocks, expected) => {
    expect(Cidr.covering(blocks.map((b) => Cidr.parse(b))).toString()).toBe(expected);
  });

  test("GIVEN no block WHEN covered THEN it throws rather than inventing one", () => {
    expect(() => Cidr.covering([])).toThrow("no block to cover");
  });
});
