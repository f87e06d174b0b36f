/** Peering tokens: their shape, the stored hash that never reveals them, and the constant-time check. */
import { createHash } from "node:crypto";
import {
  forgePeeringToken,
  hashTokenSecret,
  parsePeeringToken,
  peeringTokenSecretName,
  tokenBindingRefusal,
  verifyPeeringToken,
} from "../../../../core/authentication/tokens.js";

const NOW = new Date("2026-06-01T12:00:00Z");
const LATER = new Date("2026-06-02T12:00:00Z");
const EARLIER = new Date("2026-05-31T12:00:00Z");

describe("forgePeeringToken", () => {
  test("GIVEN a new token THEN it reads plt_<16 hex id>_<43 base64url chars> and carries at least 256 bits of secret", () => {
    const { token, tokenId } = forgePeeringToken();
    expect(token).toMatch(/^plt_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(token.startsWith(`plt_${tokenId}_`)).toBe(true);
    const secret = token.split("_").slice(2).join("_");
    expect(Buffer.from(secret, "base64url").length * 8).toBeGreaterThanOrEqual(256);
  });

  test("GIVEN a new token THEN its stored form is the sha256 of the secret part only, and contains neither the token nor the secret", () => {
    const { token, secretHash } = forgePeeringToken();
    const secret = parsePeeringToken(token)!.secret;
    expect(secretHash).toBe(createHash("sha256").update(secret).digest("hex"));
    expect(secretHash).toBe(hashTokenSecret(secret));
    expect(secretHash).not.toContain(secret);
    expect(token).not.toContain(secretHash);
  });

  test("GIVEN many tokens THEN ids and secrets never repeat", () => {
    const tokens = Array.from({ length: 200 }, () => forgePeeringToken());
    expect(new Set(tokens.map((t) => t.tokenId)).size).toBe(200);
    expect(new Set(tokens.map((t) => t.token)).size).toBe(200);
  });

  test("GIVEN a token id THEN its Secret is named after the id, never the secret", () => {
    const { token, tokenId } = forgePeeringToken();
    expect(peeringTokenSecretName(tokenId)).toBe(`peering-token-${tokenId}`);
    expect(peeringTokenSecretName(tokenId)).not.toContain(parsePeeringToken(token)!.secret);
  });
});

describe("parsePeeringToken", () => {
  test("GIVEN a well-formed token THEN it splits into id and secret", () => {
    const { token, tokenId } = forgePeeringToken();
    expect(parsePeeringToken(token)?.tokenId).toBe(tokenId);
  });

  test.each([
    ["empty", ""],
    ["wrong prefix", "xyz_0123456789abcdef_" + "a".repeat(43)],
    ["uppercase id", "plt_0123456789ABCDEF_" + "a".repeat(43)],
    ["short secret", "plt_0123456789abcdef_" + "a".repeat(42)],
    ["padding", "plt_0123456789abcdef_" + "a".repeat(42) + "="],
    ["trailing space", "plt_0123456789abcdef_" + "a".repeat(43) + " "],
    ["not a string", 42],
  ])("GIVEN a token that is %s THEN it is not parsed", (_label, value) => {
    expect(parsePeeringToken(value)).toBeUndefined();
  });
});

describe("verifyPeeringToken", () => {
  test("GIVEN the right token and no expiry THEN it is valid", () => {
    const { token, secretHash } = forgePeeringToken();
    expect(verifyPeeringToken(token, secretHash, undefined, NOW)).toEqual({ valid: true });
  });

  test("GIVEN the right token before its expiry THEN it is valid", () => {
    const { token, secretHash } = forgePeeringToken();
    expect(verifyPeeringToken(token, secretHash, LATER, NOW)).toEqual({ valid: true });
  });

  test("GIVEN the right token at or after its expiry THEN it is refused as expired", () => {
    const { token, secretHash } = forgePeeringToken();
    expect(verifyPeeringToken(token, secretHash, EARLIER, NOW)).toEqual({ valid: false, reason: "expired" });
    expect(verifyPeeringToken(token, secretHash, NOW, NOW)).toEqual({ valid: false, reason: "expired" });
  });

  test("GIVEN another token's secret under the same id THEN it is invalid", () => {
    const right = forgePeeringToken();
    const other = forgePeeringToken();
    const forged = `plt_${right.tokenId}_${parsePeeringToken(other.token)!.secret}`;
    expect(verifyPeeringToken(forged, right.secretHash, undefined, NOW)).toEqual({ valid: false, reason: "invalid" });
  });

  test("GIVEN an unknown id (no stored hash) THEN it is invalid, exactly like a wrong secret", () => {
    const { token } = forgePeeringToken();
    expect(verifyPeeringToken(token, undefined, undefined, NOW)).toEqual({ valid: false, reason: "invalid" });
  });

  test("GIVEN a wrong secret of an expired token THEN the answer is invalid, not expired (expiry is told only to the holder)", () => {
    const right = forgePeeringToken();
    const wrong = `plt_${right.tokenId}_${"A".repeat(43)}`;
    expect(verifyPeeringToken(wrong, right.secretHash, EARLIER, NOW)).toEqual({ valid: false, reason: "invalid" });
  });

  test("GIVEN a malformed token or a malformed stored hash THEN it is invalid, without throwing", () => {
    const { token, secretHash } = forgePeeringToken();
    expect(verifyPeeringToken("not a token", secretHash, undefined, NOW)).toEqual({ valid: false, reason: "invalid" });
    expect(verifyPeeringToken(token, "zz", undefined, NOW)).toEqual({ valid: false, reason: "invalid" });
    expect(verifyPeeringToken(token, secretHash.toUpperCase(), undefined, NOW)).toEqual({
      valid: false,
      reason: "invalid",
    });
  });

  test("GIVEN the stored hash presented as the secret THEN it is invalid (the record is not a credential)", () => {
    const { tokenId, secretHash } = forgePeeringToken();
    expect(verifyPeeringToken(`plt_${tokenId}_${secretHash}`, secretHash, undefined, NOW)).toEqual({
      valid: false,
      reason: "invalid",
    });
  });
});

describe("tokenBindingRefusal", () => {
  const b = { clusterId: "00000000000000bb", keySha256: "b".repeat(64) };

  test("GIVEN an unbound token THEN any consumer may use it (and binds it)", () => {
    expect(tokenBindingRefusal(undefined, b)).toBeUndefined();
  });

  test("GIVEN a token bound to b THEN only b's id with b's key may use it", () => {
    expect(tokenBindingRefusal(b, { ...b })).toBeUndefined();
    for (const other of [
      { clusterId: b.clusterId, keySha256: "c".repeat(64) }, // b's id, another key: impersonation
      { clusterId: "00000000000000cc", keySha256: b.keySha256 }, // b's key under another id
      { clusterId: "00000000000000cc", keySha256: "c".repeat(64) }, // another consumer
    ]) {
      expect(tokenBindingRefusal(b, other)).toMatch(
        /^peering token refused: it is bound to the consumer that used it first/,
      );
    }
  });

  test("GIVEN half a binding (one annotation lost) THEN nobody matches it", () => {
    expect(tokenBindingRefusal({ clusterId: b.clusterId, keySha256: "" }, b)).toBeDefined();
    expect(tokenBindingRefusal({ clusterId: "", keySha256: b.keySha256 }, b)).toBeDefined();
  });
});
