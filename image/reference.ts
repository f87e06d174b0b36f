/** How the project's images are named: one place, for the image builder and the local clusters. */

/**
 * The reference of the project's image `name` at `version`: `pulumi-liqo.local/<name>:<version>`.
 * Not the agent's, whose tag names its bundle too (core/cluster/agent-image.ts).
 */
export const projectImageReference = (
  name:
    | "podtool"
    | "pause"
    | "coredns"
    | "metrics-server"
    | "local-path-provisioner"
    | "metallb-controller"
    | "metallb-speaker"
    | "flannel",
  version: string,
): string => `pulumi-liqo.local/${name}:${version}`;

/**
 * The reference of the agent image of package `version` whose bundle's build id is `build`:
 * `pulumi-liqo.local/agent:<version>-<build>`, so that two builds of different code never share one.
 */
export const agentImageReference = (version: string, build: string): string =>
  `pulumi-liqo.local/agent:${version}-${build}`;
