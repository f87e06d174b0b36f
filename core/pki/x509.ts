/**
 * x509 forging, with no I/O: a self-signed CA, TLS serving certificates and client certificates
 * signed by it, and a service-account key pair. The product uses it for the auth service's TLS
 * (`Cluster` install, cluster/install.ts); the local clusters for their whole PKI: one CA that
 * serves as the API server's client CA and as kube-controller-manager's signing CA (so CSRs it
 * signs authenticate), the API server's serving certificate, and the admin's and the control
 * plane's client certificates.
 */
import forge from "node-forge";
import { constants, createPublicKey, generateKeyPairSync, privateEncrypt, randomBytes } from "node:crypto";

/** A PEM certificate and its PEM private key. */
export interface KeyPair {
  /** PEM-encoded certificate. */
  readonly cert: string;
  /** PEM-encoded PKCS#1 private key. */
  readonly key: string;
}

/** What a client certificate says about its holder. */
export interface ClientIdentity {
  /** Becomes the Kubernetes user name. */
  readonly commonName: string;
  /** Become the Kubernetes groups. */
  readonly organizations?: readonly string[];
}

const ONE_YEAR_MS = 365 * 24 * 3600 * 1000;

/** A fresh RSA key: the PEM private key (PKCS#1) and its public key as forge takes it. */
interface RsaKey {
  readonly privateKeyPem: string;
  readonly publicKey: forge.pki.PublicKey;
}

/** Generates an RSA key with Node's native crypto (node-forge's pure-JS generator is far slower). */
function generateRsaKey(): RsaKey {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const publicKeyPem = createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString();
  return {
    privateKeyPem: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
    publicKey: forge.pki.publicKeyFromPem(publicKeyPem),
  };
}

/** The DER of a SHA-256 DigestInfo up to the hash (RFC 8017 §9.2): what a PKCS #1 v1.5 signature wraps. */
const SHA256_DIGEST_INFO_PREFIX = Buffer.from("3031300d060960864801650304020105000420", "hex");

/**
 * A key that forge's `sign(key, md)` of certificates and CSRs takes, which signs with Node's
 * native RSA: forge's pure-JS RSA costs about a second of CPU per signature, and blocks the event
 * loop meanwhile (a lab's start signs a dozen certificates, an agent's start two).
 */
export function nativeSigner(privateKeyPem: string): forge.pki.rsa.PrivateKey {
  const signer = {
    sign(md: forge.md.MessageDigest): string {
      if (md.algorithm !== "sha256") throw new Error(`x509: signing supports sha256, not ${md.algorithm}`);
      const digestInfo = Buffer.concat([SHA256_DIGEST_INFO_PREFIX, Buffer.from(md.digest().getBytes(), "binary")]);
      // RSA's private operation on EMSA-PKCS1-v1_5 padding is the PKCS #1 v1.5 signature.
      return privateEncrypt({ key: privateKeyPem, padding: constants.RSA_PKCS1_PADDING }, digestInfo).toString(
        "binary",
      );
    },
  };
  return signer as unknown as forge.pki.rsa.PrivateKey;
}

function newCertificate(publicKey: forge.pki.PublicKey, subject: forge.pki.CertificateField[]): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // A positive 16-byte serial: the high bit cleared so that DER does not read it as negative.
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  cert.serialNumber = serial.toString("hex");
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + ONE_YEAR_MS);
  cert.setSubject(subject);
  return cert;
}

function toPair(cert: forge.pki.Certificate, key: RsaKey): KeyPair {
  return { cert: forge.pki.certificateToPem(cert), key: key.privateKeyPem };
}

/** Creates a self-signed CA able to sign serving and client certificates. */
export function forgeCertificateAuthority(commonName: string): KeyPair {
  const keys = generateRsaKey();
  const cert = newCertificate(keys.publicKey, [{ name: "commonName", value: commonName }]);
  cert.setIssuer(cert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(nativeSigner(keys.privateKeyPem), forge.md.sha256.create());
  return toPair(cert, keys);
}

function signWith(ca: KeyPair, cert: forge.pki.Certificate): void {
  const caCert = forge.pki.certificateFromPem(ca.cert);
  cert.setIssuer(caCert.subject.attributes);
  cert.sign(nativeSigner(ca.key), forge.md.sha256.create());
}

/** Creates a TLS serving certificate for the given DNS names and IP addresses. */
export function forgeServingCertificate(
  ca: KeyPair,
  commonName: string,
  dnsNames: readonly string[],
  ips: readonly string[],
): KeyPair {
  const keys = generateRsaKey();
  const cert = newCertificate(keys.publicKey, [{ name: "commonName", value: commonName }]);
  cert.setExtensions([
    { name: "basicConstraints", cA: false },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    {
      name: "subjectAltName",
      altNames: [...dnsNames.map((value) => ({ type: 2, value })), ...ips.map((ip) => ({ type: 7, ip }))],
    },
  ]);
  signWith(ca, cert);
  return toPair(cert, keys);
}

/** Creates a client certificate whose subject Kubernetes reads as user and groups. */
export function forgeClientCertificate(ca: KeyPair, identity: ClientIdentity): KeyPair {
  const keys = generateRsaKey();
  const subject: forge.pki.CertificateField[] = [
    ...(identity.organizations ?? []).map((value) => ({ name: "organizationName", value })),
    { name: "commonName", value: identity.commonName },
  ];
  const cert = newCertificate(keys.publicKey, subject);
  cert.setExtensions([
    { name: "basicConstraints", cA: false },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", clientAuth: true },
  ]);
  signWith(ca, cert);
  return toPair(cert, keys);
}

/** Creates the key pair that signs and verifies service-account tokens. */
export function forgeServiceAccountKeys(): { readonly publicKey: string; readonly privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    publicKey: publicKey.export({ type: "spki", format: "pem" }).toString(),
    privateKey: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
  };
}
