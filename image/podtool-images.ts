/**
 * The test pods' images, both from the one static podtool binary (toolchain/podtool/main.go):
 * podtool (`serve` by default; `tcp` and `ping` as commands) and pause (containerd's sandbox
 * image: `podtool pause` sleeps until SIGTERM). One file each, nothing else: the binary is static.
 */
import type { ImageSpec } from "./oci-archive.js";
import { projectImageReference } from "./reference.js";

/** The podtool image: entrypoint /podtool, cmd `serve`. Root, so that `podtool ping` keeps CAP_NET_RAW (a non-root user loses it). */
export function podtoolImage(binary: string, version: string): ImageSpec {
  return {
    reference: projectImageReference("podtool", version),
    layers: [[{ path: "/podtool", type: "file", content: binary, mode: 0o755 }]],
    config: { entrypoint: ["/podtool"], cmd: ["serve"] },
  };
}

/** The pause image: the same binary as podtool, entrypoint `/podtool pause`, as the unprivileged user 65535 like upstream's pause. */
export function pauseImage(binary: string, version: string): ImageSpec {
  return {
    reference: projectImageReference("pause", version),
    layers: [[{ path: "/podtool", type: "file", content: binary, mode: 0o755 }]],
    config: { entrypoint: ["/podtool", "pause"], user: "65535:65535" },
  };
}
