/**
 * WireGuard key pairs, forged with Node's own crypto: a WireGuard key is a raw 32-byte Curve25519
 * (X25519) key in standard base64, so no `wg genkey` process is needed and the private key never
 * leaves this process unless the caller writes it somewhere.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";

/** A WireGuard key pair, each key 32 raw bytes in standard base64 (44 characters), as `wg` prints them. */
export interface WireguardKeyPair {
  /** The private key: give it only to this gateway's `wg set … private-key`. */
  readonly privateKey: string;
  /** The public key: what the peer configures for this gateway. */
  readonly publicKey: string;
}

/** Thrown for text that is not a WireGuard key; the message says which key and why, never the key itself. */
export class WireguardKeyError extends Error {
  /** Brand for checks across copies of this module (no `instanceof`). */
  readonly isWireguardKeyError = true;
  constructor(
    readonly what: string,
    reason: string,
  ) {
    super(`${what} is not a WireGuard key: ${reason}`);
    this.name = "WireguardKeyError";
  }
}

/** 32 bytes in standard base64: 43 characters, the last of which carries only 4 bits, then one `=`. */
const KEY_PATTERN = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/** PKCS#8 DER prefix of an X25519 private key; the 32 raw bytes follow it. */
const X25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b656e04220420", "hex");

/** Decodes a base64 WireGuard key into its 32 bytes, or throws {@link WireguardKeyError} naming `what`. */
export function decodeWireguardKey(text: string, what = "key"): Buffer {
  if (!KEY_PATTERN.test(text)) {
    throw new WireguardKeyError(
      what,
      `expected 44 characters of standard base64 encoding 32 bytes (got ${text.length} characters)`,
    );
  }
  return Buffer.from(text, "base64");
}

/** Whether `text` is a well-formed WireGuard key (32 bytes in standard base64). */
export function isWireguardKey(text: string): boolean {
  return KEY_PATTERN.test(text);
}

/** The public key of WireGuard private key `privateKey`: what `wg pubkey` prints for it. */
export function wireguardPublicKeyOf(privateKey: string): string {
  const raw = decodeWireguardKey(privateKey, "private key");
  const key = createPrivateKey({ key: Buffer.concat([X25519_PKCS8_PREFIX, raw]), format: "der", type: "pkcs8" });
  return Buffer.from(createPublicKey(key).export({ format: "jwk" }).x!, "base64url").toString("base64");
}

/**
 * Forges a fresh WireGuard key pair with X25519. The private key is clamped as `wg genkey`
 * clamps it (X25519 clamps on use anyway, so the public key is the same either way; clamping
 * only makes the stored key byte-identical to what WireGuard's own tools would make).
 */
export function forgeWireguardKeyPair(): WireguardKeyPair {
  const { privateKey } = generateKeyPairSync("x25519");
  const raw = Buffer.from(privateKey.export({ format: "jwk" }).d!, "base64url");
  raw[0] = raw[0]! & 248;
  raw[31] = (raw[31]! & 127) | 64;
  const privateText = raw.toString("base64");
  return { privateKey: privateText, publicKey: wireguardPublicKeyOf(privateText) };
}
