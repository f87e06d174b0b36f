/**
 * What the import tests' pure parts read of a consumer `b` peering with a provider `a`: their
 * cluster IDs, b's API server and identity, and b's record of the peering. One place, so that the
 * Peering's, the Tunnel's and the NamespaceOffloading's imports are tested against the same reads.
 */
import type { OutgoingPeering } from "../../core/api/index.js";
import type { ClusterIdentity } from "../../core/cluster/install.js";

/** The consumer's cluster ID. */
export const B = "0123456789abcdef";
/** The provider's cluster ID. */
export const A = "fedcba9876543210";
/** The consumer's API server: the endpoint the imports read. */
export const CONSUMER_SERVER = "https://172.29.2.10:6443";

/** The consumer's identity, as its install records it. */
export const CONSUMER: ClusterIdentity = {
  clusterId: B,
  clusterName: "b",
  apiServerUrl: CONSUMER_SERVER,
  apiServerCaPem: "ca",
};

/** The consumer's record of its out-of-band peering with the provider. */
export const OUTGOING: OutgoingPeering = {
  apiVersion: "liqo.pulumi.io/v1alpha1",
  kind: "OutgoingPeering",
  metadata: { name: `to-${A}` },
  spec: {
    providerClusterId: A,
    providerClusterName: "a",
    identitySecret: `identity-${A}`,
    tenantNamespace: `tenant-${B}`,
    requestName: `from-${B}`,
    virtualNodeName: "liqo-a",
    auth: { url: "https://172.29.1.10:8443", caPem: "auth-ca" },
  },
};
