/**
 * `POST /v1/identity`: the provider's half of authentication. Every check runs before the first
 * write, so a refused request leaves nothing in the cluster:
 *
 * 1. the body is well formed, the consumer's id is a cluster id and not the provider's own;
 * 2. the token matches its stored hash (constant time; unknown ids take the same path) and has not expired;
 * 3. the CSR asks for exactly the consumer's user name, with no group, and is signed by its key;
 * 4. the token is bound to this consumer (its cluster id and key), or binds to it now if this is
 *    its first use; and the consumer's tenant, if it has one, is bound to the same key;
 * then, on the provider cluster:
 * 5. ensure the tenant namespace (recording the key), its object quota, then its Role/RoleBinding;
 * 6. submit the CSR, approve it, wait for the signer's certificate;
 * 7. answer with the certificate and how to reach the API server.
 */
import type * as k8s from "@kubernetes/client-node";
import { tenantNamespace } from "../../core/api/names.js";
import { checkIdentityCsr } from "../../core/authentication/csr-policy.js";
import type { IdentityResponseBody } from "../../core/authentication/protocol.js";
import { ensureTenantNamespace, ensureTenantRbac, getTenantKeyFingerprint } from "../../core/authentication/tenant.js";
import { publicKeyFingerprint } from "../../core/authentication/consumer-key.js";
import {
  bindPeeringToken,
  getPeeringTokenRecord,
  parsePeeringToken,
  tokenBindingRefusal,
  verifyPeeringToken,
  type PeeringTokenRecord,
  type TokenBinding,
} from "../../core/authentication/tokens.js";
import { getClusterIdentity, isClusterId } from "../../core/cluster/install.js";
import type { Reporter } from "../reporter.js";
import { fail, refuse, type Answer } from "./answer.js";
import { signConsumerCsr } from "./sign-certificate.js";
import { keepTenantQuota } from "./tenant-quota.js";

/** What the handler needs from the service. */
export interface IssueContext {
  /** Admin-enough client of the provider cluster. */
  readonly kc: k8s.KubeConfig;
  /** Current time in ms (injectable for tests). */
  readonly now: () => number;
  /** Where progress and refusals go; never given a secret. */
  readonly log: Reporter;
  /** How long to wait for the signer. */
  readonly certificateTimeoutMs: number;
  /** Lifetime of the certificate, in seconds. @default IDENTITY_EXPIRATION_SECONDS */
  readonly lifetimeSeconds?: number;
}

/** Longest cluster name accepted (it is stored as an annotation, not a label). */
const MAX_NAME_LENGTH = 253;
// Printable, no control characters: the name ends up in logs and annotations.
const NAME_PATTERN = /^[\p{L}\p{N}][\p{L}\p{N} ._:-]*$/u;

/** Handles one identity request from `source` (an IP, for logs). */
export async function issueIdentity(ctx: IssueContext, body: unknown, source: string): Promise<Answer> {
  // 1. Shape. Messages name fields, never echo the token.
  const b = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  const missing = ["token", "clusterId", "clusterName", "csr"].filter((k) => typeof b[k] !== "string" || b[k] === "");
  if (missing.length > 0)
    return refuse(
      400,
      `request body must be JSON with string fields token, clusterId, clusterName, csr; missing or empty: ${missing.join(", ")}`,
    );
  const { token, clusterId, clusterName, csr } = b as {
    token: string;
    clusterId: string;
    clusterName: string;
    csr: string;
  };
  const problems: string[] = [];
  if (!isClusterId(clusterId)) problems.push("clusterId must be 16 lowercase hex characters");
  if (clusterName.length > MAX_NAME_LENGTH || !NAME_PATTERN.test(clusterName))
    problems.push(`clusterName must be 1-${MAX_NAME_LENGTH} letters, digits, spaces or . _ : -`);
  if (problems.length > 0) return refuse(400, problems.join("; "));

  // 2. Token. A well-formed token's record is read; any other takes the same comparison against a decoy.
  const parsed = parsePeeringToken(token);
  const record = parsed ? await getPeeringTokenRecord(ctx.kc, parsed.tokenId) : undefined;
  const verdict = verifyPeeringToken(token, record?.secretHash, record?.expiresAt, new Date(ctx.now()));
  if (!verdict.valid) {
    ctx.log.warn(
      `refused identity request of consumer ${clusterId} from ${source}: token ${verdict.reason}${parsed ? ` (token id ${parsed.tokenId})` : ""}`,
    );
    return refuse(
      403,
      verdict.reason === "expired"
        ? "peering token refused: it has expired"
        : "peering token refused: unknown, revoked or wrong token",
    );
  }

  // 3. CSR subject and key: the CSR's signature proves the consumer holds the key it names.
  const csrVerdict = checkIdentityCsr(csr, clusterId);
  if (!csrVerdict.ok) {
    ctx.log.warn(`refused identity request of consumer ${clusterId} from ${source}: ${csrVerdict.reason}`);
    return refuse(csrVerdict.kind === "malformed" ? 400 : 403, `CSR refused: ${csrVerdict.reason}`);
  }

  const provider = await getClusterIdentity(ctx.kc);
  if (!provider)
    return fail(503, "this cluster's identity is not installed (Cluster resource incomplete); try again later");
  if (provider.clusterId === clusterId)
    return refuse(400, "clusterId is this provider's own id: a cluster cannot peer with itself");

  // 4. Binding: the token, and the consumer's tenant, belong to one consumer's id and key.
  const presented = { clusterId, keySha256: publicKeyFingerprint(csrVerdict.publicKeyPem) };
  const refusal = await bindToConsumer(ctx, parsed!.tokenId, record!, presented);
  if (refusal) {
    ctx.log.warn(
      `refused identity request of consumer ${clusterId} from ${source}: ${refusal} (token id ${parsed!.tokenId})`,
    );
    return refuse(403, refusal);
  }

  // 5-6. Provider cluster acts: tenant, its quota before any right to fill it, RBAC, certificate.
  await ensureTenantNamespace(ctx.kc, {
    consumerClusterId: clusterId,
    consumerClusterName: clusterName,
    consumerKeySha256: presented.keySha256,
  });
  const signing = {
    consumerClusterId: clusterId,
    csrPem: csr,
    ...(ctx.lifetimeSeconds ? { expirationSeconds: ctx.lifetimeSeconds } : {}),
    purpose: "issuing the identity",
    source,
  };
  const uncounted = await keepTenantQuota(ctx, signing);
  if (uncounted) return uncounted;
  await ensureTenantRbac(ctx.kc, clusterId);
  const signed = await signConsumerCsr(ctx, signing);
  if (!("certificate" in signed)) return signed;
  const { certificate, csrName } = signed;
  ctx.log.info(
    `issued identity to consumer ${clusterId} (${clusterName}) from ${source}: CSR ${csrName}, token id ${parsed!.tokenId}`,
  );

  // 7. Answer.
  const answer: IdentityResponseBody = {
    certificate,
    apiServerUrl: provider.apiServerUrl,
    apiServerCa: provider.apiServerCaPem,
    tenantNamespace: tenantNamespace(clusterId),
    providerClusterId: provider.clusterId,
    providerClusterName: provider.clusterName,
  };
  return { status: 200, body: answer };
}

/** How often a first use retries binding when another request changed the token's record meanwhile. */
const BIND_ATTEMPTS = 3;

/**
 * Why `presented` may not be issued an identity with token `tokenId`, or undefined once the token
 * is bound to it (binding it now on first use). Writes nothing when it refuses.
 */
async function bindToConsumer(
  ctx: IssueContext,
  tokenId: string,
  record: PeeringTokenRecord,
  presented: TokenBinding,
): Promise<string | undefined> {
  const bound = tokenBindingRefusal(record.boundTo, presented);
  if (bound) return bound;
  // Another token cannot take over a consumer that already has an identity here with another key.
  const tenantKey = await getTenantKeyFingerprint(ctx.kc, presented.clusterId);
  if (tenantKey !== undefined && tenantKey !== presented.keySha256) {
    return `cluster ${presented.clusterId} already holds an identity on this provider, bound to another key: only that consumer may be issued one`;
  }
  if (record.boundTo) return undefined; // Bound to this very consumer already.
  let resourceVersion = record.resourceVersion;
  for (let attempt = 0; attempt < BIND_ATTEMPTS; attempt++) {
    if (await bindPeeringToken(ctx.kc, tokenId, presented, resourceVersion)) return undefined;
    // Changed meanwhile (most likely bound by a concurrent first use): read it and decide again.
    const fresh = await getPeeringTokenRecord(ctx.kc, tokenId);
    if (!fresh || fresh.secretHash !== record.secretHash) break;
    if (fresh.boundTo) return tokenBindingRefusal(fresh.boundTo, presented);
    resourceVersion = fresh.resourceVersion;
  }
  return "peering token refused: unknown, revoked or wrong token";
}
