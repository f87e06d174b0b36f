/**
 * The agent image: the toolchain's Node 24, the agent bundled into one file with its npm
 * dependencies, wireguard-go, and the host tools the gateway runs (ip, wg, nft, iptables with the
 * host's backend, sysctl, ping), each with the shared libraries `ldd` lists. No shell, no
 * package manager: what the roles run and nothing else. It runs as 65532:65532 (the control
 * agent's user); the gateway role's pod overrides that with root (TUN and iptables need it).
 *
 * Layers, from least to most often changed, so a new agent version pushes only its last layer:
 * system files and libraries, node, tools, the agent bundle.
 */
import { lstat, readdir, readlink, realpath } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { findOnPath, hostIptables, mergedUsrLinks, sharedLibraries, type HostFile } from "./host-files.js";
import type { ImageEntry, ImageSpec } from "./oci-archive.js";

/** The non-root user (and group) the agent runs as, distroless' "nonroot". */
export const NONROOT = 65532;

/** Where the bundle and node sit in the image; the manifests rely on the entrypoint. */
export const AGENT_PATHS = {
  node: "/usr/local/bin/node",
  bundle: "/app/agent.js",
  wireguardGo: "/usr/local/bin/wireguard-go",
};

/**
 * The entrypoint: manifests pass only `args` (the role and its flags). A 1 MB semi-space keeps
 * the young generation small: the agent allocates little and memory per pod counts more here.
 */
export const AGENT_ENTRYPOINT = [AGENT_PATHS.node, "--max-semi-space-size=1", AGENT_PATHS.bundle];

/** Host files the agent image is made from. */
export interface AgentImageInputs {
  /** The image's reference (core/cluster/agent-image.ts: its tag names the version and the bundle). */
  readonly reference: string;
  /** The node executable to copy (the toolchain's, stripped by the caller). */
  readonly node: string;
  /** The agent bundle (esbuild output). */
  readonly bundle: string;
  /** The wireguard-go executable (static). */
  readonly wireguardGo: string;
}

/** A layer with the name the build report gives it. */
export interface NamedLayer {
  /** What takes the room in it, for the size report. */
  readonly name: string;
  /** Its entries. */
  readonly entries: readonly ImageEntry[];
}

/** An image spec with its layers named. */
export interface NamedImage {
  /** The spec writeImageArchive takes. */
  readonly spec: ImageSpec;
  /** Its layers' names, in order. */
  readonly layerNames: readonly string[];
}

/** /etc/passwd and /etc/group with root and nonroot, the directories a process expects, and the host's merged-/usr `links`. */
export function forgeSystemEntries(links: readonly { path: string; target: string }[]): ImageEntry[] {
  const passwd = `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${NONROOT}:${NONROOT}:nonroot:/home/nonroot:/sbin/nologin\n`;
  return [
    { path: "/etc/passwd", type: "file", content: Buffer.from(passwd) },
    { path: "/etc/group", type: "file", content: Buffer.from(`root:x:0:\nnonroot:x:${NONROOT}:\n`) },
    { path: "/tmp", type: "dir", mode: 0o1777 },
    { path: "/root", type: "dir", mode: 0o700 },
    { path: "/home/nonroot", type: "dir", mode: 0o700, uid: NONROOT, gid: NONROOT },
    // wireguard-go makes its control sockets under /var/run/wireguard.
    { path: "/run", type: "dir" },
    { path: "/var/run", type: "symlink", target: "../run" },
    ...links.map((link): ImageEntry => ({ path: link.path, type: "symlink", target: link.target })),
  ];
}

/**
 * The host's iptables as an image carries it: the multi-call binary (which picks iptables,
 * iptables-save or iptables-restore from its argv[0]) with its three names as symlinks, and the
 * match and target modules it loads at run time. `files` are the host files whose shared
 * libraries the image needs (the binary and the modules).
 */
export async function iptablesEntries(): Promise<{ entries: ImageEntry[]; files: string[] }> {
  const iptables = await hostIptables();
  const multiName = iptables.multi.split("/").pop()!;
  const libxtables = (await sharedLibraries([iptables.multi])).find((lib) => /\/libxtables\.so\.\d+$/.test(lib.path));
  if (!libxtables) throw new Error("image: iptables does not load libxtables (ldd lists no libxtables.so)");
  const modules = await xtablesModules(libxtables.path);
  const entries: ImageEntry[] = [
    { path: `/usr/sbin/${multiName}`, type: "file", content: iptables.multi },
    ...["iptables", "iptables-save", "iptables-restore"].map((name): ImageEntry => ({
      path: `/usr/sbin/${name}`,
      type: "symlink",
      target: multiName,
    })),
    ...modules,
  ];
  return { entries, files: entries.filter((e) => e.type === "file").map((e) => e.content as string) };
}

/** The host tools of the gateway, each with where it goes in the image, and the host files they load libraries for. */
async function gatewayTools(): Promise<{ entries: ImageEntry[]; files: string[] }> {
  const tool = (name: string, imagePath: string): ImageEntry => ({
    path: imagePath,
    type: "file",
    content: findOnPath(name, "install Debian's iproute2, wireguard-tools, nftables, procps and iputils-ping"),
  });
  const iptables = await iptablesEntries();
  const tools = [
    tool("ip", "/usr/sbin/ip"),
    tool("wg", "/usr/bin/wg"),
    tool("nft", "/usr/sbin/nft"),
    tool("sysctl", "/usr/sbin/sysctl"),
    tool("ping", "/usr/bin/ping"),
  ];
  return {
    entries: [...tools, ...iptables.entries],
    files: [...tools.map((e) => e.content as string), ...iptables.files],
  };
}

/**
 * iptables loads its match and target modules (libxt_*.so) at run time from the xtables
 * directory beside libxtables, so ldd of the binary does not list them: the whole directory
 * goes in, symlinks kept as symlinks.
 */
async function xtablesModules(libxtables: string): Promise<ImageEntry[]> {
  const dir = await realpath(join(dirname(libxtables), "xtables"));
  const entries: ImageEntry[] = [];
  for (const name of (await readdir(dir)).sort()) {
    const path = join(dir, name);
    const stat = await lstat(path);
    if (stat.isSymbolicLink()) entries.push({ path, type: "symlink", target: await readlink(path) });
    else if (stat.isFile()) entries.push({ path, type: "file", content: path, mode: 0o644 });
  }
  return entries;
}

/**
 * Each library as the host lays it out: the real file under its real name (libbpf.so.1.1.2: `ip -V`
 * reads libbpf's version from the mapped file's name) in the directory ldd names, and the name ldd
 * prints as a symlink to it.
 */
export function libraryEntries(libraries: readonly HostFile[]): ImageEntry[] {
  const entries = new Map<string, ImageEntry>();
  for (const lib of libraries) {
    const real = basename(lib.source);
    const file = join(dirname(lib.path), real);
    entries.set(file, { path: file, type: "file", content: lib.source });
    if (file !== lib.path) entries.set(lib.path, { path: lib.path, type: "symlink", target: real });
  }
  return [...entries.values()];
}

/** The agent image's spec, with its layers named for the size report. */
export async function agentImage(inputs: AgentImageInputs): Promise<NamedImage> {
  const tools = await gatewayTools();
  const libraries = await sharedLibraries([inputs.node, inputs.wireguardGo, ...tools.files]);
  const layers: NamedLayer[] = [
    {
      name: "libraries (+ /etc/passwd, /etc/group, /tmp)",
      entries: [...forgeSystemEntries(await mergedUsrLinks()), ...libraryEntries(libraries)],
    },
    { name: "node (stripped)", entries: [{ path: AGENT_PATHS.node, type: "file", content: inputs.node, mode: 0o755 }] },
    {
      name: "tools (wireguard-go, ip, wg, nft, iptables + xtables modules, sysctl, ping)",
      entries: [
        { path: AGENT_PATHS.wireguardGo, type: "file", content: inputs.wireguardGo, mode: 0o755 },
        ...tools.entries,
      ],
    },
    {
      name: "agent bundle (/app/agent.js)",
      entries: [{ path: AGENT_PATHS.bundle, type: "file", content: inputs.bundle, mode: 0o644 }],
    },
  ];
  return {
    spec: {
      reference: inputs.reference,
      layers: layers.map((layer) => layer.entries),
      config: {
        entrypoint: AGENT_ENTRYPOINT,
        env: ["PATH=/usr/local/bin:/usr/sbin:/usr/bin", "NODE_ENV=production"],
        user: `${NONROOT}:${NONROOT}`,
        workingDir: "/app",
      },
    },
    layerNames: layers.map((layer) => layer.name),
  };
}
