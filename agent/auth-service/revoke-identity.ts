/**
 * `POST /v1/revoke`: a consumer gives its identity up, authenticated by that identity (mutual TLS).
 * The certificate must chain to this cluster's client CA, be valid now, name exactly a consumer
 * user and carry the key that consumer's tenant is bound to; then everything of that consumer
 * goes: RBAC, tenant namespace (with its requests and offers), CSRs. Kubernetes cannot revoke a
 * certificate, so removing its RBAC is what ends it.
 */
import type * as k8s from "@kubernetes/client-node";
import { X509Certificate } from "node:crypto";
import { consumerUserName } from "../../core/api/names.js";
import type { RevokeResponseBody } from "../../core/authentication/protocol.js";
import { publicKeyFingerprint } from "../../core/authentication/consumer-key.js";
import { getTenantKeyFingerprint, removeTenant } from "../../core/authentication/tenant.js";
import { isClusterId } from "../../core/cluster/install.js";
import type { Reporter } from "../reporter.js";
import { fail, refuse, type Answer } from "./answer.js";

/** What the TLS layer saw of the client. */
export interface PeerCertificate {
  /** DER of the client's certificate; undefined when it sent none. */
  readonly raw?: Buffer;
  /** Whether the TLS layer verified it against the client CA. */
  readonly authorized: boolean;
  /** Why it did not, e.g. `CERT_HAS_EXPIRED`. */
  readonly authorizationError?: string;
}

/** What a handler that authenticates its caller by client certificate needs from the service. */
export interface CertificateAuthContext {
  /** Client of the provider cluster. */
  readonly kc: k8s.KubeConfig;
  /** Current time in ms. */
  readonly now: () => number;
  /** Where progress and refusals go; never given a secret. */
  readonly log: Reporter;
  /** The cluster's client CA certificates (PEM); empty when they could not be read. */
  readonly clientCaPems: readonly string[];
}

/** What the handler needs from the service. */
export interface RevokeContext extends CertificateAuthContext {
  /** How long to wait for the tenant namespace to be gone. */
  readonly removalTimeoutMs: number;
}

const CONSUMER_CN = /^CN=pulumi-liqo:consumer:([0-9a-f]{16})$/;

/**
 * Which consumer a client certificate stands for, or why it stands for none. Pure: the chain is
 * checked again here against the CA certificates, not only trusted from the TLS layer, because a
 * server without a client CA would fall back to the public roots.
 */
export function consumerOfCertificate(
  peer: PeerCertificate,
  clientCaPems: readonly string[],
  now: number,
): { clusterId: string; keySha256: string } | { status: number; reason: string } {
  if (!peer.raw) return { status: 401, reason: "a client certificate (the identity itself) is required" };
  if (!peer.authorized)
    return { status: 403, reason: `client certificate refused by TLS: ${peer.authorizationError ?? "not verified"}` };
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(peer.raw);
  } catch {
    return { status: 400, reason: "client certificate is not readable" };
  }
  const signedByCa = clientCaPems.some((pem) => {
    try {
      const ca = new X509Certificate(pem);
      return cert.checkIssued(ca) && cert.verify(ca.publicKey);
    } catch {
      return false;
    }
  });
  if (!signedByCa) return { status: 403, reason: "client certificate is not signed by this cluster's client CA" };
  if (now < Date.parse(cert.validFrom) || now > Date.parse(cert.validTo))
    return { status: 403, reason: "client certificate is not valid now (expired or not yet valid)" };
  const match = CONSUMER_CN.exec(cert.subject.trim());
  if (!match || !isClusterId(match[1]) || cert.subject.trim() !== `CN=${consumerUserName(match[1]!)}`) {
    return {
      status: 403,
      reason: `client certificate subject "${cert.subject.replace(/\n/g, ", ")}" is not exactly CN=pulumi-liqo:consumer:<cluster id>`,
    };
  }
  return { clusterId: match[1]!, keySha256: publicKeyFingerprint(cert.publicKey) };
}

/** Splits a PEM bundle into its certificates. */
export function splitPemBundle(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/**
 * The consumer that a request's client certificate stands for, or the answer refusing it (logged);
 * `action` (`revocation`, `renewal`) names the request in both.
 */
export function authenticateConsumer(
  ctx: CertificateAuthContext,
  peer: PeerCertificate,
  source: string,
  action: string,
): { clusterId: string; keySha256: string } | Answer {
  if (ctx.clientCaPems.length === 0)
    return fail(
      503,
      "this cluster's client CA could not be read (kube-system/extension-apiserver-authentication); try again later",
    );
  const who = consumerOfCertificate(peer, ctx.clientCaPems, ctx.now());
  if (!("reason" in who)) return who;
  ctx.log.warn(`refused ${action} from ${source}: ${who.reason}`);
  return refuse(who.status, `${action} refused: ${who.reason}`);
}

/** Handles one revocation from `source`. */
export async function revokeConsumerIdentity(
  ctx: RevokeContext,
  peer: PeerCertificate,
  source: string,
): Promise<Answer> {
  const who = authenticateConsumer(ctx, peer, source, "revocation");
  if ("status" in who) return who;
  // A certificate for the right name but another key (one issued before tenants were bound to a
  // key, say) is not the consumer the tenant belongs to.
  const tenantKey = await getTenantKeyFingerprint(ctx.kc, who.clusterId);
  if (tenantKey !== undefined && tenantKey !== who.keySha256) {
    ctx.log.warn(
      `refused revocation of consumer ${who.clusterId} from ${source}: the certificate's key is not the one its tenant is bound to`,
    );
    return refuse(
      403,
      `revocation refused: the certificate's key is not the one consumer ${who.clusterId}'s identity is bound to`,
    );
  }
  const result = await removeTenant(ctx.kc, who.clusterId, { timeoutMs: ctx.removalTimeoutMs });
  ctx.log.info(
    `revoked identity of consumer ${who.clusterId} from ${source}: ` +
      `${result.removed ? `removed ${result.tenantNamespace} and its CSRs` : "nothing left to remove"}`,
  );
  const body: RevokeResponseBody = { revoked: result.removed, tenantNamespace: result.tenantNamespace };
  return { status: 200, body };
}
