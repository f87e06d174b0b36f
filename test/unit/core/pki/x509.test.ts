/** Certificates and CSRs signed with Node's native RSA verify as forge-signed ones do. */
import forge from "node-forge";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { forgeRsaKeyPem } from "../../../../core/authentication/consumer-key.js";
import { forgeIdentityRequest } from "../../../../core/authentication/identity.js";
import {
  forgeCertificateAuthority,
  forgeClientCertificate,
  forgeServingCertificate,
  nativeSigner,
} from "../../../../core/pki/x509.js";

describe("x509 signed natively", () => {
  const ca = forgeCertificateAuthority("test ca");

  test("GIVEN a CA THEN it is self-signed, a CA, and its key is the one its certificate holds", () => {
    const cert = new X509Certificate(ca.cert);
    expect(cert.ca).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(ca.key))).toBe(true);
  });

  test("GIVEN serving and client certificates THEN the CA's key verifies them, another CA's does not", () => {
    const other = new X509Certificate(forgeCertificateAuthority("other ca").cert);
    const caCert = new X509Certificate(ca.cert);
    const serving = new X509Certificate(forgeServingCertificate(ca, "svc", ["svc.local"], ["10.0.0.1"]).cert);
    const client = new X509Certificate(
      forgeClientCertificate(ca, { commonName: "alice", organizations: ["team"] }).cert,
    );
    for (const cert of [serving, client]) {
      expect(cert.checkIssued(caCert)).toBe(true);
      expect(cert.verify(caCert.publicKey)).toBe(true);
      expect(cert.verify(other.publicKey)).toBe(false);
    }
    expect(serving.subjectAltName).toBe("DNS:svc.local, IP Address:10.0.0.1");
    expect(client.subject).toBe("O=team\nCN=alice");
    // forge, which the CSR policy and older readers use, agrees.
    expect(
      forge.pki
        .certificateFromPem(ca.cert)
        .verify(forge.pki.certificateFromPem(forgeClientCertificate(ca, { commonName: "bob" }).cert)),
    ).toBe(true);
  });

  test("GIVEN an identity request THEN its CSR's signature verifies", () => {
    const csr = forge.pki.certificationRequestFromPem(forgeIdentityRequest("0123456789abcdef").csrPem);
    expect(csr.verify()).toBe(true);
  });

  test("GIVEN a digest other than sha256 THEN signing refuses it", () => {
    const md = forge.md.sha1.create();
    md.update("x");
    expect(() => nativeSigner(forgeRsaKeyPem()).sign(md)).toThrow("x509: signing supports sha256, not sha1");
  });
});
