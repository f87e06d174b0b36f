/**
 * Where a client gateway whose tunnel is down dials again. WireGuard moves a peer's endpoint to
 * wherever an authenticated packet of it last came from (roaming). A server that moves to another
 * port (a tunnel update rewrites the client's endpoint first, then the server's) may send one last
 * packet from its old port in between; the client then sends to a port nobody listens on any more,
 * and where only flows the client opened let answers in (a firewall, a NAT), the server's packets
 * from its new port never reach it. Only the client's own dial to the endpoint its spec names
 * brings the tunnel back. Pure: reading WireGuard's peer and dialing are the gateway's.
 */

/**
 * The endpoint to dial again, given the one the spec names and the peer's endpoint WireGuard has
 * now; `undefined` when there is nothing to do (no endpoint named, or the peer is already there).
 */
export function endpointToRedial(configured: string | undefined, current: string | undefined): string | undefined {
  return configured !== undefined && configured !== current ? configured : undefined;
}
