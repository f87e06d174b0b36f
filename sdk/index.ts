/**
 * pulumi-liqo: Pulumi resources that peer Kubernetes clusters the way Liqo does.
 *
 * This is the package's entry point, the only module users import. The resources (`Cluster`,
 * `PeeringToken`, `Peering`, `Tunnel`) are exported from here as they are built.
 */
export {};
