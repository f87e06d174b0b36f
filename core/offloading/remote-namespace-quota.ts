/**
 * What a consumer may store in a remote namespace (a namespace a provider's agent made for one of
 * its offloaded namespaces): a ResourceQuota of object counts, enforced by the provider's API server
 * itself. The consumer's identity may keep there the ConfigMaps and Secrets its pods read
 * (reflected), and its pods' tokens: at most {@link REMOTE_NAMESPACE_OBJECT_LIMITS} of each. A count bounds how many
 * objects; the API server bounds each one's size (about 1.5 MiB). The agent applies it with
 * `ensureObjectQuota` (core/kube/quota.ts) before the consumer may write there.
 */
import type * as k8s from "@kubernetes/client-node";
import { MANAGED_BY, MANAGED_BY_LABEL, REMOTE_CLUSTER_LABEL } from "../api/names.js";
import { CONSUMER_QUOTA } from "../authentication/tenant-quota.js";
import { forgeObjectCountQuota } from "../kube/quota.js";

/**
 * How many ConfigMaps and Secrets a consumer may keep in each of its remote namespaces: 128 of
 * those its pods read, and for Secrets also one token per pod (consumer-tokens.ts) of as many as
 * its tenant may ask for (1024 OffloadedPods).
 */
export const REMOTE_NAMESPACE_OBJECT_LIMITS: Readonly<Record<string, number>> = {
  configmaps: 128,
  secrets: 128 + 1024,
};

/** The quota of remote namespace `namespace`, made for consumer `consumerClusterId`. */
export function forgeRemoteNamespaceQuota(namespace: string, consumerClusterId: string): k8s.V1ResourceQuota {
  return forgeObjectCountQuota({
    namespace,
    name: CONSUMER_QUOTA,
    labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: consumerClusterId },
    group: "",
    limits: REMOTE_NAMESPACE_OBJECT_LIMITS,
  });
}
