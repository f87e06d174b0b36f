/**
 * The provider handover, a type only and importing nothing: the SDK's public types are made of
 * it, so a user's program that type-checks the SDK reads this and none of the peering steps' types.
 */

/**
 * What a provider hands to a consumer: its `PeeringToken`'s outputs of the same names, or the same
 * values from another stack. The one shape of it: an out-of-band `Peering`'s `provider` input
 * (the SDK's `ProviderHandoverArgs` is it with each field a `pulumi.Input`), and what its steps take.
 */
export interface ProviderHandover {
  /** The provider's cluster id. */
  readonly clusterId: string;
  /** The provider's auth service URL. @example "https://172.29.1.10:8443" */
  readonly authUrl: string;
  /** PEM of the CA that signed the provider's auth service's certificate. */
  readonly authCaCert: string;
  /** The peering token (a secret: never logged). */
  readonly token: string;
}
