/**
 * How a peering that lost its identity says so. Kubernetes cannot revoke a certificate: a provider
 * revokes a consumer by removing its tenant's RBAC and namespace (its auth service's `/v1/revoke`,
 * or its admin deleting the tenant), after which its API server refuses every call the identity
 * makes: 403, or 401 once the certificate itself is no longer accepted. The consumer's heartbeat
 * (the virtual node's Ready condition) and `pulumi refresh` of a Peering and of a Tunnel report it
 * in the same words, so that one search finds them all.
 */
import { httpStatusOf, isRefusal } from "../kube/errors.js";

/** What every report of a refused identity starts with. */
export const IDENTITY_REVOKED = "identity revoked";

/** The reason of the virtual node's Ready condition while its provider refuses the identity. */
export const IDENTITY_REVOKED_REASON = "IdentityRevoked";

/** Where the identity was refused. */
export interface RefusalSite {
  /** The provider cluster's name. */
  readonly providerName: string;
  /** The provider's API server URL. */
  readonly endpoint: string;
  /** The call that was refused, e.g. `reading ResourceOffer pulumi-liqo-tenant-x/from-y`. */
  readonly call: string;
}

/**
 * `identity revoked: provider a at https://…:6443 refused the consumer's identity (HTTP 403 reading …) …`
 * when `error` is the provider refusing the identity; undefined for any other failure (an
 * unreachable provider is not a revoked identity).
 */
export function describeRevokedIdentity(error: unknown, site: RefusalSite): string | undefined {
  if (!isRefusal(error)) return undefined;
  return (
    `${IDENTITY_REVOKED}: provider ${site.providerName} at ${site.endpoint} refused the consumer's identity ` +
    `(HTTP ${httpStatusOf(error)} ${site.call}); pulumi up authenticates again with the peering token`
  );
}
