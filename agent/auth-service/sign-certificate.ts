/**
 * The one way the auth service has a consumer's CSR signed, for an identity issued with a token
 * and for one renewed with the identity held: the cluster's signer issues it, or the consumer
 * hears at once, and for good, that it will not.
 */
import type * as k8s from "@kubernetes/client-node";
import {
  approveCsr,
  deleteConsumerCsrs,
  deleteCsr,
  forgeCertificateSigningRequest,
  submitCsr,
  waitForCertificate,
} from "../../core/authentication/certificates.js";
import type { WaitTimeoutError } from "../../core/wait/poll.js";
import type { Reporter } from "../reporter.js";
import { failForGood, type Answer } from "./answer.js";

/**
 * How long an approved CSR may wait for the cluster's signer, which issues within a second when it
 * runs: long enough for a loaded control plane, and shorter than any client's attempt (the in-band
 * agent gives one 30 s), so that the client hears why rather than timing out itself.
 */
export const CERTIFICATE_WAIT_MS = 20_000;

/** What signing needs of the service. */
export interface SigningContext {
  readonly kc: k8s.KubeConfig;
  readonly log: Reporter;
  /** How long to wait for the signer. */
  readonly certificateTimeoutMs: number;
}

/** A consumer's CSR, checked already, and what it is for (`issuing the identity`, `renewing the identity`). */
export interface SigningRequest {
  readonly consumerClusterId: string;
  readonly csrPem: string;
  /** Lifetime asked of the signer; the cluster's default when absent. */
  readonly expirationSeconds?: number;
  readonly purpose: string;
  /** Where the request came from, for the log. */
  readonly source: string;
}

/**
 * Submits and approves the CSR and waits for its certificate; the consumer's older CSRs (records
 * of certificates already handed out) are tidied. Resolves the certificate and the CSR's name, or
 * a terminal 503 when the signer issues nothing in time: then the CSR is withdrawn, so that a
 * signer coming back later signs no certificate that nobody holds.
 */
export async function signConsumerCsr(
  ctx: SigningContext,
  request: SigningRequest,
): Promise<{ readonly certificate: string; readonly csrName: string } | Answer> {
  const { consumerClusterId, csrPem, expirationSeconds } = request;
  const csrName = await submitCsr(
    ctx.kc,
    forgeCertificateSigningRequest({ consumerClusterId, csrPem, ...(expirationSeconds ? { expirationSeconds } : {}) }),
  );
  await approveCsr(ctx.kc, csrName);
  let certificate: string;
  try {
    certificate = await waitForCertificate(ctx.kc, csrName, { timeoutMs: ctx.certificateTimeoutMs });
  } catch (error) {
    if (!(error as Partial<WaitTimeoutError>).isWaitTimeoutError) throw error;
    const reason =
      `CertificateSigningRequest ${csrName} was approved but the cluster's signer issued no certificate within ` +
      `${ctx.certificateTimeoutMs / 1000} s: is kube-controller-manager running with its csrsigning controller and --cluster-signing-cert-file?`;
    ctx.log.warn(`${request.purpose} of consumer ${consumerClusterId} from ${request.source} failed: ${reason}`);
    await deleteCsr(ctx.kc, csrName);
    return failForGood(503, `${request.purpose} failed on the provider: ${reason}`);
  }
  await deleteConsumerCsrs(ctx.kc, consumerClusterId, csrName);
  return { certificate, csrName };
}
