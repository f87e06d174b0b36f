/**
 * The short look a delete of a resource that lives in one cluster (a `Cluster`, a provider's
 * `PeeringToken`) takes before touching it: one probe (../kube/client.ts `probeApiServer`), so that a
 * cluster gone or answering nothing fails the delete at once, or, with `force`, lets the resource
 * leave the stack with what stays listed, never a wait out of its deadline.
 */
import type * as k8s from "@kubernetes/client-node";
import { probeApiServer, serverOf } from "../kube/client.js";
import { clusterUnreachableError, type ForgettableResource } from "./unreachable.js";

/**
 * Looks at the cluster of `kc` for the delete of `resource` at step `step`: resolves undefined when
 * it answers (the delete goes on), throws {@link clusterUnreachableError} when it does not and
 * `force` is off, and with `force` resolves where it was tried (`API server https://…`), for the
 * report of what stays there.
 */
export async function lookBeforeDelete(
  kc: k8s.KubeConfig,
  step: string,
  resource: ForgettableResource,
  force: boolean,
): Promise<string | undefined> {
  const cause = await probeApiServer(kc);
  if (!cause) return undefined;
  const endpoint = `API server ${serverOf(kc)}`;
  if (!force) throw clusterUnreachableError(step, resource, endpoint, cause);
  return endpoint;
}
