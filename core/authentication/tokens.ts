/**
 * Peering tokens: the pre-shared secret a consumer proves it holds to obtain an identity.
 *
 * A token reads `plt_<tokenId>_<secret>`: the id (16 hex characters) says which record to check,
 * the secret (32 random bytes, base64url: 256 bits) is the proof. The provider cluster stores only
 * the SHA-256 of the secret, in a Secret named after the id: reading that Secret (or a leaked
 * backup of etcd) never yields a usable token. A plain hash is enough, unlike for passwords,
 * because 256 random bits cannot be guessed offline.
 */
import * as k8s from "@kubernetes/client-node";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { API_GROUP, MANAGED_BY, MANAGED_BY_LABEL, SYSTEM_NAMESPACE, TOKEN_LABEL } from "../api/names.js";
import { deleteOptional, describeFailure, ensureObject, readOptional, serverOf } from "../kube/client.js";
import { statusOf } from "../kube/errors.js";

const STEP = "authentication";

/** Prefix of every token: lets secret scanners and humans recognise one. */
export const TOKEN_PREFIX = "plt";

const TOKEN_PATTERN = /^plt_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const TOKEN_ID_PATTERN = /^[0-9a-f]{16}$/;
const HASH_PATTERN = /^[0-9a-f]{64}$/;

/** A freshly made token: the text for the consumer, the parts the provider stores. */
export interface ForgedPeeringToken {
  /**
   * The whole token, to hand to the consumer (secret: never log or store it in plain state).
   * @example "plt_3f9a0c1d2e4b5a69_q3Jx…(43 base64url characters)"
   */
  readonly token: string;
  /** Public id of the token: 16 lowercase hex characters; names its Secret. */
  readonly tokenId: string;
  /** Lowercase hex SHA-256 of the token's secret part: the only form the provider keeps. */
  readonly secretHash: string;
}

/** Makes a new token. Pure apart from the random bytes it draws. */
export function forgePeeringToken(): ForgedPeeringToken {
  const tokenId = randomBytes(8).toString("hex");
  const secret = randomBytes(32).toString("base64url");
  return { token: `${TOKEN_PREFIX}_${tokenId}_${secret}`, tokenId, secretHash: hashTokenSecret(secret) };
}

/** Lowercase hex SHA-256 of a token's secret part. */
export function hashTokenSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** The two parts of a well-formed token. */
export interface ParsedPeeringToken {
  /** Public id (16 lowercase hex characters). */
  readonly tokenId: string;
  /** Secret part (43 base64url characters). */
  readonly secret: string;
}

/** Splits a token into id and secret; undefined when it is not a well-formed token. */
export function parsePeeringToken(token: unknown): ParsedPeeringToken | undefined {
  if (typeof token !== "string") return undefined;
  const match = TOKEN_PATTERN.exec(token);
  return match ? { tokenId: match[1]!, secret: match[2]! } : undefined;
}

/** Whether `value` has the shape of a token id. */
export function isTokenId(value: unknown): value is string {
  return typeof value === "string" && TOKEN_ID_PATTERN.test(value);
}

/** Outcome of {@link verifyPeeringToken}. */
export type TokenVerdict =
  | { readonly valid: true }
  /**
   * `invalid`: malformed, unknown or wrong (deliberately one reason: a caller must not learn which);
   * `expired`: right secret, past its expiry (told only to whoever holds the secret).
   */
  | { readonly valid: false; readonly reason: "invalid" | "expired" };

/** Compared against when no record exists, so that an unknown id costs the same as a wrong secret. */
const DECOY_HASH = Buffer.alloc(32);

/**
 * Checks a presented token against the stored hash of its record, in constant time. Pass
 * `storedHashHex` undefined for an unknown token id: the comparison still runs (against a decoy),
 * so a caller cannot tell unknown ids from wrong secrets by timing. The expiry is checked only
 * after the secret matched. Pure.
 */
export function verifyPeeringToken(
  token: string,
  storedHashHex: string | undefined,
  expiresAt: Date | undefined,
  now: Date,
): TokenVerdict {
  const parsed = parsePeeringToken(token);
  const presented = createHash("sha256")
    .update(parsed?.secret ?? String(token), "utf8")
    .digest();
  const known = storedHashHex !== undefined && HASH_PATTERN.test(storedHashHex);
  const stored = known ? Buffer.from(storedHashHex, "hex") : DECOY_HASH;
  const equal = timingSafeEqual(presented, stored);
  if (!parsed || !known || !equal) return { valid: false, reason: "invalid" };
  if (expiresAt !== undefined && !(now.getTime() < expiresAt.getTime())) return { valid: false, reason: "expired" };
  return { valid: true };
}

/** Why a token id is refused, without echoing it: what was passed may be a whole token, by mistake. */
function badTokenId(value: unknown): string {
  const got = typeof value === "string" ? `${value.length} characters` : typeof value;
  return `token id is not 16 lowercase hex characters (got ${got}; pass the id, not the token)`;
}

/** Name of the Secret holding token `tokenId`'s record. */
export function peeringTokenSecretName(tokenId: string): string {
  return `peering-token-${tokenId}`;
}

/** Input of {@link ensurePeeringTokenSecret}. */
export interface PeeringTokenRecordArgs {
  /** Public id of the token (from {@link forgePeeringToken}). */
  readonly tokenId: string;
  /** Lowercase hex SHA-256 of the secret part (from {@link forgePeeringToken}). */
  readonly secretHash: string;
  /** When the token stops being accepted. @default never */
  readonly expiresAt?: Date;
}

/** What {@link ensurePeeringTokenSecret} returns. */
export interface PeeringTokenRecordResult {
  /** Name of the Secret in the system namespace. */
  readonly secretName: string;
}

/**
 * Stores a token's record (its hash and expiry, never the token) in a Secret of the system
 * namespace, labelled so that the auth service and cleanup find it. Idempotent.
 */
export async function ensurePeeringTokenSecret(
  kc: k8s.KubeConfig,
  args: PeeringTokenRecordArgs,
): Promise<PeeringTokenRecordResult> {
  if (!isTokenId(args.tokenId)) throw new Error(`${STEP}: ${badTokenId(args.tokenId)}`);
  // The hash is not secret, but echoing input that may be a token pasted by mistake would be.
  if (!HASH_PATTERN.test(args.secretHash))
    throw new Error(`${STEP}: token ${args.tokenId}: secretHash is not a lowercase hex SHA-256`);
  if (args.expiresAt !== undefined && Number.isNaN(args.expiresAt.getTime()))
    throw new Error(`${STEP}: token ${args.tokenId}: expiresAt is not a valid date`);
  const secretName = peeringTokenSecretName(args.tokenId);
  const b64 = (text: string): string => Buffer.from(text, "utf8").toString("base64");
  const data: Record<string, string> = { secretHash: b64(args.secretHash) };
  if (args.expiresAt) data["expiresAt"] = b64(args.expiresAt.toISOString());
  await ensureObject(kc, {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: {
      name: secretName,
      namespace: SYSTEM_NAMESPACE,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [TOKEN_LABEL]: args.tokenId },
    },
    data,
  } as k8s.V1Secret).catch(describeFailure(`${STEP}: applying Secret ${SYSTEM_NAMESPACE}/${secretName}`, serverOf(kc)));
  return { secretName };
}

/** The one consumer a token belongs to, from its first use on. */
export interface TokenBinding {
  /** The consumer's cluster id. */
  readonly clusterId: string;
  /** {@link ./consumer-key.ts publicKeyFingerprint} of the consumer's identity key. */
  readonly keySha256: string;
}

/** Annotations of a token's Secret recording its binding (not secret: an id and a key's hash). */
const BOUND_CLUSTER_ANNOTATION = `${API_GROUP}/bound-consumer-cluster-id`;
const BOUND_KEY_ANNOTATION = `${API_GROUP}/bound-consumer-key-sha256`;

/** A token's stored record. */
export interface PeeringTokenRecord {
  /** Lowercase hex SHA-256 of the secret part. */
  readonly secretHash: string;
  /** When the token stops being accepted; undefined: never. */
  readonly expiresAt?: Date;
  /** The consumer the token is bound to; undefined until its first use. */
  readonly boundTo?: TokenBinding;
  /** Version of the record read, so that binding it is a compare-and-set. */
  readonly resourceVersion: string;
}

/**
 * Why `presented` may not use a token bound to `boundTo`, or undefined when it may (an unbound
 * token binds to whoever uses it first). Both the cluster id and the key must match: the id alone
 * is public, and the key is what the CSR proves the consumer holds. Pure.
 */
export function tokenBindingRefusal(boundTo: TokenBinding | undefined, presented: TokenBinding): string | undefined {
  if (!boundTo) return undefined;
  if (boundTo.clusterId === presented.clusterId && boundTo.keySha256 === presented.keySha256) return undefined;
  return (
    "peering token refused: it is bound to the consumer that used it first, and this request is not from that consumer " +
    "(same cluster id and identity key); each consumer needs a token of its own"
  );
}

/** Reads token `tokenId`'s record; undefined when there is none (never issued, or revoked). */
export async function getPeeringTokenRecord(
  kc: k8s.KubeConfig,
  tokenId: string,
): Promise<PeeringTokenRecord | undefined> {
  if (!isTokenId(tokenId)) return undefined;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const secretName = peeringTokenSecretName(tokenId);
  const secret = await readOptional(() =>
    core.readNamespacedSecret({ name: secretName, namespace: SYSTEM_NAMESPACE }),
  ).catch(describeFailure(`${STEP}: reading Secret ${SYSTEM_NAMESPACE}/${secretName}`, serverOf(kc)));
  // Only Secrets this project labelled count: an unrelated Secret of the same name is no token.
  if (!secret || secret.metadata?.labels?.[TOKEN_LABEL] !== tokenId) return undefined;
  const field = (key: string): string | undefined => {
    const value = secret.data?.[key];
    return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8");
  };
  const secretHash = field("secretHash");
  if (!secretHash) return undefined;
  const expiry = field("expiresAt");
  // An unreadable expiry fails closed: the token counts as already expired.
  const expiresAt =
    expiry === undefined ? undefined : Number.isNaN(Date.parse(expiry)) ? new Date(0) : new Date(expiry);
  const annotations = secret.metadata?.annotations ?? {};
  const [boundCluster, boundKey] = [annotations[BOUND_CLUSTER_ANNOTATION], annotations[BOUND_KEY_ANNOTATION]];
  // Half a binding fails closed too: it binds to a consumer nobody can be.
  const boundTo = boundCluster || boundKey ? { clusterId: boundCluster ?? "", keySha256: boundKey ?? "" } : undefined;
  return {
    secretHash,
    ...(expiresAt ? { expiresAt } : {}),
    ...(boundTo ? { boundTo } : {}),
    resourceVersion: secret.metadata?.resourceVersion ?? "",
  };
}

/**
 * Binds token `tokenId` to `binding`, only if its record is still at `resourceVersion`: of two
 * consumers using a fresh token at once, one binds and the other sees the binding when it reads
 * again. Resolves false when the record changed meanwhile (the caller reads and decides again).
 */
export async function bindPeeringToken(
  kc: k8s.KubeConfig,
  tokenId: string,
  binding: TokenBinding,
  resourceVersion: string,
): Promise<boolean> {
  const secretName = peeringTokenSecretName(tokenId);
  const body = {
    metadata: {
      resourceVersion,
      annotations: { [BOUND_CLUSTER_ANNOTATION]: binding.clusterId, [BOUND_KEY_ANNOTATION]: binding.keySha256 },
    },
  };
  try {
    await kc
      .makeApiClient(k8s.CoreV1Api)
      .patchNamespacedSecret(
        { name: secretName, namespace: SYSTEM_NAMESPACE, body, fieldManager: "pulumi-liqo-auth-service" },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
    return true;
  } catch (error) {
    if (statusOf(error) === 409) return false;
    return describeFailure(
      `${STEP}: binding the token in Secret ${SYSTEM_NAMESPACE}/${secretName}`,
      serverOf(kc),
    )(error);
  }
}

/** Deletes token `tokenId`'s record, so the token is refused from now on. Resolves whether it existed. */
export async function revokePeeringToken(kc: k8s.KubeConfig, tokenId: string): Promise<boolean> {
  if (!isTokenId(tokenId)) throw new Error(`${STEP}: ${badTokenId(tokenId)}`);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const secretName = peeringTokenSecretName(tokenId);
  return deleteOptional(() => core.deleteNamespacedSecret({ name: secretName, namespace: SYSTEM_NAMESPACE })).catch(
    describeFailure(`${STEP}: deleting Secret ${SYSTEM_NAMESPACE}/${secretName}`, serverOf(kc)),
  );
}

/**
 * What a forced delete of token `tokenId` leaves on a cluster out of reach: its record, with which
 * the token would still be accepted for new peerings were the cluster to come back. Pure.
 */
export function tokenLeftOnCluster(tokenId: string): string[] {
  return [
    `Secret ${SYSTEM_NAMESPACE}/${peeringTokenSecretName(tokenId)}, the token's record (the token is accepted for new peerings while it stays)`,
  ];
}

/** How what {@link tokenLeftOnCluster} lists goes, once the cluster is back. */
export const TOKEN_LEFT_REMEDY =
  "If the cluster comes back, delete that Secret there to revoke the token (uninstalling the cluster removes it too)";

/**
 * The ids of every token recorded on the provider (one list call). The auth service uses it to
 * tell a caller naming a real token from a stranger's guess without a read per guess.
 */
export async function listPeeringTokenIds(kc: k8s.KubeConfig): Promise<string[]> {
  const secrets = await kc
    .makeApiClient(k8s.CoreV1Api)
    .listNamespacedSecret({ namespace: SYSTEM_NAMESPACE, labelSelector: TOKEN_LABEL })
    .catch(describeFailure(`${STEP}: listing token Secrets in ${SYSTEM_NAMESPACE}`, serverOf(kc)));
  return secrets.items.map((secret) => secret.metadata?.labels?.[TOKEN_LABEL]).filter(isTokenId);
}
