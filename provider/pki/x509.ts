/**
 * x509 forging, with no I/O: a self-signed CA, TLS serving certificates and client certificates
 * signed by it, and a service-account key pair. The product uses it for the auth service's TLS
 * (`Cluster` install, cluster/install.ts); the local clusters for their whole PKI: one CA that
 * serves as the API server's client CA and as kube-controller-manager's signing CA (so CSRs it
 * signs authenticate), the API server's serving certificate, and the admin's and the control
 * plane's client certificates.
 */
import forge from "node-forge";
import { generateKeyPairSync, randomBytes } from "node:crypto";

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

/** Generates an RSA key with Node's native crypto (node-forge's pure-JS generator is far slower). */
function generateRsaKey(): forge.pki.rsa.KeyPair {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  const key = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  return { privateKey: key, publicKey: forge.pki.setRsaPublicKey(key.n, key.e) };
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

function toPair(cert: forge.pki.Certificate, key: forge.pki.rsa.PrivateKey): KeyPair {
  return { cert: forge.pki.certificateToPem(cert), key: forge.pki.privateKeyToPem(key) };
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
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return toPair(cert, keys.privateKey);
}

function signWith(ca: KeyPair, cert: forge.pki.Certificate): void {
  const caCert = forge.pki.certificateFromPem(ca.cert);
  cert.setIssuer(caCert.subject.attributes);
  cert.sign(forge.pki.privateKeyFromPem(ca.key), forge.md.sha256.create());
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
  return toPair(cert, keys.privateKey);
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
  return toPair(cert, keys.privateKey);
}

/** Creates the key pair that signs and verifies service-account tokens. */
export function forgeServiceAccountKeys(): { readonly publicKey: string; readonly privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    publicKey: publicKey.export({ type: "spki", format: "pem" }).toString(),
    privateKey: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
  };
}
