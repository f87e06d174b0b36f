/**
 * The consumer cluster's identity key: one RSA key per cluster, made once and kept in a Secret of
 * its system namespace. Every identity request the cluster makes, to any provider, is a CSR signed
 * with it, so a provider can bind a token (and a tenant) to the key that first used it and know the
 * same consumer when it comes back: after a repair, a revocation or a replaced Peering. The key
 * never leaves the consumer cluster and never enters Pulumi state.
 */
import * as k8s from "@kubernetes/client-node";
import { createHash, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { MANAGED_BY, MANAGED_BY_LABEL, SYSTEM_NAMESPACE } from "../api/names.js";
import { describeFailure, readOptional, serverOf } from "../kube/client.js";
import { statusOf } from "../kube/errors.js";

const STEP = "authentication";

/** Secret in the system namespace holding the cluster's identity key (`key.pem`). */
export const CONSUMER_KEY_SECRET = "consumer-identity-key";

/** Lowercase hex SHA-256 of a public key's DER SubjectPublicKeyInfo: how a provider names a consumer's key. */
export function publicKeyFingerprint(key: string | KeyObject | Buffer): string {
  const object = typeof key === "string" || Buffer.isBuffer(key) ? createPublicKey(key) : key;
  return createHash("sha256")
    .update(object.export({ type: "spki", format: "der" }))
    .digest("hex");
}

/** A new RSA-2048 private key, PEM PKCS#1 (secret). */
export function forgeRsaKeyPem(): string {
  // Node's native generator: node-forge's pure-JS RSA takes seconds.
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return privateKey.export({ type: "pkcs1", format: "pem" }).toString();
}

/** The key from its Secret; undefined when there is none yet. */
async function readConsumerKey(kc: k8s.KubeConfig): Promise<string | undefined> {
  const secret = await readOptional(() =>
    kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ name: CONSUMER_KEY_SECRET, namespace: SYSTEM_NAMESPACE }),
  ).catch(describeFailure(`${STEP}: reading Secret ${SYSTEM_NAMESPACE}/${CONSUMER_KEY_SECRET}`, serverOf(kc)));
  const pem = Buffer.from(secret?.data?.["key.pem"] ?? "", "base64").toString("utf8");
  return pem || undefined;
}

/**
 * The cluster's identity key (PEM PKCS#1, secret), made and stored on first use. Concurrent first
 * uses (two peerings created at once) agree: `create` lets one writer win, the other reads its key.
 */
export async function ensureConsumerKey(kc: k8s.KubeConfig): Promise<string> {
  const stored = await readConsumerKey(kc);
  if (stored) return stored;
  const keyPem = forgeRsaKeyPem();
  try {
    await kc.makeApiClient(k8s.CoreV1Api).createNamespacedSecret({
      namespace: SYSTEM_NAMESPACE,
      body: {
        apiVersion: "v1",
        kind: "Secret",
        type: "Opaque",
        metadata: {
          name: CONSUMER_KEY_SECRET,
          namespace: SYSTEM_NAMESPACE,
          labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
        },
        data: { "key.pem": Buffer.from(keyPem, "utf8").toString("base64") },
      },
    });
    return keyPem;
  } catch (error) {
    if (statusOf(error) !== 409)
      describeFailure(`${STEP}: creating Secret ${SYSTEM_NAMESPACE}/${CONSUMER_KEY_SECRET}`, serverOf(kc))(error);
    const theirs = await readConsumerKey(kc);
    if (!theirs)
      throw new Error(
        `${STEP}: Secret ${SYSTEM_NAMESPACE}/${CONSUMER_KEY_SECRET} at ${serverOf(kc)} exists but holds no key.pem`,
        { cause: error },
      );
    return theirs;
  }
}
