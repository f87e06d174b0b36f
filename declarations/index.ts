/**
 * The package's resources, each declared once (vocabulary.ts says how), in the order the schema
 * and the reference list them, and the package's own facts. Re-exports and the list only.
 */
import { CLUSTER } from "./cluster.js";
import { NAMESPACE_OFFLOADING } from "./namespace-offloading.js";
import { PEERING } from "./peering.js";
import { PEERING_TOKEN } from "./peering-token.js";
import { TUNNEL } from "./tunnel.js";
import type { ResourceDeclaration } from "./vocabulary.js";

export { CLUSTER, NAMESPACE_OFFLOADING, PEERING, PEERING_TOKEN, TUNNEL };
export { TYPES } from "./types.js";
export type * from "./vocabulary.js";

/** Every resource of the package, in the schema's order. */
export const RESOURCES: readonly ResourceDeclaration[] = [
  CLUSTER,
  PEERING_TOKEN,
  PEERING,
  TUNNEL,
  NAMESPACE_OFFLOADING,
];

/** The package's name in type tokens (`liqo:index:Cluster`) and as a plugin (`pulumi-resource-liqo`). */
export const PACKAGE_NAME = "liqo";

/** A resource's type token as the provider plugin serves it. */
export const typeTokenOf = (declaration: Pick<ResourceDeclaration, "name">): string =>
  `${PACKAGE_NAME}:index:${declaration.name}`;
