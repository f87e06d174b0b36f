/** Remapping decisions: which range the local cluster sees a remote under, and NETMAP translation. */
import { Cidr, formatIpv4, parseIpv4 } from "../../../../core/net/cidr.js";
import {
  asSeenRanges,
  chooseRemoteView,
  cidrAt,
  DEFAULT_REMAP_POOL,
  firstFreeBlock,
  RemapError,
  type RemoteViewInput,
  translateAddress,
  untranslateAddress,
} from "../../../../core/network-fabric/remap.js";

const c = (text: string): Cidr => Cidr.parse(text);

/** Runs `f`, expecting it to throw, and returns what it threw. */
function thrown(f: () => unknown): Error & Partial<RemapError> {
  try {
    f();
  } catch (error) {
    return error as Error & Partial<RemapError>;
  }
  throw new Error("expected a throw, got none");
}

/** A small deterministic PRNG (mulberry32), so property loops are reproducible. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** A random aligned block of `prefixLength` inside `within`. */
function randomBlock(rand: () => number, within: Cidr, prefixLength: number): Cidr {
  const size = 2 ** (32 - prefixLength);
  const slots = within.size / size;
  return cidrAt(within.network + Math.floor(rand() * slots) * size, prefixLength);
}

/** The first free block found the slow, obvious way: every aligned block in order. */
function naiveFirstFree(pool: Cidr, prefixLength: number, taken: readonly Cidr[]): Cidr | undefined {
  if (prefixLength < pool.prefixLength) return undefined;
  const size = 2 ** (32 - prefixLength);
  for (let n = pool.network; n + size <= pool.network + pool.size; n += size) {
    const block = cidrAt(n, prefixLength);
    if (!taken.some((t) => t.overlaps(block))) return block;
  }
  return undefined;
}

/** Checks what every view must satisfy, whatever the input. */
function expectViewInvariants(input: RemoteViewInput): void {
  const view = chooseRemoteView(input);
  const pool = input.pool ?? DEFAULT_REMAP_POOL;
  const local = [input.localPodCidr, ...(input.localExternalCidr ? [input.localExternalCidr] : []), ...input.reserved];
  for (const range of view.ranges) {
    expect(range.asSeen.prefixLength).toBe(range.real.prefixLength);
    expect(local.some((l) => l.overlaps(range.asSeen))).toBe(false);
    expect(range.remapped).toBe(range.asSeen.toString() !== range.real.toString());
    // Kept as is exactly when the real range was free; remapped ranges come from the pool.
    expect(range.remapped).toBe(local.some((l) => l.overlaps(range.real)));
    if (range.remapped) expect(pool.overlaps(range.asSeen) && range.asSeen.network >= pool.network).toBe(true);
  }
  const [pod, external] = view.ranges;
  if (external) expect(pod!.asSeen.overlaps(external.asSeen)).toBe(false);
}

describe("chooseRemoteView", () => {
  test("GIVEN a remote pod CIDR overlapping nothing local WHEN choosing the view THEN it is seen unchanged", () => {
    const view = chooseRemoteView({
      localPodCidr: c("10.100.0.0/16"),
      remotePodCidr: c("10.101.0.0/16"),
      reserved: [c("10.200.0.0/16")],
    });
    expect(view.remotePodCidrAsSeen.toString()).toBe("10.101.0.0/16");
    expect(view.remapped).toBe(false);
    expect(view.remoteExternalCidrAsSeen).toBeUndefined();
    expect(view.externalRemapped).toBeUndefined();
    expect(view.ranges).toHaveLength(1);
  });

  test("GIVEN remote pod and external CIDRs overlapping nothing local WHEN choosing the view THEN both are seen unchanged", () => {
    const view = chooseRemoteView({
      localPodCidr: c("10.100.0.0/16"),
      localExternalCidr: c("10.70.0.0/16"),
      remotePodCidr: c("10.101.0.0/16"),
      remoteExternalCidr: c("10.71.0.0/16"),
      reserved: [],
    });
    expect([view.remotePodCidrAsSeen.toString(), view.remapped]).toEqual(["10.101.0.0/16", false]);
    expect([view.remoteExternalCidrAsSeen?.toString(), view.externalRemapped]).toEqual(["10.71.0.0/16", false]);
  });

  test("GIVEN identical pod CIDRs on both sides WHEN choosing the view THEN the remote is remapped to the pool's first /16", () => {
    const view = chooseRemoteView({
      localPodCidr: c("10.100.0.0/16"),
      remotePodCidr: c("10.100.0.0/16"),
      reserved: [],
    });
    expect(view.remotePodCidrAsSeen.toString()).toBe("10.64.0.0/16");
    expect(view.remapped).toBe(true);
    expect(view.ranges[0]).toEqual({ real: c("10.100.0.0/16"), asSeen: c("10.64.0.0/16"), remapped: true });
  });

  test("GIVEN identical pod and external CIDRs on both sides WHEN choosing the view THEN both are remapped to distinct blocks", () => {
    const view = chooseRemoteView({
      localPodCidr: c("10.100.0.0/16"),
      localExternalCidr: c("10.70.0.0/16"),
      remotePodCidr: c("10.100.0.0/16"),
      remoteExternalCidr: c("10.70.0.0/16"),
      reserved: [],
    });
    expect(view.remotePodCidrAsSeen.toString()).toBe("10.64.0.0/16");
    expect(view.remoteExternalCidrAsSeen?.toString()).toBe("10.65.0.0/16");
    expect([view.remapped, view.externalRemapped]).toEqual([true, true]);
  });

  test.each([
    ["remote overlaps the local upper half", "10.100.128.0/17", "10.100.0.0/16", "10.64.0.0/16"],
    ["remote wider than local and containing it", "10.100.0.0/16", "10.100.0.0/15", "10.64.0.0/15"],
    ["remote nested inside local", "10.100.0.0/16", "10.100.42.0/24", "10.64.0.0/24"],
    ["remote /8 containing local", "10.100.0.0/16", "10.0.0.0/8", undefined],
    ["remote /30 at the very end of local", "10.100.0.0/16", "10.100.255.252/30", "10.64.0.0/30"],
  ])(
    "GIVEN a %s (local %s, remote %s) WHEN choosing the view THEN the remote is seen under the first free block of its size",
    (_, local, remote, expected) => {
      const input = { localPodCidr: c(local), remotePodCidr: c(remote), reserved: [] };
      if (expected === undefined) {
        // A /8 cannot fit in the default /10: that is exhaustion, not a silent narrowing.
        expect(thrown(() => chooseRemoteView(input)).kind).toBe("pool-exhausted");
        expect(chooseRemoteView({ ...input, pool: c("0.0.0.0/0") }).remotePodCidrAsSeen.toString()).toBe("0.0.0.0/8");
      } else {
        expect(chooseRemoteView(input).remotePodCidrAsSeen.toString()).toBe(expected);
      }
    },
  );

  test("GIVEN overlap with the local external CIDR only WHEN choosing the view THEN the remote pod CIDR is remapped", () => {
    const view = chooseRemoteView({
      localPodCidr: c("10.100.0.0/16"),
      localExternalCidr: c("10.101.0.0/16"),
      remotePodCidr: c("10.101.0.0/16"),
      reserved: [],
    });
    expect([view.remotePodCidrAsSeen.toString(), view.remapped]).toEqual(["10.64.0.0/16", true]);
  });

  test("GIVEN overlap with a reserved range only WHEN choosing the view THEN the remote pod CIDR is remapped", () => {
    const view = chooseRemoteView({
      localPodCidr: c("10.100.0.0/16"),
      remotePodCidr: c("10.96.0.0/16"),
      reserved: [c("10.96.0.0/12")],
    });
    expect([view.remotePodCidrAsSeen.toString(), view.remapped]).toEqual(["10.64.0.0/16", true]);
  });

  test.each([
    [["10.64.0.0/16"], "10.65.0.0/16"],
    [["10.64.0.0/16", "10.65.0.0/16"], "10.66.0.0/16"],
    [["10.65.0.0/16", "10.64.0.0/16"], "10.66.0.0/16"],
    [["10.64.0.0/12"], "10.80.0.0/16"],
    [["10.64.255.0/24"], "10.65.0.0/16"],
    [["10.64.0.0/32"], "10.65.0.0/16"],
    [["10.64.0.0/16", "10.66.0.0/16"], "10.65.0.0/16"],
    [["0.0.0.0/1", "10.64.0.0/16"], undefined],
  ])(
    "GIVEN reserved ranges %j WHEN remapping identical /16s THEN the view skips them to %s (undefined: the pool is exhausted)",
    (reserved, expected) => {
      const input = { localPodCidr: c("10.100.0.0/16"), remotePodCidr: c("10.100.0.0/16"), reserved: reserved.map(c) };
      if (expected === undefined) expect(thrown(() => chooseRemoteView(input)).kind).toBe("pool-exhausted");
      else expect(chooseRemoteView(input).remotePodCidrAsSeen.toString()).toBe(expected);
    },
  );

  test("GIVEN a local pod CIDR inside the pool WHEN remapping an identical remote THEN the view skips the local range", () => {
    const view = chooseRemoteView({ localPodCidr: c("10.64.0.0/16"), remotePodCidr: c("10.64.0.0/16"), reserved: [] });
    expect(view.remotePodCidrAsSeen.toString()).toBe("10.65.0.0/16");
  });

  test("GIVEN a remote external CIDR kept as is inside the pool WHEN remapping the remote pod CIDR THEN the pod view avoids it", () => {
    const view = chooseRemoteView({
      localPodCidr: c("10.100.0.0/16"),
      remotePodCidr: c("10.100.0.0/16"),
      remoteExternalCidr: c("10.64.0.0/16"),
      reserved: [],
    });
    expect([view.remoteExternalCidrAsSeen?.toString(), view.externalRemapped]).toEqual(["10.64.0.0/16", false]);
    expect([view.remotePodCidrAsSeen.toString(), view.remapped]).toEqual(["10.65.0.0/16", true]);
  });

  test("GIVEN a remote pod CIDR kept as is inside the pool WHEN remapping the remote external CIDR THEN the external view avoids it", () => {
    const view = chooseRemoteView({
      localPodCidr: c("10.100.0.0/16"),
      localExternalCidr: c("10.70.0.0/16"),
      remotePodCidr: c("10.64.0.0/16"),
      remoteExternalCidr: c("10.70.0.0/16"),
      reserved: [],
    });
    expect([view.remotePodCidrAsSeen.toString(), view.remapped]).toEqual(["10.64.0.0/16", false]);
    expect([view.remoteExternalCidrAsSeen?.toString(), view.externalRemapped]).toEqual(["10.65.0.0/16", true]);
  });

  test("GIVEN prefixes /8 to /30 WHEN remapping identical CIDRs THEN each view is the next free block of the same size", () => {
    const pool = c("64.0.0.0/2");
    for (let n = 8; n <= 30; n++) {
      // The local range sits on the pool's first block, so the view must be the second one.
      const local = cidrAt(pool.network, n);
      const view = chooseRemoteView({ localPodCidr: local, remotePodCidr: local, reserved: [], pool });
      expect(view.remotePodCidrAsSeen.toString()).toBe(cidrAt(pool.network + 2 ** (32 - n), n).toString());
      expect(view.remotePodCidrAsSeen.prefixLength).toBe(n);
    }
  });

  test("GIVEN random overlapping inputs /8 to /30 WHEN choosing views THEN every invariant holds and the block matches a naive scan", () => {
    const rand = prng(42);
    const pool = c("10.0.0.0/8");
    for (let i = 0; i < 400; i++) {
      const n = 8 + Math.floor(rand() * 23);
      const localPrefix = Math.max(8, Math.min(30, n + Math.floor(rand() * 9) - 4));
      const localPodCidr = randomBlock(rand, pool, localPrefix);
      const remotePodCidr =
        rand() < 0.5
          ? randomBlock(rand, localPodCidr.prefixLength <= n ? localPodCidr : pool, n)
          : randomBlock(rand, pool, n);
      const reserved = Array.from({ length: Math.floor(rand() * 5) }, () =>
        randomBlock(rand, c("0.0.0.0/0"), 8 + Math.floor(rand() * 23)),
      );
      const input = { localPodCidr, remotePodCidr, reserved, pool: c("0.0.0.0/1") };
      expectViewInvariants(input);
      const local = [localPodCidr, ...reserved];
      const expected = local.some((l) => l.overlaps(remotePodCidr))
        ? naiveFirstFree(input.pool, n, local)
        : remotePodCidr;
      expect(chooseRemoteView(input).remotePodCidrAsSeen.toString()).toBe(expected?.toString());
    }
  });

  test("GIVEN the same input twice, or its reserved ranges in any order WHEN choosing views THEN the views are equal", () => {
    const reserved = [c("10.64.0.0/16"), c("10.66.0.0/15"), c("10.65.128.0/17"), c("10.200.0.0/16")];
    const base = {
      localPodCidr: c("10.100.0.0/16"),
      localExternalCidr: c("10.70.0.0/16"),
      remotePodCidr: c("10.100.0.0/16"),
      remoteExternalCidr: c("10.70.0.0/16"),
    };
    const render = (order: Cidr[]): string =>
      JSON.stringify(
        chooseRemoteView({ ...base, reserved: order }).ranges.map((r) => [
          String(r.real),
          String(r.asSeen),
          r.remapped,
        ]),
      );
    const first = render(reserved);
    expect(first).toBe(
      JSON.stringify([
        ["10.100.0.0/16", "10.68.0.0/16", true],
        ["10.70.0.0/16", "10.69.0.0/16", true],
      ]),
    );
    const permutations = (xs: Cidr[]): Cidr[][] =>
      xs.length <= 1
        ? [xs]
        : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
    for (const order of permutations(reserved)) expect(render(order)).toBe(first);
  });

  test("GIVEN a first peer's view reserved WHEN choosing a second identical peer's view THEN it gets the next block", () => {
    const input = {
      localPodCidr: c("10.100.0.0/16"),
      remotePodCidr: c("10.100.0.0/16"),
      reserved: [c("10.200.0.0/16")],
    };
    const first = chooseRemoteView(input);
    const second = chooseRemoteView({ ...input, reserved: [...input.reserved, ...asSeenRanges(first)] });
    expect([first.remotePodCidrAsSeen.toString(), second.remotePodCidrAsSeen.toString()]).toEqual([
      "10.64.0.0/16",
      "10.65.0.0/16",
    ]);
  });

  test("GIVEN a pool whose every block is taken WHEN choosing the view THEN a branded error names the remote CIDR and the pool", () => {
    const error = thrown(() =>
      chooseRemoteView({
        localPodCidr: c("10.100.0.0/16"),
        remotePodCidr: c("10.100.0.0/16"),
        reserved: [c("10.64.0.0/16"), c("10.65.0.0/16")],
        pool: c("10.64.0.0/15"),
      }),
    );
    expect(error.isRemapError).toBe(true);
    expect(error.name).toBe("RemapError");
    expect(error.kind).toBe("pool-exhausted");
    expect(error.message).toContain("remote pod CIDR 10.100.0.0/16");
    expect(error.message).toContain("pool 10.64.0.0/15");
    expect(error.message).toContain("10.65.0.0/16");
  });

  test("GIVEN the pod view takes the pool's last block WHEN the external CIDR also needs one THEN the error names the external CIDR", () => {
    const error = thrown(() =>
      chooseRemoteView({
        localPodCidr: c("10.100.0.0/16"),
        localExternalCidr: c("10.70.0.0/16"),
        remotePodCidr: c("10.100.0.0/16"),
        remoteExternalCidr: c("10.70.0.0/16"),
        reserved: [],
        pool: c("10.64.0.0/16"),
      }),
    );
    expect(error.kind).toBe("pool-exhausted");
    expect(error.message).toContain("remote external CIDR 10.70.0.0/16");
    expect(error.message).toContain("pool 10.64.0.0/16");
  });

  test("GIVEN a remote wider than the pool WHEN choosing the view THEN the error says the pool is too small", () => {
    const error = thrown(() =>
      chooseRemoteView({ localPodCidr: c("10.0.0.0/8"), remotePodCidr: c("10.0.0.0/8"), reserved: [] }),
    );
    expect(error.kind).toBe("pool-exhausted");
    expect(error.message).toContain("10.0.0.0/8");
    expect(error.message).toContain(`pool ${DEFAULT_REMAP_POOL}`);
    expect(error.message).toContain("smaller than a /8");
  });

  test("GIVEN both clusters' pod and external CIDRs overlapping WHEN choosing the view THEN one error lists both problems", () => {
    const error = thrown(() =>
      chooseRemoteView({
        localPodCidr: c("10.100.0.0/16"),
        localExternalCidr: c("10.100.0.0/24"),
        remotePodCidr: c("10.101.0.0/16"),
        remoteExternalCidr: c("10.101.7.0/24"),
        reserved: [],
      }),
    );
    expect(error.kind).toBe("invalid-input");
    expect(error.message).toContain("remote pod CIDR 10.101.0.0/16 overlaps the remote external CIDR 10.101.7.0/24");
    expect(error.message).toContain("local pod CIDR 10.100.0.0/16 overlaps the local external CIDR 10.100.0.0/24");
  });
});

describe("firstFreeBlock", () => {
  test("GIVEN random pools and taken ranges WHEN searching THEN the skipping search equals the naive scan", () => {
    const rand = prng(7);
    for (let i = 0; i < 300; i++) {
      const pool = randomBlock(rand, c("0.0.0.0/0"), 12 + Math.floor(rand() * 10));
      const n = pool.prefixLength + Math.floor(rand() * 8) - 1;
      const taken = Array.from({ length: Math.floor(rand() * 12) }, () =>
        randomBlock(rand, pool, Math.min(32, pool.prefixLength + Math.floor(rand() * 12))),
      );
      expect(firstFreeBlock(pool, n, taken)?.toString()).toBe(naiveFirstFree(pool, n, taken)?.toString());
    }
  });

  test("GIVEN a /30 behind a large taken range WHEN searching a /10 THEN it lands just past the range", () => {
    expect(firstFreeBlock(c("10.64.0.0/10"), 30, [c("10.64.0.0/11")])?.toString()).toBe("10.96.0.0/30");
  });
});

describe("translateAddress", () => {
  test("GIVEN an address in the from block WHEN translated THEN the host part is kept in the to block", () => {
    expect(translateAddress("10.100.3.7", c("10.100.0.0/16"), c("10.64.0.0/16"))).toBe("10.64.3.7");
    expect(untranslateAddress("10.64.3.7", c("10.100.0.0/16"), c("10.64.0.0/16"))).toBe("10.100.3.7");
  });

  test("GIVEN many addresses at every prefix /8 to /32 WHEN translated and back THEN each returns to itself with its host part kept", () => {
    const rand = prng(2024);
    for (let n = 8; n <= 32; n++) {
      for (let i = 0; i < 40; i++) {
        const from = randomBlock(rand, c("0.0.0.0/0"), n);
        const to = randomBlock(rand, c("0.0.0.0/0"), n);
        // The edges (network and last address) and random offsets in between.
        const offset = i === 0 ? 0 : i === 1 ? from.size - 1 : Math.floor(rand() * from.size);
        const address = from.nth(offset);
        const seen = translateAddress(address, from, to);
        expect(to.contains(seen)).toBe(true);
        expect(parseIpv4(seen) - to.network).toBe(offset);
        expect(untranslateAddress(seen, from, to)).toBe(address);
        expect(translateAddress(seen, to, from)).toBe(address);
      }
    }
  });

  test("GIVEN a block translated onto itself WHEN translating THEN every address is unchanged", () => {
    const block = c("192.168.4.0/30");
    for (let offset = 0; offset < block.size; offset++)
      expect(translateAddress(block.nth(offset), block, block)).toBe(block.nth(offset));
  });

  test("GIVEN an address outside the from block WHEN translated THEN a branded error quotes the address and the block", () => {
    for (const address of ["10.99.255.255", "10.101.0.0", "0.0.0.0", "255.255.255.255"]) {
      const error = thrown(() => translateAddress(address, c("10.100.0.0/16"), c("10.64.0.0/16")));
      expect([error.isRemapError, error.kind]).toEqual([true, "outside-range"]);
      expect(error.message).toContain(`"${address}"`);
      expect(error.message).toContain("outside 10.100.0.0/16");
    }
    expect(thrown(() => untranslateAddress("10.100.0.1", c("10.100.0.0/16"), c("10.64.0.0/16"))).kind).toBe(
      "outside-range",
    );
  });

  test("GIVEN blocks of different prefix lengths WHEN translating THEN a branded error names both blocks", () => {
    const error = thrown(() => translateAddress("10.100.0.1", c("10.100.0.0/16"), c("10.64.0.0/17")));
    expect(error.kind).toBe("prefix-mismatch");
    expect(error.message).toContain("10.100.0.0/16");
    expect(error.message).toContain("10.64.0.0/17");
  });

  test("GIVEN text that is not an address WHEN translating THEN the parse error quotes it", () => {
    const error = thrown(() => translateAddress("10.100.0.256", c("10.100.0.0/16"), c("10.64.0.0/16")));
    expect(error.message).toContain('"10.100.0.256"');
  });

  test("GIVEN cidrAt WHEN given a network number THEN it builds the block, and refuses host bits", () => {
    expect(cidrAt(parseIpv4("10.64.0.0"), 10).toString()).toBe("10.64.0.0/10");
    expect(formatIpv4(cidrAt(0, 0).network)).toBe("0.0.0.0");
    expect(() => cidrAt(parseIpv4("10.64.0.1"), 16)).toThrow(/host bits/);
  });
});
