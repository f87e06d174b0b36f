/**
 * The consumer's agent and a provider it cannot reach: each peering's provider that failed a pass
 * is left be until its backoff (agent/backoff.ts: 1 s, 2 s … 30 s) is due, instead of being called
 * again every pass (2 s while something is under way). The warning is said when the cause changes
 * and while the pause grows, then no more; the namespace offloadings that use the provider say it
 * in their status (phase `Unreachable`; `Forbidden` when the provider refused the peering's identity
 * a right, which no wait changes; or `Error` when the provider answered with another failure).
 * The clock is given, so it is tested without time passing.
 */
import type { OutgoingPeering, RemoteNamespaceReport } from "../../core/api/index.js";
import { httpStatusOf } from "../../core/kube/errors.js";
import { AGENT_BACKOFF, Backoff, type BackoffPolicy } from "../backoff.js";
import type { Reporter } from "../reporter.js";

const STEP = "offloading (consumer)";

/** What the agent last found of a provider that fails. */
interface Failing {
  readonly backoff: Backoff;
  /** The last failure's message. */
  reason: string;
  /** What kind of failure it was. */
  cause: FailureCause;
}

/**
 * `unreachable`: no HTTP answer (no connection to the API server); `forbidden`: HTTP 403, a right
 * this peering's identity lacks there; `failed`: any other answer.
 */
export type FailureCause = "unreachable" | "forbidden" | "failed";

/** The kind of failure `error` is, by its HTTP status. Pure. */
export function failureCauseOf(error: unknown): FailureCause {
  const status = httpStatusOf(error);
  return status === undefined ? "unreachable" : status === 403 ? "forbidden" : "failed";
}

const keyOf = (peering: OutgoingPeering): string => peering.metadata.uid ?? peering.spec.virtualNodeName;

/** The backoff of every provider the consumer's offloading failed to reach lately, by peering. */
export class ProviderBackoffs {
  private readonly failing = new Map<string, Failing>();

  constructor(
    private readonly policy: BackoffPolicy = AGENT_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {}

  /** Whether the peering's provider may be called at `now` (it is not failing, or its pause is over). */
  due(peering: OutgoingPeering, now: number): boolean {
    const found = this.failing.get(keyOf(peering));
    return !found || now >= found.backoff.dueAt;
  }

  /** Records that a call to the peering's provider failed at `now`; warns when that is news (see agent/backoff.ts). */
  failed(peering: OutgoingPeering, error: unknown, now: number, reporter: Reporter): void {
    const key = keyOf(peering);
    const label = `${STEP}: provider ${peering.spec.providerClusterName} (virtual node ${peering.spec.virtualNodeName})`;
    const found = this.failing.get(key) ?? {
      backoff: new Backoff(label, this.policy, this.random),
      reason: "",
      cause: "failed" as FailureCause,
    };
    found.reason = (error as Error | undefined)?.message ?? String(error);
    found.cause = failureCauseOf(error);
    this.failing.set(key, found);
    const decision = found.backoff.failed(found.reason, now);
    if (decision.report) reporter.warn(decision.report);
  }

  /** Records that the peering's provider answered; says so once if it had been failing. */
  succeeded(peering: OutgoingPeering, reporter: Reporter): void {
    const found = this.failing.get(keyOf(peering));
    if (!found) return;
    this.failing.delete(keyOf(peering));
    const recovered = found.backoff.succeeded();
    if (recovered) reporter.info(recovered);
  }

  /**
   * The report of a namespace offloaded through the peering while its provider fails, or
   * undefined while it does not. Its message stays the same while the cause does, so the status
   * is written once, not at every pass.
   */
  reportOf(
    peering: OutgoingPeering,
    remoteNamespace: string,
  ): Pick<RemoteNamespaceReport, "phase" | "message"> | undefined {
    const found = this.failing.get(keyOf(peering));
    if (!found) return undefined;
    return failingReport(peering.spec.providerClusterName, found.reason, found.cause, remoteNamespace, this.policy);
  }

  /** Forgets the peerings not in `peerings` (deleted). */
  keepOnly(peerings: readonly OutgoingPeering[]): void {
    const kept = new Set(peerings.map(keyOf));
    for (const key of this.failing.keys()) if (!kept.has(key)) this.failing.delete(key);
  }
}

/**
 * What an offloaded namespace's status says of provider `providerName` while calls to it fail
 * with `reason`: `Unreachable` when no connection was made, `Forbidden` when it refused the
 * peering's identity a right (the provider's tenant rights are its `Cluster`'s to give, so the
 * message says what to do instead of waiting), else `Error`; and that the agent backs off. Pure.
 */
export function failingReport(
  providerName: string,
  reason: string,
  cause: FailureCause,
  remoteNamespace: string,
  policy: BackoffPolicy = AGENT_BACKOFF,
): Pick<RemoteNamespaceReport, "phase" | "message"> {
  const backingOff = `the consumer's agent tries again after a pause that grows to ${policy.maxMs / 1000} s`;
  const forceWayOut = `set force: true on the NamespaceOffloading, then delete it`;
  switch (cause) {
    case "unreachable":
      return {
        phase: "Unreachable",
        message:
          `provider ${providerName} cannot be reached: ${reason}; namespace ${remoteNamespace} there is left as it was ` +
          `and ${backingOff}. If the provider is gone for good, ${forceWayOut}`,
      };
    case "forbidden":
      return {
        phase: "Forbidden",
        message:
          `provider ${providerName} refuses this peering's identity: ${reason}. Waiting does not change that: the ` +
          `provider's Cluster gives every consumer the rights of its release (run pulumi up of the stack that holds ` +
          `it, with this release of the package), or its administrator cut them; ${backingOff}. To withdraw ` +
          `namespace ${remoteNamespace} without the provider, ${forceWayOut}`,
      };
    case "failed":
      return { phase: "Error", message: `${reason}; ${backingOff}` };
  }
}
