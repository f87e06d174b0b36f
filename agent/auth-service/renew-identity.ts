/**
 * `POST /v1/renew`: a consumer trades the identity it holds for a new certificate, before the old
 * one expires, with no token: the identity itself is the proof, over mutual TLS as for `/v1/revoke`.
 * Every check runs before the first write, so a refused renewal leaves nothing in the cluster:
 *
 * 1. the client certificate chains to this cluster's client CA, is valid now, and names exactly a
 *    consumer user (see {@link consumerOfCertificate});
 * 2. that consumer has a tenant here that may still act (not revoked, not being removed), bound
 *    to the certificate's key;
 * 3. the CSR asks for exactly that consumer's user name, with no group, and is signed by that same
 *    key: a renewal extends an identity, it never moves it to another key or another consumer;
 * then, on the provider cluster:
 * 4. keep the tenant's object quota (a tenant made before quotas existed gets it here);
 * 5. submit the CSR, approve it, wait for the signer's certificate, tidy the consumer's older CSRs;
 * 6. answer with the certificate. The tenant's RBAC is left as it is: nothing is granted.
 */
import { X509Certificate } from "node:crypto";
import { publicKeyFingerprint } from "../../core/authentication/consumer-key.js";
import { checkIdentityCsr } from "../../core/authentication/csr-policy.js";
import type { RenewResponseBody } from "../../core/authentication/protocol.js";
import { getTenantStanding } from "../../core/authentication/tenant.js";
import { refuse, type Answer } from "./answer.js";
import { signConsumerCsr } from "./sign-certificate.js";
import { keepTenantQuota } from "./tenant-quota.js";
import { authenticateConsumer, type CertificateAuthContext, type PeerCertificate } from "./revoke-identity.js";

/** What the handler needs from the service. */
export interface RenewContext extends CertificateAuthContext {
  /** How long to wait for the signer. */
  readonly certificateTimeoutMs: number;
  /** Lifetime of the new certificate, in seconds (at least 600). */
  readonly lifetimeSeconds: number;
}

/** Handles one renewal from `source` (an IP, for logs). */
export async function renewConsumerIdentity(
  ctx: RenewContext,
  peer: PeerCertificate,
  body: unknown,
  source: string,
): Promise<Answer> {
  // 1. Who asks: the certificate it holds.
  const who = authenticateConsumer(ctx, peer, source, "renewal");
  if ("status" in who) return who;
  // 2. Its tenant: still there, still allowed, bound to this key.
  const tenant = await getTenantStanding(ctx.kc, who.clusterId);
  const refusal = !tenant?.active
    ? `consumer ${who.clusterId} holds no active identity on this provider (revoked or never issued): peer again with a peering token`
    : tenant.keySha256 !== who.keySha256
      ? `the certificate's key is not the one consumer ${who.clusterId}'s identity is bound to`
      : undefined;
  if (refusal) {
    ctx.log.warn(`refused renewal of consumer ${who.clusterId} from ${source}: ${refusal}`);
    return refuse(403, `renewal refused: ${refusal}`);
  }
  // 3. The request: the same user, the same key.
  const csr = (
    typeof body === "object" && body !== null ? (body as Record<string, unknown>)["csr"] : undefined
  ) as unknown;
  if (typeof csr !== "string" || csr === "") return refuse(400, "request body must be JSON with a string field csr");
  const verdict = checkIdentityCsr(csr, who.clusterId);
  if (!verdict.ok) {
    ctx.log.warn(`refused renewal of consumer ${who.clusterId} from ${source}: ${verdict.reason}`);
    return refuse(verdict.kind === "malformed" ? 400 : 403, `renewal refused: ${verdict.reason}`);
  }
  if (publicKeyFingerprint(verdict.publicKeyPem) !== who.keySha256) {
    ctx.log.warn(
      `refused renewal of consumer ${who.clusterId} from ${source}: the CSR is signed by another key than the certificate's`,
    );
    return refuse(403, "renewal refused: the CSR must be signed by the key of the certificate being renewed");
  }

  // 4-6. Provider cluster acts: the quota, then a new certificate for the same user and key.
  const signing = {
    consumerClusterId: who.clusterId,
    csrPem: csr,
    expirationSeconds: ctx.lifetimeSeconds,
    purpose: "renewing the identity",
    source,
  };
  const uncounted = await keepTenantQuota(ctx, signing);
  if (uncounted) return uncounted;
  const signed = await signConsumerCsr(ctx, signing);
  if (!("certificate" in signed)) return signed;
  const { certificate, csrName } = signed;
  ctx.log.info(
    `renewed identity of consumer ${who.clusterId} from ${source}: CSR ${csrName}, valid until ${new X509Certificate(certificate).validToDate.toISOString()}`,
  );
  const answer: RenewResponseBody = { certificate };
  return { status: 200, body: answer };
}
