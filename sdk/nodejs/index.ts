/**
 * pulumi-liqo: Pulumi resources that peer Kubernetes clusters the way Liqo does. The only module
 * users import. Re-exports only.
 */
export * from "./cluster.js";
export * from "./peering.js";
export * from "./peering-token.js";
export * from "./tunnel.js";
export * from "./tunnel-types.js";
export * from "./namespace-offloading.js";
export type * from "./generated/types.js";
export type { ClusterArgs } from "./generated/cluster.js";
export type { PeeringTokenArgs } from "./generated/peering-token.js";
export type { PeeringArgs } from "./generated/peering.js";
export type { TunnelArgs } from "./generated/tunnel.js";
export type { NamespaceOffloadingArgs } from "./generated/namespace-offloading.js";
