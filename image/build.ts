/**
 * `npm run image`: builds the agent, podtool, pause, coredns, metrics-server, local-path-provisioner,
 * MetalLB and Flannel images into OCI archives, and says what each weighs and what takes the room.
 * Inputs are the toolchain's files and this machine's tools; the same inputs give the same
 * archives, byte for byte.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { AGENT_BUNDLE, readAgentBuild } from "./agent-bundle.js";
import { agentImage, type NamedImage } from "./agent-image.js";
import { findOnPath } from "./host-files.js";
import { writeImageArchive, type ImageArchive } from "./oci-archive.js";
import { flannelImage } from "./flannel-image.js";
import { localPathImage } from "./local-path-image.js";
import { corednsImage, metallbImage, metricsServerImage, pauseImage, podtoolImage } from "./podtool-images.js";

const run = promisify(execFile);

/** The images `npm run image` builds. */
export const IMAGE_NAMES = [
  "agent",
  "podtool",
  "pause",
  "coredns",
  "metrics-server",
  "local-path-provisioner",
  "metallb-controller",
  "metallb-speaker",
  "flannel",
] as const;

/** One of IMAGE_NAMES. */
export type ImageName = (typeof IMAGE_NAMES)[number];

/** What to build and where. */
export interface BuildOptions {
  /** Directory the archives go to (`<name>.oci.tar`). */
  readonly outDir: string;
  /** Which images. @default all of IMAGE_NAMES */
  readonly only?: readonly ImageName[];
  /** The podtool binary. @default $LIQO_PODTOOL, else `podtool` on PATH (the toolchain puts it there) */
  readonly podtool?: string;
}

/** One archive written, with its layers named. */
export interface BuiltImage extends ImageArchive {
  /** Which image. */
  readonly name: ImageName;
  /** The archive's path. */
  readonly file: string;
  /** Names of the layers (what takes the room in each), in the order of `layers`. */
  readonly layerNames: readonly string[];
  /** Notes about the inputs (for example node left unstripped). */
  readonly notes: readonly string[];
}

/** The repository root (this package's, wherever the build runs from: dist or sources under Jest). */
export const REPO_ROOT = dirname(require.resolve("pulumi-liqo/package.json"));

/** The package version: every image's tag. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;
}

/**
 * A stripped copy of this process's node (the toolchain's Node 24): the npm package ships it
 * with debug info, 18 MB that no pod needs. Without `strip` (binutils) the copy is the original.
 */
async function nodeBinary(work: string, notes: string[]): Promise<string> {
  if (process.versions.node.split(".")[0] !== "24") {
    throw new Error(
      `image: run with the toolchain's Node 24 (. scripts/env.sh), not ${process.version} (${process.execPath})`,
    );
  }
  const node = await realpath(process.execPath);
  let strip: string;
  try {
    strip = findOnPath("strip", "binutils");
  } catch {
    notes.push("node not stripped: no strip on PATH (install binutils for an 18 MB smaller image)");
    return node;
  }
  const out = join(work, "node");
  await run(strip, ["--strip-all", "-o", out, node]);
  return out;
}

/**
 * The agent image, from the bundle `npm run build` wrote (image/agent-bundle.ts), tagged with the
 * build it names: the reference the package built with it deploys.
 */
async function agentSpec(work: string, notes: string[]): Promise<NamedImage> {
  if (!existsSync(AGENT_BUNDLE)) throw new Error(`image: no agent bundle at ${AGENT_BUNDLE}: run npm run build first`);
  const wireguardGo = await realpath(findOnPath("wireguard-go", "the toolchain builds it: . scripts/env.sh"));
  const node = await nodeBinary(work, notes);
  return agentImage({ reference: readAgentBuild().image, node, bundle: AGENT_BUNDLE, wireguardGo });
}

/**
 * The directory the toolchain built `what` into, named by environment variable `variable` (which
 * scripts/env.sh sets), checked to hold `probe`; throws naming both and `command`, which builds it.
 */
export function toolchainHome(what: string, variable: string, probe: string, command = "scripts/toolchain.sh"): string {
  const home = process.env[variable];
  if (!home || !existsSync(join(home, probe)))
    throw new Error(
      `no ${what} ${home ? `at ${home}` : `(${variable} is not set)`}: the toolchain builds it (${command}, then . scripts/env.sh)`,
    );
  return home;
}

/**
 * Where the toolchain built MetalLB (scripts/toolchain.sh `build_metallb`): `bin/controller`,
 * `bin/speaker` and the module's `config/`. Found by $LIQO_METALLB_HOME, not on PATH, where
 * commands named `controller` and `speaker` would mislead.
 */
export const metallbHome = (): string => toolchainHome("MetalLB", "LIQO_METALLB_HOME", join("bin", "speaker"));

/**
 * Where the toolchain built Flannel (scripts/toolchain.sh `build_flannel`): `bin/flanneld` and its
 * CNI plugin in `cni/`. Found by $LIQO_FLANNEL_HOME.
 */
export const flannelHome = (): string => toolchainHome("Flannel", "LIQO_FLANNEL_HOME", join("bin", "flanneld"));

/**
 * Where the toolchain built local-path-provisioner (scripts/toolchain.sh `build_local_path_provisioner`):
 * `bin/local-path-provisioner`. Found by $LIQO_LOCAL_PATH_PROVISIONER_HOME.
 */
export const localPathProvisionerHome = (): string =>
  toolchainHome("local-path-provisioner", "LIQO_LOCAL_PATH_PROVISIONER_HOME", join("bin", "local-path-provisioner"));

/**
 * Where the toolchain unpacked Debian's static busybox (scripts/toolchain.sh `build_busybox`):
 * `root/bin/busybox`. Found by $LIQO_BUSYBOX_HOME, not on PATH, where it would shadow the machine's.
 */
export const busyboxHome = (): string => toolchainHome("busybox", "LIQO_BUSYBOX_HOME", join("root", "bin", "busybox"));

/** The storage image's inputs: the provisioner, and busybox with the applets it lists of itself. */
async function localPathSpec(version: string): Promise<NamedImage> {
  const busybox = join(busyboxHome(), "root", "bin", "busybox");
  const { stdout } = await run(busybox, ["--list-full"]);
  return localPathImage(
    {
      provisioner: join(localPathProvisionerHome(), "bin", "local-path-provisioner"),
      busybox: { path: busybox, applets: stdout.split("\n").filter(Boolean) },
    },
    version,
  );
}

function podtoolBinary(options: BuildOptions): string {
  return (
    options.podtool ?? process.env.LIQO_PODTOOL ?? findOnPath("podtool", "the toolchain builds it; or set LIQO_PODTOOL")
  );
}

/** What image `name` is made of: its spec and its layers' names. */
async function imageSpec(name: ImageName, work: string, notes: string[], options: BuildOptions): Promise<NamedImage> {
  const version = packageVersion();
  switch (name) {
    case "agent":
      return agentSpec(work, notes);
    case "podtool":
    case "pause":
      return {
        spec: (name === "podtool" ? podtoolImage : pauseImage)(podtoolBinary(options), version),
        layerNames: ["podtool (static)"],
      };
    case "coredns":
      return {
        spec: corednsImage(findOnPath("coredns", "the toolchain builds it: . scripts/env.sh"), version),
        layerNames: ["coredns (static)"],
      };
    case "metrics-server":
      return {
        spec: metricsServerImage(findOnPath("metrics-server", "the toolchain builds it: . scripts/env.sh"), version),
        layerNames: ["metrics-server (static)"],
      };
    case "local-path-provisioner":
      return localPathSpec(version);
    case "flannel":
      return flannelImage(join(flannelHome(), "bin", "flanneld"), version);
    case "metallb-controller":
    case "metallb-speaker": {
      const component = name === "metallb-controller" ? "controller" : "speaker";
      return {
        spec: metallbImage(component, join(metallbHome(), "bin", component), version),
        layerNames: [`${name} (static)`],
      };
    }
  }
}

/** Builds the images `options` ask for into `options.outDir`, one after the other. */
export async function buildImages(options: BuildOptions): Promise<BuiltImage[]> {
  await mkdir(options.outDir, { recursive: true });
  const work = await mkdtemp(join(tmpdir(), "liqo-image-build-"));
  try {
    const built: BuiltImage[] = [];
    for (const name of options.only ?? IMAGE_NAMES) {
      const notes: string[] = [];
      const image = await imageSpec(name, work, notes, options);
      const file = join(options.outDir, `${name}.oci.tar`);
      const archive = await writeImageArchive(file, image.spec);
      built.push({ ...archive, name, file, layerNames: image.layerNames, notes });
    }
    return built;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

/** The report `npm run image` prints: per image its reference, digest, sizes and its layers, biggest first. */
export function formatReport(images: readonly BuiltImage[]): string {
  const lines: string[] = [];
  for (const image of images) {
    lines.push(
      `${image.name}: ${image.reference}`,
      `  file         ${image.file}`,
      `  digest       ${image.digest}`,
      `  archive      ${mb(image.bytes)} (uncompressed layers ${mb(image.uncompressedBytes)})`,
    );
    const layers = image.layers.map((layer, i) => ({ ...layer, name: image.layerNames[i] ?? `layer ${i + 1}` }));
    if (layers.length > 1) {
      lines.push("  biggest      (compressed / uncompressed)");
      for (const layer of [...layers].sort((a, b) => b.size - a.size)) {
        lines.push(`    ${mb(layer.size).padStart(9)} / ${mb(layer.uncompressedSize).padStart(9)}  ${layer.name}`);
      }
    }
    for (const note of image.notes) lines.push(`  note         ${note}`);
  }
  return lines.join("\n");
}
