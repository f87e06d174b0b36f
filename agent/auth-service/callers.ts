/**
 * Whom a request to the auth service is charged to: the failure budget that decides whether it is
 * heard, and that its refusal counts against. Pure.
 *
 * The address a request comes from is often not its client's: behind a NodePort or LoadBalancer
 * Service with `externalTrafficPolicy: Cluster` every client arrives from a node's address, and so
 * do clients behind one NAT. A budget per address alone would let a stranger's refusals throttle
 * every consumer behind the same address. So a caller that proves more than an address is charged
 * to what it proves:
 *
 * - a consumer presenting a client certificate of this cluster (renew, revoke): its own identity;
 * - a request naming the id of a token this provider holds (identity): that token;
 * - anyone else: its address.
 *
 * A stranger can then exhaust only the budget of an address (and of a token id, if it knows one,
 * which only the token's holder and the provider's administrator do).
 */

/** The budget a request is charged to. */
export interface Caller {
  /** Key of the budget in the failure limiter. */
  readonly key: string;
  /** Who that is, for messages: `consumer <id>`, `token id <id>` or `address <ip>`. */
  readonly description: string;
}

/** What is known of a request before its endpoint runs. */
export interface CallerFacts {
  /** The address the connection comes from. */
  readonly source: string;
  /** The consumer a verified client certificate of this cluster names, if it presented one. */
  readonly consumerClusterId?: string;
  /** The id of a token the provider holds, if the body names one. */
  readonly knownTokenId?: string;
}

/** The budget of the address `source`: what every refusal also counts against. */
export function sourceCaller(source: string): Caller {
  return { key: `source:${source}`, description: `address ${source}` };
}

/** Whom a request with these facts is charged to. */
export function callerOf(facts: CallerFacts): Caller {
  if (facts.consumerClusterId)
    return { key: `consumer:${facts.consumerClusterId}`, description: `consumer ${facts.consumerClusterId}` };
  if (facts.knownTokenId) return { key: `token:${facts.knownTokenId}`, description: `token id ${facts.knownTokenId}` };
  return sourceCaller(facts.source);
}
