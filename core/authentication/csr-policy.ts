/**
 * What a consumer may ask to be certified as: pure checks, no I/O. The provider signs through its
 * cluster's own client CA, so whatever subject it lets through becomes a Kubernetes user (CN) and
 * groups (O). Only one subject is acceptable: the consumer's own user name, with no group at all.
 */
import forge from "node-forge";
import { consumerUserName } from "../api/names.js";

/** Outcome of {@link checkIdentityCsr}. */
export type CsrVerdict =
  | {
      readonly ok: true;
      /** PEM of the request's public key, to match the issued certificate against. */
      readonly publicKeyPem: string;
    }
  | {
      readonly ok: false;
      /** `malformed`: not a readable, self-consistent request; `forbidden`: readable, but not allowed. */
      readonly kind: "malformed" | "forbidden";
      /** Why, for the consumer; echoes only the subject, which is not secret. */
      readonly reason: string;
    };

/** Smallest RSA modulus accepted. */
const MIN_RSA_BITS = 2048;

/** `CN=a, O=b` from a forge name, for messages. */
function describeSubject(attributes: readonly forge.pki.CertificateField[]): string {
  return attributes.map((a) => `${a.shortName ?? a.name ?? a.type}=${String(a.value)}`).join(", ") || "(empty)";
}

/**
 * Accepts a PEM PKCS#10 request only if it is signed by its own key (RSA, at least 2048 bits), its
 * subject is exactly one attribute `CN=<consumerUserName(consumerClusterId)>` (no O, so no groups,
 * hence never `system:masters`), and it carries no requested attributes or extensions.
 */
export function checkIdentityCsr(csrPem: string, consumerClusterId: string): CsrVerdict {
  let csr: forge.pki.CertificateSigningRequest;
  try {
    csr = forge.pki.certificationRequestFromPem(csrPem);
  } catch (error) {
    return {
      ok: false,
      kind: "malformed",
      reason: `CSR is not a readable PEM certificate request with an RSA key (${(error as Error).message})`,
    };
  }
  try {
    if (!csr.verify())
      return { ok: false, kind: "malformed", reason: "CSR signature does not verify against its own key" };
  } catch (error) {
    return { ok: false, kind: "malformed", reason: `CSR signature cannot be verified (${(error as Error).message})` };
  }
  const key = csr.publicKey as forge.pki.rsa.PublicKey | null;
  if (!key?.n || key.n.bitLength() < MIN_RSA_BITS)
    return { ok: false, kind: "forbidden", reason: `CSR key must be RSA of at least ${MIN_RSA_BITS} bits` };

  const expected = consumerUserName(consumerClusterId);
  const subject = csr.subject.attributes;
  const only = subject.length === 1 ? subject[0]! : undefined;
  if (!only || only.shortName !== "CN" || only.value !== expected) {
    return {
      ok: false,
      kind: "forbidden",
      reason: `CSR subject must be exactly CN=${expected} (no O or other attributes); got ${describeSubject(subject)}`,
    };
  }
  // Extensions (e.g. subject alternative names) and challenge passwords have no use here; refusing
  // them keeps what the cluster signs exactly what this check has read.
  const requested = (csr as unknown as { attributes?: readonly forge.pki.CertificateField[] }).attributes ?? [];
  if (requested.length > 0)
    return {
      ok: false,
      kind: "forbidden",
      reason: `CSR must request no attributes or extensions; got ${requested.map((a) => a.name ?? a.type).join(", ")}`,
    };
  return { ok: true, publicKeyPem: forge.pki.publicKeyToPem(key) };
}
