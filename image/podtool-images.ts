/**
 * The local clusters' own images besides the agent's, each one static binary and nothing else:
 * podtool (test pods; `serve` by default, `tcp` and `ping` as commands) and pause (containerd's
 * sandbox image: `podtool pause` sleeps until SIGTERM), both from toolchain/podtool/main.go,
 * coredns (cluster DNS, toolchain/coredns/main.go), and MetalLB's controller and speaker (the load
 * balancer, built by the toolchain from MetalLB's module).
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

/**
 * The local clusters' DNS image: the toolchain's static coredns, entrypoint /coredns. Root with
 * only NET_BIND_SERVICE (its pod says so), to bind port 53: Kubernetes gives an added capability to
 * a non-root process only as an ambient one, which it does not set.
 */
export function corednsImage(binary: string, version: string): ImageSpec {
  return {
    reference: projectImageReference("coredns", version),
    layers: [[{ path: "/coredns", type: "file", content: binary, mode: 0o755 }]],
    config: { entrypoint: ["/coredns"] },
  };
}

/**
 * The local clusters' metrics-server image: the toolchain's static metrics-server, entrypoint
 * /metrics-server, like upstream's (`registry.k8s.io/metrics-server/metrics-server`, on distroless;
 * its pod runs it as 1000, as upstream's manifest does).
 */
export function metricsServerImage(binary: string, version: string): ImageSpec {
  return {
    reference: projectImageReference("metrics-server", version),
    layers: [[{ path: "/metrics-server", type: "file", content: binary, mode: 0o755 }]],
    config: { entrypoint: ["/metrics-server"] },
  };
}

/** MetalLB's two commands, each in an image of its own as upstream ships them. */
export const METALLB_COMPONENTS = ["controller", "speaker"] as const;

/**
 * A MetalLB image: the toolchain's static `component` binary, entrypoint /<component>, like
 * upstream's (`quay.io/metallb/<component>`, on distroless). The user is the pod's to say: the
 * controller runs as 65534, the speaker as root with only NET_RAW, as MetalLB's manifests run them.
 */
export function metallbImage(
  component: (typeof METALLB_COMPONENTS)[number],
  binary: string,
  version: string,
): ImageSpec {
  return {
    reference: projectImageReference(`metallb-${component}`, version),
    layers: [[{ path: `/${component}`, type: "file", content: binary, mode: 0o755 }]],
    config: { entrypoint: [`/${component}`] },
  };
}
