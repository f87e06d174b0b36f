/**
 * The images every worker node gets at `up`: the pause image (containerd's sandbox image), the
 * podtool image (test pods), the coredns image (cluster DNS), the metrics-server and
 * local-path-provisioner images (resource metrics, storage), MetalLB's two (the load balancer, when
 * the lab has it) and the agent's, as `npm run image` writes them to `dist/image/`.
 * Nodes have no registry to pull from: each is imported into each node's containerd.
 */
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { withFileLock } from "../host/file-lock.js";
import { AGENT_BUNDLE, readAgentBuild } from "../image/agent-bundle.js";
import {
  buildImages,
  busyboxHome,
  flannelHome,
  localPathProvisionerHome,
  metallbHome,
  packageVersion,
  REPO_ROOT,
  type ImageName,
} from "../image/build.js";
import { projectImageReference } from "../image/reference.js";
import { commandPath } from "./commands.js";
import type { MetallbImages } from "./load-balancer.js";
import type { LoadBalancerKind } from "./plan.js";

/** The images a node is given, by reference, and the archive files to import. */
export interface NodeImages {
  /** The pause image's reference (containerd's sandbox image). */
  readonly pause: string;
  /** The podtool image's reference. */
  readonly podtool: string;
  /** The coredns image's reference (cluster DNS). */
  readonly coredns: string;
  /** The metrics-server image's reference (resource metrics). */
  readonly metricsServer: string;
  /** The local-path-provisioner image's reference (storage; also its helper pods' image). */
  readonly localPathProvisioner: string;
  /** The agent image's reference. */
  readonly agent: string;
  /** MetalLB's controller and speaker images. */
  readonly metallb: MetallbImages;
  /** Flannel's image (flanneld). */
  readonly flannel: string;
  /** The archives to import into every node, those that exist. */
  readonly archives: readonly string[];
}

/**
 * The reference of the project's image `name`: `pulumi-liqo.local/<name>:<package version>`, and
 * for the agent the one this build deploys (its tag names the bundle too).
 */
export function imageReference(name: ImageName): string {
  return name === "agent" ? readAgentBuild().image : projectImageReference(name, packageVersion());
}

/** Where `npm run image` writes image `name`'s archive. */
export const imageArchive = (name: ImageName): string => join(REPO_ROOT, "dist", "image", `${name}.oci.tar`);

const METALLB_IMAGES = ["metallb-controller", "metallb-speaker"] as const;

/**
 * What makes an archive out of date: for pause and podtool, the podtool binary; for coredns,
 * metrics-server, MetalLB's and Flannel's, their binary; for local-path-provisioner's, its binary or
 * busybox, whichever is newer; for the agent, its bundle (`npm run build` rewrites it only when it changes).
 */
function inputsChangedAt(name: ImageName): number {
  if (name === "coredns" || name === "metrics-server") return statSync(commandPath(name)).mtimeMs;
  if (name === "local-path-provisioner")
    return Math.max(
      statSync(join(localPathProvisionerHome(), "bin", "local-path-provisioner")).mtimeMs,
      statSync(join(busyboxHome(), "root", "bin", "busybox")).mtimeMs,
    );
  if (name === "flannel") return statSync(join(flannelHome(), "bin", "flanneld")).mtimeMs;
  if (name === "metallb-controller" || name === "metallb-speaker")
    return statSync(join(metallbHome(), "bin", name.slice("metallb-".length))).mtimeMs;
  if (name !== "agent") return statSync(commandPath("podtool")).mtimeMs;
  if (!existsSync(AGENT_BUNDLE)) throw new Error(`images: no agent bundle at ${AGENT_BUNDLE}: run npm run build first`);
  return statSync(AGENT_BUNDLE).mtimeMs;
}

const stale = (name: ImageName): boolean =>
  !existsSync(imageArchive(name)) || statSync(imageArchive(name)).mtimeMs < inputsChangedAt(name);

/**
 * The images for the nodes, and the archives to import. The pause, podtool, coredns, metrics-server and
 * local-path-provisioner archives, and
 * MetalLB's when `loadBalancer` is `metallb`, and Flannel's when a cluster runs it, are (re)built when missing or older than their binary
 * (one static binary each: quick). The agent's is built too, when older than its sources, if `agent`
 * says the lab needs it (its agents run as pods); otherwise it is imported when `npm run image` has
 * built it. One build at a time on this machine: labs come up side by side, and they share
 * `dist/image/`.
 */
export async function nodeImages(
  log: (line: string) => void,
  agent: "needed" | "if-built",
  loadBalancer: LoadBalancerKind,
  flannel: boolean,
): Promise<NodeImages> {
  const metallb = loadBalancer === "metallb" ? METALLB_IMAGES : [];
  const cni = flannel ? (["flannel"] as const) : [];
  const lock = join(tmpdir(), `pulumi-liqo-images-${REPO_ROOT.replaceAll("/", "_")}.lock`);
  await withFileLock(lock, async () => {
    const names = (
      [
        "pause",
        "podtool",
        "coredns",
        "metrics-server",
        "local-path-provisioner",
        ...metallb,
        ...cni,
        ...(agent === "needed" ? ["agent" as const] : []),
      ] as const
    ).filter(stale);
    if (names.length === 0) return;
    const started = Date.now();
    const built = await buildImages({ outDir: dirname(imageArchive("agent")), only: names });
    for (const image of built)
      log(`[images] built ${image.file}: ${image.reference} ${image.digest} (${image.bytes} bytes)`);
    log(`[images] ${names.join(", ")} built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });
  const withAgent = existsSync(imageArchive("agent"));
  if (!withAgent)
    log(`[images] no agent image at ${imageArchive("agent")} (npm run image builds it); nodes start without it`);
  return {
    pause: imageReference("pause"),
    podtool: imageReference("podtool"),
    coredns: imageReference("coredns"),
    metricsServer: imageReference("metrics-server"),
    localPathProvisioner: imageReference("local-path-provisioner"),
    agent: imageReference("agent"),
    metallb: { controller: imageReference("metallb-controller"), speaker: imageReference("metallb-speaker") },
    flannel: imageReference("flannel"),
    archives: [
      imageArchive("pause"),
      imageArchive("podtool"),
      imageArchive("coredns"),
      imageArchive("metrics-server"),
      imageArchive("local-path-provisioner"),
      ...metallb.map(imageArchive),
      ...cni.map(imageArchive),
      ...(withAgent ? [imageArchive("agent")] : []),
    ],
  };
}
