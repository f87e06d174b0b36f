/**
 * The images upstream's conformance suite runs for the tests `npm run conformance` selects, made
 * from this machine's files under the exact references the suite names (`e2e.test --list-images`),
 * so that its `IfNotPresent` pulls find them in the nodes and never reach a registry:
 *
 * - agnhost (the suite's server and client): the toolchain's agnhost built from the pinned
 *   `k8s.io/kubernetes` module, entrypoint `/agnhost`, cmd `pause`, as upstream's; with the tools
 *   the tests run in it through `sh -c` or `kubectl exec` (Debian's bash as sh, as upstream's
 *   agnhost has it; busybox's applets for wget, seq, sleep…; OpenBSD's nc, curl and dig from Debian,
 *   each with the libraries `ldd` lists) and `/coredns` for the DNS test that serves a Corefile of its own;
 * - the previous agnhost (2.55): the same files under that name; the one test that names it only
 *   updates a pod from it to the current one, and the StatefulSet specs run it;
 * - nginx: the same files, agnhost's test-webserver as the entrypoint, which serves HTTP on port 80
 *   as nginx does (the ReplicationController lifecycle spec's pods run it, and only need it up);
 * - busybox, and glibc-dns-testing as a second name of the same files: busybox's ash as sh, with
 *   its applets, glibc's `getent` (the point of glibc-dns-testing: glibc's resolver) and dig, with
 *   the rest of the tools; no bash. The specs compare what its sh writes word for word (a read-only
 *   root's `/bin/sh: can't create /file: Read-only file system`), and its `sh -c env` must print
 *   the variables whose names are no shell names (`data-1`, the ConfigMap and Secret specs'): so
 *   the busybox is the toolchain's own build of Debian's (`scripts/toolchain.sh conformance`),
 *   without the standalone shell that would run its own env before PATH's, and keeping such
 *   variables for the commands it runs;
 * - pause: the local clusters' pause program under upstream's name.
 *
 * Pure: the forgers take the files' paths (and busybox's applet list) and return image specs;
 * image/build-e2e.ts reads the machine.
 */
import type { ImageEntry, ImageSpec } from "./oci-archive.js";
import { forgeSystemEntries, libraryEntries } from "./agent-image.js";
import type { HostFile } from "./host-files.js";

/** Where upstream's test images live: every reference below starts with it. */
const E2E_REGISTRY = "registry.k8s.io/e2e-test-images";

/** The references of the images made here, as the suite names them at Kubernetes 1.36. */
export const E2E_IMAGE_REFERENCES = {
  agnhost: (version: string) => `${E2E_REGISTRY}/agnhost:${version}`,
  /** imageutils.AgnhostPrev. */
  agnhostPrevious: `${E2E_REGISTRY}/agnhost:2.55`,
  busybox: `${E2E_REGISTRY}/busybox:1.37.0-1`,
  /** imageutils.Nginx: a web server on port 80. */
  nginx: `${E2E_REGISTRY}/nginx:1.15-4`,
  glibcDnsTesting: `${E2E_REGISTRY}/glibc-dns-testing:2.0.0`,
  pause: "registry.k8s.io/pause:3.10.2",
} as const;

/** The machine's files the images are made of. */
export interface E2eImageInputs {
  /** The agnhost binary (static) and the version it reports (its image's tag). */
  readonly agnhost: {
    readonly path: string;
    readonly version: string;
    /** The certificate and key agnhost's image holds at its root (`/localhost.crt`, `/localhost.key`). */
    readonly certificate: string;
    readonly key: string;
  };
  /**
   * The static busybox binary (the toolchain's build for these images, whose sh runs the commands
   * PATH names) and its applets as `busybox --list-full` prints them (`bin/sh`, `usr/bin/wget`).
   */
  readonly busybox: { readonly path: string; readonly applets: readonly string[] };
  /** Dynamic tools, each by the path it takes in the images (`/usr/bin/dig`) and the host file. */
  readonly tools: {
    /** agnhost's sh. */
    readonly bash: string;
    readonly dig: string;
    readonly nc: string;
    readonly curl: string;
    readonly getent: string;
  };
  /** Every shared library the tools load (host-files.ts `sharedLibraries`). */
  readonly libraries: readonly HostFile[];
  /** The host's merged-/usr links (`/bin -> usr/bin`…), repeated in every image. */
  readonly usrLinks: readonly { path: string; target: string }[];
  /** The static coredns binary agnhost's DNS test runs as `/coredns`. */
  readonly coredns: string;
  /** The pause binary (podtool: `podtool pause`). */
  readonly pause: string;
}

/** Tools that replace any busybox applet of the same name: busybox's nc lacks `-v -t -u -z`. */
const REAL_TOOLS = ["nc", "curl", "dig", "getent"] as const;

/**
 * The busybox binary at /usr/bin/busybox and a symlink to it per applet, each where busybox puts
 * it, moved under /usr where the host's merged /usr makes `/bin` and `/sbin` links (a layer cannot
 * hold `/bin/sh` under a symlink `/bin`). Applets named in `except` are left out. Pure.
 */
export function busyboxEntries(
  busybox: E2eImageInputs["busybox"],
  usrLinks: E2eImageInputs["usrLinks"],
  except: readonly string[] = [],
): ImageEntry[] {
  const merged = new Set(usrLinks.map((link) => link.path.replace(/^\//, "")));
  const entries = new Map<string, ImageEntry>([
    ["/usr/bin/busybox", { path: "/usr/bin/busybox", type: "file", content: busybox.path, mode: 0o755 }],
  ]);
  for (const applet of busybox.applets) {
    const [top, ...rest] = applet.split("/");
    const name = rest.at(-1)!;
    if (name === "busybox" || except.includes(name)) continue;
    const path = `/${merged.has(top!) ? ["usr", top, ...rest].join("/") : applet}`;
    entries.set(path, { path, type: "symlink", target: "/usr/bin/busybox" });
  }
  return [...entries.values()];
}

/**
 * The layer every test image but pause shares: system files, busybox but its sh, the real tools
 * and their libraries. Each image's sh comes above it ({@link e2eImages}).
 */
export function toolsLayer(inputs: E2eImageInputs): ImageEntry[] {
  const tool = (path: string, content: string): ImageEntry => ({ path, type: "file", content, mode: 0o755 });
  return [
    ...forgeSystemEntries(inputs.usrLinks),
    // glibc's resolver (getent) reads /etc/hosts first, then DNS, as in upstream's Debian image.
    { path: "/etc/nsswitch.conf", type: "file", content: Buffer.from("hosts: files dns\n") },
    // sh is each image's own, in its top layer.
    ...busyboxEntries(inputs.busybox, inputs.usrLinks, [...REAL_TOOLS, "sh"]),
    tool("/usr/bin/dig", inputs.tools.dig),
    tool("/usr/bin/nc", inputs.tools.nc),
    tool("/usr/bin/curl", inputs.tools.curl),
    tool("/usr/bin/getent", inputs.tools.getent),
    ...libraryEntries(inputs.libraries),
  ];
}

/** The PATH of the test images: their shells find busybox's applets and the real tools by it. */
const ENV = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"];

/** One image made here, and the further references the nodes give it (the same files under another name). */
export interface E2eImage {
  readonly spec: ImageSpec;
  /** Tagged in each node's containerd beside `spec.reference`. */
  readonly aliases: readonly string[];
}

/** The images of {@link E2E_IMAGE_REFERENCES}, made from `inputs`: four archives, two of them with aliases. Pure. */
export function e2eImages(inputs: E2eImageInputs): E2eImage[] {
  const agnhost: ImageSpec = {
    reference: E2E_IMAGE_REFERENCES.agnhost(inputs.agnhost.version),
    layers: [
      toolsLayer(inputs),
      [
        { path: "/usr/bin/bash", type: "file", content: inputs.tools.bash, mode: 0o755 },
        { path: "/usr/bin/sh", type: "symlink", target: "bash" },
        { path: "/agnhost", type: "file", content: inputs.agnhost.path, mode: 0o755 },
        // Upstream's image has it too: some tests run the binary under a second name.
        { path: "/agnhost-2", type: "symlink", target: "agnhost" },
        { path: "/coredns", type: "file", content: inputs.coredns, mode: 0o755 },
        // test-webserver serves the root: the StatefulSet specs' readiness probe fetches /localhost.crt.
        { path: "/localhost.crt", type: "file", content: inputs.agnhost.certificate, mode: 0o644 },
        { path: "/localhost.key", type: "file", content: inputs.agnhost.key, mode: 0o644 },
        { path: "/uploads", type: "dir" },
      ],
    ],
    config: { entrypoint: ["/agnhost"], cmd: ["pause"], env: ENV },
  };
  // The specs that run nginx need a container that serves HTTP on port 80: agnhost's files, its
  // test-webserver as the entrypoint.
  const nginx: ImageSpec = {
    reference: E2E_IMAGE_REFERENCES.nginx,
    layers: agnhost.layers,
    config: { entrypoint: ["/agnhost", "test-webserver"], env: ENV },
  };
  return [
    { spec: agnhost, aliases: [E2E_IMAGE_REFERENCES.agnhostPrevious] },
    { spec: nginx, aliases: [] },
    {
      spec: {
        reference: E2E_IMAGE_REFERENCES.busybox,
        layers: [toolsLayer(inputs), [{ path: "/usr/bin/sh", type: "symlink", target: "/usr/bin/busybox" }]],
        config: { env: ENV, cmd: ["sh"] },
      },
      aliases: [E2E_IMAGE_REFERENCES.glibcDnsTesting],
    },
    {
      spec: {
        reference: E2E_IMAGE_REFERENCES.pause,
        layers: [[{ path: "/podtool", type: "file", content: inputs.pause, mode: 0o755 }]],
        config: { entrypoint: ["/podtool", "pause"], user: "65535:65535" },
      },
      aliases: [],
    },
  ];
}
