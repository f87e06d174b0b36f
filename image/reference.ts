/** How the project's images are named: one place, for the image builder and the local clusters. */

/** The reference of the project's image `name` at `version`: `pulumi-liqo.local/<name>:<version>`. */
export const projectImageReference = (
  name: "agent" | "podtool" | "pause" | "coredns" | "metallb-controller" | "metallb-speaker" | "flannel",
  version: string,
): string => `pulumi-liqo.local/${name}:${version}`;
