/**
 * The route agent's decision, pure: which routes this node needs toward the remote clusters, from
 * what the cluster says (the gateway pod's node, its InternalIP, the TunnelEndpoints' remote
 * ranges as this cluster sees them) and the routes it holds with the route agent's own `proto`.
 *
 * As Liqo's route agent does: a node that is not the gateway's sends the remote ranges to the
 * gateway's node, whose routes lead them into the tunnel; the gateway's own node needs nothing
 * (the gateway's routes are there already). Routes are tagged with {@link ROUTE_PROTO}, so that
 * this agent only ever removes its own.
 */
import { Cidr } from "../../core/net/cidr.js";

/**
 * The `proto` of the route agent's routes: a number iproute2's `rt_protos` leaves unassigned (it
 * lists 0-4, 8-18, 42, 99, 186-189 and 192), so that neither the kernel, a routing daemon, nor the
 * gateway (proto boot) owns a route carrying it.
 */
export const ROUTE_PROTO = 173;

/** One route of the node's main table: a destination sent via a next hop. */
export interface NodeRoute {
  /** The destination network. @example "10.142.0.0/16" */
  readonly destination: string;
  /** The next hop: the gateway node's InternalIP. @example "192.168.101.2" */
  readonly via: string;
}

/** A pod of the gateway, as far as the decision needs it. */
export interface GatewayPodFacts {
  /** The node it is bound to; undefined while it is not scheduled. */
  readonly nodeName: string | undefined;
  /** Whether it is being deleted (a drained node's gateway, on its way out). */
  readonly deleting: boolean;
  /** Its phase. @example "Running" */
  readonly phase: string | undefined;
  /** When it was created (ISO 8601), to prefer the newer of two. */
  readonly createdAt: string;
}

/**
 * The node the gateway runs on: that of its pod which is scheduled and not being deleted, a
 * Running one before any other, the newest first (a Recreate Deployment has one at a time; two
 * show only during a handover). Undefined when there is none.
 */
export function gatewayNodeOf(pods: readonly GatewayPodFacts[]): string | undefined {
  const candidates = pods
    .filter((pod) => pod.nodeName !== undefined && !pod.deleting)
    .sort(
      (x, y) => Number(y.phase === "Running") - Number(x.phase === "Running") || y.createdAt.localeCompare(x.createdAt),
    );
  return candidates[0]?.nodeName;
}

/** What {@link planNodeRoutes} decides from. */
export interface NodeRouteFacts {
  /** This node's name (the downward API's `spec.nodeName`). */
  readonly nodeName: string;
  /** The gateway's node and its InternalIP; undefined when no gateway pod is scheduled, or its node has no InternalIP. */
  readonly gateway: { readonly nodeName: string; readonly internalIp: string } | undefined;
  /**
   * The remote ranges of every TunnelEndpoint, as this cluster sees them (remapped where they
   * overlap), and the remote tunnel addresses (bare addresses: where an in-band peer's control plane answers).
   */
  readonly remoteCidrs: readonly string[];
  /** The routes the node holds now with {@link ROUTE_PROTO}. */
  readonly present: readonly NodeRoute[];
}

/** Routes to put in place (`ip route replace`) and destinations to remove. */
export interface NodeRoutePlan {
  readonly add: readonly NodeRoute[];
  readonly remove: readonly string[];
}

/** The canonical text of a network (`10.1.0.0/16`; a bare address is a /32), or undefined when it is none. */
export function canonical(text: string): string | undefined {
  try {
    return Cidr.parse(text.includes("/") ? text : `${text}/32`).toString();
  } catch {
    return undefined;
  }
}

/**
 * The routes this node should hold, against those it holds: every remote range via the gateway
 * node's InternalIP on a node other than the gateway's, nothing on the gateway's node or without a
 * gateway. A route via an old next hop (the gateway moved) is replaced, not removed and re-added.
 */
export function planNodeRoutes(facts: NodeRouteFacts): NodeRoutePlan {
  const { gateway } = facts;
  const wanted = new Map<string, string>();
  if (gateway && gateway.nodeName !== facts.nodeName) {
    for (const cidr of facts.remoteCidrs) {
      const destination = canonical(cidr);
      if (destination) wanted.set(destination, gateway.internalIp);
    }
  }
  const present = new Map(facts.present.map((route) => [canonical(route.destination) ?? route.destination, route.via]));
  const add = [...wanted]
    .filter(([destination, via]) => present.get(destination) !== via)
    .map(([destination, via]) => ({ destination, via }))
    .sort((x, y) => x.destination.localeCompare(y.destination));
  const remove = [...present.keys()].filter((destination) => !wanted.has(destination)).sort();
  return { add, remove };
}

/**
 * The routes of `ip -4 -o route show table main proto <ROUTE_PROTO>`: one a line, destination
 * first (a bare address for a /32), then `via <next hop>`. Lines without a next hop are not the
 * route agent's shape and are kept out, so they are never removed by mistake.
 */
export function parseNodeRoutes(listing: string): NodeRoute[] {
  return listing.split("\n").flatMap((line) => {
    const match = /^(\S+)\s.*\bvia (\S+)/.exec(line.trim());
    return match ? [{ destination: match[1]!, via: match[2]! }] : [];
  });
}
