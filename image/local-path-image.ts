/**
 * The local clusters' storage image (local-cluster/local-path-storage.ts): local-path-provisioner
 * as the toolchain built it (static) at `/usr/bin/local-path-provisioner`, as upstream's image has
 * it, over Debian's static busybox with a link per applet. The same image is the provisioner's
 * helper image: its helper pods run `/bin/sh /script/setup` (or `teardown`) to make and remove a
 * volume's directory, so they need a shell, `mkdir` and `rm`, which busybox gives in 2 MB. One
 * image for both means one archive more to import into each node, not two. Pure.
 */
import { busyboxEntries } from "./e2e-images.js";
import type { ImageSpec } from "./oci-archive.js";
import type { NamedImage } from "./agent-image.js";
import { projectImageReference } from "./reference.js";

/** Where the provisioner sits in the image, as in upstream's: the Deployment's command names it. */
export const LOCAL_PATH_PROVISIONER_PATH = "/usr/bin/local-path-provisioner";

/** What the image is made of: the machine's files. */
export interface LocalPathImageInputs {
  /** The static local-path-provisioner binary. */
  readonly provisioner: string;
  /** The static busybox binary and its applets as `busybox --list-full` prints them (`bin/sh`, `usr/bin/env`). */
  readonly busybox: { readonly path: string; readonly applets: readonly string[] };
}

/** The image spec, tagged `version`: busybox first (it changes least), then the provisioner. */
export function localPathImage(inputs: LocalPathImageInputs, version: string): NamedImage {
  const spec: ImageSpec = {
    reference: projectImageReference("local-path-provisioner", version),
    layers: [
      // No merged /usr here: each applet where busybox puts it (/bin/sh, /usr/bin/env…).
      busyboxEntries(inputs.busybox, []),
      [{ path: LOCAL_PATH_PROVISIONER_PATH, type: "file", content: inputs.provisioner, mode: 0o755 }],
    ],
    config: {
      env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
      cmd: ["local-path-provisioner"],
    },
  };
  return { spec, layerNames: ["busybox (static) and its applets", "local-path-provisioner (static)"] };
}
