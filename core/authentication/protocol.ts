/**
 * The auth service's wire protocol: paths and JSON bodies, shared by the consumer's client
 * ({@link ./identity.ts}) and the provider's service (`agent/auth-service`), so the two cannot drift.
 */

/** Path of the identity request: the consumer presents a token and a CSR, receives a certificate. */
export const IDENTITY_PATH = "/v1/identity";
/** Path of the revocation: the consumer, authenticated by its certificate (mutual TLS), gives its identity up. */
export const REVOKE_PATH = "/v1/revoke";
/** Path of the renewal: the consumer, authenticated by its current certificate (mutual TLS), receives a new one for the same key. */
export const RENEW_PATH = "/v1/renew";

/** Body of `POST /v1/identity`. */
export interface IdentityRequestBody {
  /** The peering token (secret). */
  readonly token: string;
  /** The consumer's cluster id (16 lowercase hex characters). */
  readonly clusterId: string;
  /** The consumer's human-readable cluster name. */
  readonly clusterName: string;
  /** PEM PKCS#10 request whose subject is exactly `CN=<consumerUserName(clusterId)>`. */
  readonly csr: string;
}

/** Answer of `POST /v1/identity` (HTTP 200). */
export interface IdentityResponseBody {
  /** PEM client certificate signed by the provider cluster's client CA. */
  readonly certificate: string;
  /** Provider's API server URL as peers reach it. */
  readonly apiServerUrl: string;
  /** PEM of the CA that signed the provider API server's serving certificate. */
  readonly apiServerCa: string;
  /** The consumer's tenant namespace on the provider. */
  readonly tenantNamespace: string;
  /** Provider's cluster id. */
  readonly providerClusterId: string;
  /** Provider's cluster name. */
  readonly providerClusterName: string;
}

/** Answer of `POST /v1/revoke` (HTTP 200). */
export interface RevokeResponseBody {
  /** Whether anything was left to remove (false: already revoked). */
  readonly revoked: boolean;
  /** The tenant namespace that was removed. */
  readonly tenantNamespace: string;
}

/** Body of `POST /v1/renew` (over mutual TLS with the identity being renewed). */
export interface RenewRequestBody {
  /** PEM PKCS#10 request for the same user name as the presented certificate, signed with the same key. */
  readonly csr: string;
}

/** Answer of `POST /v1/renew` (HTTP 200). */
export interface RenewResponseBody {
  /** PEM client certificate, for the same user and key, with a new lifetime. */
  readonly certificate: string;
}

/** Body of every refusal or failure (HTTP 4xx/5xx). */
export interface ErrorBody {
  /** What went wrong, for a human; never contains a secret. */
  readonly error: string;
  /**
   * Set on a server failure (5xx) that asking again will not cure until the provider's operator
   * acts (its certificate signer is not running, say): the client stops waiting at once and
   * reports `error`, rather than retrying until its deadline.
   */
  readonly terminal?: boolean;
}

/** Longest maximum body the service reads: a CSR and a token fit many times over. */
export const MAX_BODY_BYTES = 64 * 1024;
