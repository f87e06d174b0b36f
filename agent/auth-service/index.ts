/** The provider's auth service (re-exports only). */
export { startAuthService, type AuthServiceOptions, type RunningAuthService } from "./service.js";
export { FailureLimiter, type FailureLimiterOptions } from "./failure-limiter.js";
export { consumerOfCertificate, splitPemBundle, type PeerCertificate } from "./revoke-identity.js";
export { renewConsumerIdentity, type RenewContext } from "./renew-identity.js";
