/** What the project reads of Nodes, one way everywhere. */
import type * as k8s from "@kubernetes/client-node";

/**
 * The node's InternalIP: where the API server calls its kubelet, and what pods on it report as
 * their host's address. Undefined for no node, or one that has not reported it yet.
 */
export function internalIpOf(node: k8s.V1Node | undefined): string | undefined {
  return node?.status?.addresses?.find((a) => a.type === "InternalIP")?.address;
}
