/**
 * A provider out of reach when a peering's, a tunnel's or a namespace offloading's delete needs
 * it: found by one short probe (core/kube/client.ts `probeApiServer`), never by waiting out the
 * operation's deadline. Without `force` the delete stops at once, changing nothing, and says what
 * was tried, where, why, and the way out; with `force` the consumer's side goes and what stays on
 * the provider is listed. The three deletes say it in the same words, so it sits below their tasks
 * (core/operation/).
 */

/** The resources that take `force` for a provider that is gone. */
export type ForcibleResource = "Tunnel" | "Peering" | "NamespaceOffloading";

/** The resources that live in one cluster and take `force` for that cluster gone: they leave the stack. */
export type ForgettableResource = "Cluster" | "PeeringToken";

/** Where the provider was tried and why it did not answer. */
export interface UnreachableProvider {
  /** The step that needed it, e.g. `network fabric` or `unpeer`. */
  readonly step: string;
  /** The provider's cluster name. */
  readonly providerName: string;
  /** What did not answer, e.g. `API server https://172.29.1.10:6443`. */
  readonly endpoint: string;
  /** Why, as the connection classifier says it (`connection refused (…)`). */
  readonly cause: string;
  /**
   * Set when the provider answers but refuses the consumer's identity what the operation needs: out
   * of reach for it as surely as a provider that is gone (`cause` names the rights).
   */
  readonly refuses?: true;
}

/**
 * `provider a is unreachable: API server https://…:6443: connection refused (…)`, or for one that
 * refuses: `provider a refuses the consumer: API server …: its identity … may not …`.
 */
export function describeUnreachable(found: UnreachableProvider): string {
  const what = found.refuses ? "refuses the consumer" : "is unreachable";
  return `provider ${found.providerName} ${what}: ${found.endpoint}: ${found.cause}`;
}

/**
 * The error of a delete (or an offloading's update) that found one provider or more out of reach
 * without `force`: nothing was changed. `resource` names where `force` is set (the resource at hand).
 */
export function providerUnreachableError(
  found: UnreachableProvider | readonly [UnreachableProvider, ...UnreachableProvider[]],
  resource: ForcibleResource,
): Error {
  const all: readonly UnreachableProvider[] = Array.isArray(found) ? found : [found as UnreachableProvider];
  return new Error(
    `${all[0]!.step}: ${all.map(describeUnreachable).join("; ")}. Nothing was changed. If the provider is gone for good, set force: true on the ${resource} ` +
      `(and on the other resources of this peering) and run pulumi up, which does not need the provider, then pulumi destroy again: ` +
      `the consumer's side is removed and what stays on the provider is listed`,
  );
}

/** What a forced delete of resource `kind` `label` tells the user: what it left on the provider, and how that goes. */
export function forcedDeleteReport(
  kind: ForcibleResource,
  label: string,
  providerName: string,
  left: readonly string[],
  remedy: string,
): string {
  return `${kind} "${label}": forced delete removed the consumer's side; left on provider ${providerName}: ${left.join("; ")}. ${remedy}`;
}

/**
 * The error of a delete of a resource that lives in one cluster (`Cluster`, `PeeringToken`) that
 * found that cluster out of reach without `force`: nothing was changed, and the way out is named.
 */
export function clusterUnreachableError(
  step: string,
  resource: ForgettableResource,
  endpoint: string,
  cause: string,
): Error {
  return new Error(
    `${step}: the cluster is unreachable: ${endpoint}: ${cause}. Nothing was changed. If the cluster is gone for good, set ` +
      `force: true on the ${resource} (and on the resources that use it) and run pulumi up, which does not need the cluster, ` +
      `then pulumi destroy again: the ${resource} leaves the stack and what it made in the cluster is listed`,
  );
}

/** What a forced delete of resource `kind` `label`, whose cluster at `endpoint` was out of reach, tells the user. */
export function forgottenReport(
  kind: ForgettableResource,
  label: string,
  endpoint: string,
  left: readonly string[],
  remedy: string,
): string {
  return `${kind} "${label}": forced delete removed it from the stack without its cluster (${endpoint}); left there: ${left.join("; ")}. ${remedy}`;
}
