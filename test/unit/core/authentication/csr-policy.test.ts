/** What a consumer may be certified as: exactly its own user name, no group, nothing else. */
import forge from "node-forge";
import { generateKeyPairSync } from "node:crypto";
import { consumerUserName } from "../../../../core/api/names.js";
import { checkIdentityCsr } from "../../../../core/authentication/csr-policy.js";
import { forgeIdentityRequest } from "../../../../core/authentication/identity.js";
import { nativeSigner } from "../../../../core/pki/x509.js";

const ID = "0123456789abcdef";

function rsaKeyPem(bits = 2048): string {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: bits });
  return privateKey.export({ type: "pkcs1", format: "pem" }).toString();
}

function csrPem(
  subject: forge.pki.CertificateField[],
  options: { bits?: number; attributes?: unknown[] } = {},
): string {
  const keyPem = rsaKeyPem(options.bits);
  const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  const csr = forge.pki.createCertificationRequest();
  csr.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  csr.setSubject(subject);
  if (options.attributes) csr.setAttributes(options.attributes as never);
  csr.sign(nativeSigner(keyPem), forge.md.sha256.create());
  return forge.pki.certificationRequestToPem(csr);
}

describe("checkIdentityCsr", () => {
  test("GIVEN the request forgeIdentityRequest makes THEN it is accepted", () => {
    const { csrPem: pem } = forgeIdentityRequest(ID);
    expect(checkIdentityCsr(pem, ID).ok).toBe(true);
  });

  test("GIVEN another consumer's name THEN it is forbidden, naming the expected subject", () => {
    const verdict = checkIdentityCsr(forgeIdentityRequest("fedcba9876543210").csrPem, ID);
    expect(verdict).toMatchObject({ ok: false, kind: "forbidden" });
    expect(!verdict.ok && verdict.reason).toContain(`CN=${consumerUserName(ID)}`);
  });

  test("GIVEN the right CN with O=system:masters THEN it is forbidden", () => {
    const pem = csrPem([
      { name: "organizationName", value: "system:masters" },
      { name: "commonName", value: consumerUserName(ID) },
    ]);
    const verdict = checkIdentityCsr(pem, ID);
    expect(verdict).toMatchObject({ ok: false, kind: "forbidden" });
    expect(!verdict.ok && verdict.reason).toContain("O=system:masters");
  });

  test("GIVEN a system: user name THEN it is forbidden", () => {
    expect(checkIdentityCsr(csrPem([{ name: "commonName", value: "system:admin" }]), ID)).toMatchObject({
      ok: false,
      kind: "forbidden",
    });
  });

  test("GIVEN requested extensions THEN it is forbidden", () => {
    const pem = csrPem([{ name: "commonName", value: consumerUserName(ID) }], {
      attributes: [
        {
          name: "extensionRequest",
          extensions: [{ name: "subjectAltName", altNames: [{ type: 2, value: "kubernetes" }] }],
        },
      ],
    });
    expect(checkIdentityCsr(pem, ID)).toMatchObject({ ok: false, kind: "forbidden" });
  });

  test("GIVEN a 1024-bit key THEN it is forbidden", () => {
    expect(
      checkIdentityCsr(csrPem([{ name: "commonName", value: consumerUserName(ID) }], { bits: 1024 }), ID),
    ).toMatchObject({ ok: false, kind: "forbidden" });
  });

  test("GIVEN garbage or a tampered request THEN it is malformed", () => {
    expect(checkIdentityCsr("not a csr", ID)).toMatchObject({ ok: false, kind: "malformed" });
    const { csrPem: pem } = forgeIdentityRequest(ID);
    // Flip the last byte of the DER: it belongs to the signature, which then no longer verifies.
    const der = Buffer.from(pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, ""), "base64");
    der[der.length - 1] = der[der.length - 1]! ^ 0xff;
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64").replace(/.{64}/g, "$&\n")}\n-----END CERTIFICATE REQUEST-----\n`;
    expect(checkIdentityCsr(tampered, ID)).toMatchObject({ ok: false, kind: "malformed" });
  });
});
