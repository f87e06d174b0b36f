/**
 * The consumer's identity renewal: each pass looks at the identity every OutgoingPeering holds and,
 * once two thirds of its lifetime have passed (as Liqo renews), trades it at the provider's auth
 * service for a new certificate of the same key, authenticated by the certificate it still holds.
 * The new kubeconfig replaces the old one in the identity Secret in one write, and the heartbeat
 * drops its cached copy. A renewal that fails is tried again with backoff (1 s, 2 s … 30 s),
 * from ten days before a 30-day identity expires: the OutgoingPeering's `status.identity` says
 * when it expires, when the next try is and why the last one failed, and the heartbeat shows the
 * failure in the virtual node's Ready condition.
 */
import type * as k8s from "@kubernetes/client-node";
import { X509Certificate } from "node:crypto";
import { SYSTEM_NAMESPACE, type OutgoingPeering } from "../core/api/index.js";
import { certificateValidity, renewIdentity, type CertificateValidity } from "../core/authentication/identity.js";
import { describeKubeError } from "../core/kube/errors.js";
import {
  getStoredIdentity,
  heldCertificateOf,
  replaceStoredIdentity,
  withRenewedCertificate,
} from "../core/authentication/stored-identity.js";
import { listOutgoingPeerings, writeIdentityStatus } from "../core/virtual-node/outgoing-peering.js";
import { forgetPeeringIdentity } from "./heartbeat.js";
import { AGENT_BACKOFF, backoffStepMs } from "./backoff.js";
import type { Reporter } from "./reporter.js";

/** Share of an identity's lifetime after which it is renewed: Liqo's own choice, leaving a third (10 of 30 days) for retries. */
export const RENEW_AT_FRACTION = 2 / 3;

/** How long one renewal may try the auth service before it counts as failed and backs off. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * Shortest time between two renewals of one identity. Signers date certificates back
 * (kube-controller-manager's by 5 minutes, against clock skew), so a short lifetime with a low
 * threshold could make a fresh certificate due at once: this keeps such a setting from renewing
 * in a loop against the provider.
 */
export const MIN_RENEWAL_SPACING_MS = 10_000;

/** Longest pause between two passes: a peering made meanwhile is looked at within it. */
const MAX_PAUSE_MS = 60_000;

/** Renewals of one peering that failed in a row. */
export interface RenewalFailures {
  /** How many. */
  readonly count: number;
  /** When the last one failed (ms since the epoch). */
  readonly lastAt: number;
}

/**
 * When to renew an identity (ms since the epoch): once `fraction` of its lifetime (as the
 * certificate states it, from notBefore to notAfter) has passed, or, after failures, a backoff after
 * the last one; and never sooner than {@link MIN_RENEWAL_SPACING_MS} after the last renewal. Pure.
 */
export function renewalTime(
  validity: CertificateValidity,
  fraction: number,
  failures?: RenewalFailures,
  lastRenewedAt?: number,
): number {
  const from = validity.notBefore.getTime();
  const due = from + fraction * (validity.notAfter.getTime() - from);
  const spaced = lastRenewedAt === undefined ? due : Math.max(due, lastRenewedAt + MIN_RENEWAL_SPACING_MS);
  return failures ? Math.max(spaced, failures.lastAt + backoffStepMs(AGENT_BACKOFF, failures.count)) : spaced;
}

/** Where a peering's agent renews its identity: in-band inside the tunnel, out-of-band as the handover said. */
export function authAccessOf(
  peering: OutgoingPeering,
): { readonly url: string; readonly caPem: string; readonly serverName?: string } | undefined {
  const { inBand, auth } = peering.spec;
  if (inBand) return { url: inBand.authUrl, caPem: inBand.authCaPem, serverName: inBand.authServerName };
  return auth ? { url: auth.url, caPem: auth.caPem } : undefined;
}

const CONSUMER_CN = /CN=pulumi-liqo:consumer:([0-9a-f]{16})/;

/** Knobs of {@link renewIdentities}. */
export interface RenewalOptions {
  /** The clock (ms since the epoch); tests move it. @default Date.now */
  readonly clock?: () => number;
  /** Share of the lifetime after which to renew. @default RENEW_AT_FRACTION */
  readonly fraction?: number;
}

/** Failures by OutgoingPeering name, for backoff; a restarted agent tries at once. */
const failures = new Map<string, RenewalFailures>();
/** When each OutgoingPeering's identity was last renewed by this agent (ms since the epoch). */
const renewedAt = new Map<string, number>();

/** One pass over every peering's identity; resolves how long until the next one is needed. */
export async function renewIdentities(
  kc: k8s.KubeConfig,
  reporter: Reporter,
  options: RenewalOptions = {},
): Promise<number> {
  const clock = options.clock ?? Date.now;
  const now = clock();
  const fraction = options.fraction ?? RENEW_AT_FRACTION;
  const peerings = await listOutgoingPeerings(kc);
  for (const known of [failures, renewedAt]) {
    for (const name of known.keys()) if (!peerings.some((p) => p.metadata.name === name)) known.delete(name);
  }
  let pause = MAX_PAUSE_MS;
  for (const peering of peerings) {
    try {
      const at = await renewOne(kc, peering, clock, fraction, reporter);
      pause = Math.min(pause, at - now);
    } catch (error) {
      // The consumer's own API server failed us: nothing was renewed; look again soon.
      reporter.warn(
        `identity renewal of the peering with ${peering.spec.providerClusterName}: ${describeKubeError(error)}`,
      );
      pause = Math.min(pause, backoffStepMs(AGENT_BACKOFF, 1));
    }
  }
  return Math.max(1_000, pause);
}

/** Looks at one peering's identity and renews it when due; resolves when to look again (ms since the epoch). */
async function renewOne(
  kc: k8s.KubeConfig,
  peering: OutgoingPeering,
  clock: () => number,
  fraction: number,
  reporter: Reporter,
): Promise<number> {
  const now = clock();
  const name = peering.metadata.name!;
  const secret = peering.spec.identitySecret;
  const stored = await getStoredIdentity(kc, secret);
  // In-band, the agent has not authenticated yet: nothing to renew.
  if (!stored) return now + MAX_PAUSE_MS;
  const input = `Secret ${SYSTEM_NAMESPACE}/${secret}`;
  const held = heldCertificateOf(stored.kubeconfig, input);
  const validity = certificateValidity(held.certificatePem);
  const expiresAt = validity.notAfter.toISOString();
  const at = renewalTime(validity, fraction, failures.get(name), renewedAt.get(name));
  if (now < at) {
    const known = peering.status?.identity;
    if (known?.expiresAt !== expiresAt || known?.renewAt !== new Date(at).toISOString())
      await writeIdentityStatus(kc, name, { expiresAt, renewAt: new Date(at).toISOString() });
    return at;
  }
  const provider = peering.spec.providerClusterName;
  const access = authAccessOf(peering);
  try {
    if (!access)
      throw new Error(
        "the peering records no auth service to renew at (it was made by a version without renewal): replace its Peering " +
          "(pulumi up --replace <urn>) before the identity expires",
      );
    const consumerClusterId = CONSUMER_CN.exec(new X509Certificate(held.certificatePem).subject)?.[1];
    if (!consumerClusterId) throw new Error(`the certificate in ${input} is not a consumer identity`);
    const certificatePem = await renewIdentity({
      authUrl: access.url,
      authCaPem: access.caPem,
      ...(access.serverName ? { authServerName: access.serverName } : {}),
      certificatePem: held.certificatePem,
      keyPem: held.keyPem,
      consumerClusterId,
      timeoutMs: ATTEMPT_TIMEOUT_MS,
      onRetry: (message) => reporter.info(`identity renewal of the peering with ${provider}: ${message}`),
    });
    // Another writer (pulumi up authenticating again) came first: its identity stands; look again.
    if (
      !(await replaceStoredIdentity(
        kc,
        secret,
        stored.resourceVersion,
        withRenewedCertificate(stored.kubeconfig, certificatePem, input),
      ))
    )
      return now;
    forgetPeeringIdentity(secret);
    failures.delete(name);
    renewedAt.set(name, now);
    const renewed = certificateValidity(certificatePem);
    const next = renewalTime(renewed, fraction, undefined, now);
    await writeIdentityStatus(kc, name, {
      expiresAt: renewed.notAfter.toISOString(),
      renewAt: new Date(next).toISOString(),
      renewedAt: new Date(now).toISOString(),
      renewalFailures: null,
      renewalError: null,
    });
    reporter.info(
      `identity renewal: the identity for provider ${provider} was renewed at ${access!.url}; it expires at ` +
        `${renewed.notAfter.toISOString()} (was ${expiresAt})`,
    );
    return next;
  } catch (error) {
    const count = (failures.get(name)?.count ?? 0) + 1;
    // The backoff runs from when the try ended, which took up to ATTEMPT_TIMEOUT_MS.
    failures.set(name, { count, lastAt: clock() });
    const retryAt = renewalTime(validity, fraction, failures.get(name), renewedAt.get(name));
    const reason = describeKubeError(error);
    reporter.warn(
      `identity renewal: renewing the identity for provider ${provider}${access ? ` at ${access.url}` : ""} failed (${count} ` +
        `in a row; next try at ${new Date(retryAt).toISOString()}; it expires at ${expiresAt}): ${reason}`,
    );
    await writeIdentityStatus(kc, name, {
      expiresAt,
      renewAt: new Date(retryAt).toISOString(),
      renewalFailures: count,
      renewalError: reason,
    });
    return retryAt;
  }
}
