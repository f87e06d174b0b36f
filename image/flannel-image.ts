/**
 * Flannel's image, for the local clusters' `--cni flannel` (local-cluster/flannel.ts): flanneld as
 * the toolchain built it (static) and the host's iptables with the libraries it loads, which
 * flanneld runs for its masquerade and forward rules. As upstream's image, it runs as root.
 */
import { mergedUsrLinks, sharedLibraries } from "./host-files.js";
import { forgeSystemEntries, iptablesEntries, libraryEntries, type NamedImage } from "./agent-image.js";
import { projectImageReference } from "./reference.js";

/** Where flanneld sits in the image, as in upstream's: the DaemonSet's command. */
export const FLANNELD_PATH = "/opt/bin/flanneld";

/** Flannel's image spec, tagged `version`, from the static `flanneld` binary. */
export async function flannelImage(flanneld: string, version: string): Promise<NamedImage> {
  const iptables = await iptablesEntries();
  const layers = [
    {
      name: "libraries (+ /etc/passwd, /etc/group, /tmp)",
      entries: [
        ...forgeSystemEntries(await mergedUsrLinks()),
        ...libraryEntries(await sharedLibraries(iptables.files)),
      ],
    },
    { name: "iptables + xtables modules", entries: iptables.entries },
    {
      name: "flanneld (static)",
      entries: [{ path: FLANNELD_PATH, type: "file" as const, content: flanneld, mode: 0o755 }],
    },
  ];
  return {
    spec: {
      reference: projectImageReference("flannel", version),
      layers: layers.map((layer) => layer.entries),
      config: { entrypoint: [FLANNELD_PATH], env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"] },
    },
    layerNames: layers.map((layer) => layer.name),
  };
}
