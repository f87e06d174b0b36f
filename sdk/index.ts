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
