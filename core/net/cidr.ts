/**
 * IPv4 CIDR blocks as values: parsing that echoes the bad input, containment, overlap and address
 * arithmetic. Pure: no I/O, so the network-fabric decisions built on it are unit-tested alone.
 */

/** Thrown for text that is not an IPv4 address or CIDR; the message quotes the text. */
export class CidrParseError extends Error {
  /** Brand for checks across copies of this module (no `instanceof`). */
  readonly isCidrParseError = true;
  constructor(
    readonly input: string,
    reason: string,
  ) {
    super(`"${input}" is not a valid IPv4 CIDR: ${reason}`);
    this.name = "CidrParseError";
  }
}

/** Parses a dotted-quad IPv4 address into an unsigned 32-bit number. */
export function parseIpv4(text: string): number {
  const parts = text.split(".");
  // Leading zeros are refused: some tools read them as octal, so their meaning is ambiguous.
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255)) {
    throw new CidrParseError(text, "expected an address like 10.0.0.1 (no leading zeros)");
  }
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

/** Formats an unsigned 32-bit number as a dotted-quad IPv4 address. */
export function formatIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join(".");
}

/** An IPv4 network such as `10.244.0.0/16`, always stored with its host bits cleared. */
export class Cidr {
  private constructor(
    /** The network address as an unsigned 32-bit number. */
    readonly network: number,
    /** The prefix length, 0 to 32. */
    readonly prefixLength: number,
  ) {}

  /**
   * Parses `a.b.c.d/n`. Host bits must be zero, so that `10.1.2.3/16` (a likely typo for an
   * address) is refused rather than silently widened.
   */
  static parse(text: string): Cidr {
    const match = /^([^/]+)\/(\d{1,2})$/.exec(text.trim());
    if (!match) throw new CidrParseError(text, "expected the form a.b.c.d/n, e.g. 10.244.0.0/16");
    const prefixLength = Number(match[2]);
    if (prefixLength > 32) throw new CidrParseError(text, "the prefix length must be between 0 and 32");
    let address: number;
    try {
      address = parseIpv4(match[1]!);
    } catch {
      throw new CidrParseError(text, `"${match[1]}" is not an IPv4 address`);
    }
    const cidr = new Cidr(address - (address % 2 ** (32 - prefixLength)), prefixLength);
    if (cidr.network !== address) {
      throw new CidrParseError(text, `host bits are set; did you mean ${cidr.toString()}?`);
    }
    return cidr;
  }

  /**
   * The smallest block that holds every one of `blocks` (all IPv4), e.g. `10.100.1.0/24` and
   * `10.100.2.0/24` give `10.100.0.0/22`.
   */
  static covering(blocks: readonly Cidr[]): Cidr {
    if (blocks.length === 0) throw new RangeError("no block to cover");
    const first = blocks[0]!;
    for (let prefix = Math.min(...blocks.map((b) => b.prefixLength)); prefix >= 0; prefix--) {
      const candidate = new Cidr(first.network - (first.network % 2 ** (32 - prefix)), prefix);
      if (
        blocks.every((b) => b.network >= candidate.network && b.network + b.size <= candidate.network + candidate.size)
      )
        return candidate;
    }
    throw new RangeError("unreachable: 0.0.0.0/0 covers every block");
  }

  /** Number of addresses in the block. */
  get size(): number {
    return 2 ** (32 - this.prefixLength);
  }

  /** The address at `offset` from the network address, e.g. `nth(1)` is the first host. */
  nth(offset: number): string {
    if (!Number.isInteger(offset) || offset < 0 || offset >= this.size) {
      throw new RangeError(`offset ${offset} is outside ${this.toString()} (${this.size} addresses)`);
    }
    return formatIpv4(this.network + offset);
  }

  /** Whether `address` (dotted quad) lies in this block. */
  contains(address: string): boolean {
    const value = parseIpv4(address);
    return value >= this.network && value < this.network + this.size;
  }

  /** Whether every address of `other` lies in this block. */
  holds(other: Cidr): boolean {
    return other.network >= this.network && other.network + other.size <= this.network + this.size;
  }

  /** Whether the two blocks share any address. */
  overlaps(other: Cidr): boolean {
    return this.network < other.network + other.size && other.network < this.network + this.size;
  }

  /** The `a.b.c.d/n` text form. */
  toString(): string {
    return `${formatIpv4(this.network)}/${this.prefixLength}`;
  }
}
