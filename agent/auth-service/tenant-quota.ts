/**
 * The tenant's object quota, kept by the auth service before it grants or renews an identity
 * (core/authentication/tenant-quota.ts says what it bounds). The quota controller counts it at
 * once on a cluster whose install finished; when it does not within the signer's wait (the
 * cluster's kube-controller-manager is not running), the request ends with a terminal 503 that says
 * so, as the signer's does, instead of waiting out the consumer's deadline.
 */
import { forgeTenantQuota } from "../../core/authentication/tenant-quota.js";
import { ensureObjectQuota } from "../../core/kube/quota.js";
import type { WaitTimeoutError } from "../../core/wait/poll.js";
import { failForGood, type Answer } from "./answer.js";
import type { SigningContext, SigningRequest } from "./sign-certificate.js";

/** Applies consumer `request.consumerClusterId`'s tenant quota; resolves undefined once counted, else the answer to give. */
export async function keepTenantQuota(ctx: SigningContext, request: SigningRequest): Promise<Answer | undefined> {
  const quota = forgeTenantQuota(request.consumerClusterId);
  try {
    await ensureObjectQuota(ctx.kc, quota, "authentication", { timeoutMs: ctx.certificateTimeoutMs });
    return undefined;
  } catch (error) {
    if (!(error as Partial<WaitTimeoutError>).isWaitTimeoutError) throw error;
    const reason =
      `the cluster's quota controller did not count ResourceQuota ${quota.metadata!.namespace}/${quota.metadata!.name} ` +
      `within ${ctx.certificateTimeoutMs / 1000} s: is kube-controller-manager running with its resourcequota controller?`;
    ctx.log.warn(
      `${request.purpose} of consumer ${request.consumerClusterId} from ${request.source} failed: ${reason}`,
    );
    return failForGood(503, `${request.purpose} failed on the provider: ${reason}`);
  }
}
