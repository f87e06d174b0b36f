/**
 * The project's images, built for real: twice from the same inputs (same bytes, same digests),
 * their root filesystems unpacked and run with chroot (each tool of the agent image answers),
 * and imported by the toolchain's containerd 2.4.2 (`ctr images import`) under their references,
 * with the digests the build printed. The containerd is this test's own (root, state and socket in
 * a temporary directory), stopped by its PID and removed in `finally`.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, openSync, closeSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect, createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { buildImages, formatReport, type BuiltImage } from "../../image/build.js";
import { AGENT_ENTRYPOINT, AGENT_PATHS, NONROOT } from "../../image/agent-image.js";
import { AGENT_BUNDLE } from "../../image/agent-bundle.js";
import { DEFAULT_AGENT_IMAGE } from "../../core/cluster/agent-image.js";
import { poll } from "../../core/wait/poll.js";
import { pinnedVersion } from "../support/versions.js";

/** Each test's bound: runs of the built images' tools and containerd's imports. */
const TEST_BOUND_MS = 3 * 60_000;

const run = promisify(execFile);
const CACHE = process.env.LIQO_CACHE ?? join(process.env.HOME ?? "/root", ".cache", "pulumi-liqo");
const CONTAINERD_BIN = join(CACHE, `containerd-${pinnedVersion("CONTAINERD_VERSION")}`, "bin");

/** The part of an OCI image config this test reads. */
interface ImageConfig {
  readonly config: { readonly Entrypoint?: string[]; readonly User?: string; readonly Env: string[] };
}

/** The image's manifest and config, read from an archive unpacked into `layout`. */
async function readImage(layout: string): Promise<{ manifestDigest: string; layers: string[]; config: ImageConfig }> {
  const blob = (digest: string): Promise<Buffer> =>
    readFile(join(layout, "blobs", "sha256", digest.replace("sha256:", "")));
  const index = JSON.parse(await readFile(join(layout, "index.json"), "utf8"));
  const manifestDigest: string = index.manifests[0].digest;
  const manifest = JSON.parse((await blob(manifestDigest)).toString());
  const config = JSON.parse((await blob(manifest.config.digest)).toString());
  return { manifestDigest, layers: manifest.layers.map((l: { digest: string }) => l.digest), config };
}

/** Unpacks `archive`'s layers, bottom first, into `rootfs` (with GNU tar, as a runtime would apply them). */
async function unpackRootfs(archive: string, work: string): Promise<{ rootfs: string; config: ImageConfig }> {
  const layout = join(work, "layout");
  const rootfs = join(work, "rootfs");
  await mkdir(layout, { recursive: true });
  await mkdir(rootfs, { recursive: true });
  await run("tar", ["-xf", archive, "-C", layout]);
  const image = await readImage(layout);
  for (const layer of image.layers) {
    await run("tar", [
      "-xzf",
      join(layout, "blobs", "sha256", layer.replace("sha256:", "")),
      "-C",
      rootfs,
      "--same-owner",
    ]);
  }
  return { rootfs, config: image.config };
}

/** Runs `argv` chrooted into `rootfs` with only the image's environment (as `user` when given); stdout and stderr together. */
async function inImage(rootfs: string, env: string[], argv: string[], user?: string): Promise<string> {
  const options = user ? [`--userspec=${user}`] : [];
  const environment = Object.fromEntries(
    env.map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
  );
  const { stdout, stderr } = await run("/usr/sbin/chroot", [...options, rootfs, ...argv], {
    env: environment,
    timeout: 30_000,
  });
  return `${stdout}${stderr}`;
}

/** A containerd 2.4.2 of this test's own: config, root, state and socket under `dir`. */
async function startContainerd(dir: string): Promise<{ child: ChildProcess; socket: string }> {
  const socket = join(dir, "containerd.sock");
  await writeFile(
    join(dir, "config.toml"),
    [
      "version = 3",
      `root = "${join(dir, "root")}"`,
      `state = "${join(dir, "state")}"`,
      // Importing needs the content store and a snapshotter, not the CRI plugin (no kubelet here).
      'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
      "[grpc]",
      `  address = "${socket}"`,
      "[ttrpc]",
      `  address = "${socket}.ttrpc"`,
    ].join("\n"),
  );
  const log = openSync(join(dir, "containerd.log"), "a");
  const child = spawn(join(CONTAINERD_BIN, "containerd"), ["--config", join(dir, "config.toml")], {
    stdio: ["ignore", log, log],
  });
  closeSync(log);
  await poll({ step: "image test", object: "containerd socket", endpoint: socket }, { timeoutMs: 20_000 }, async () => {
    if (child.exitCode !== null) return { failed: true, reason: `containerd exited ${child.exitCode}` };
    await ctr(socket, ["version"]);
    return { done: true, value: undefined };
  });
  return { child, socket };
}

async function ctr(socket: string, args: string[]): Promise<string> {
  const { stdout } = await run(join(CONTAINERD_BIN, "ctr"), ["--address", socket, "-n", "k8s.io", ...args], {
    timeout: 60_000,
  });
  return stdout;
}

/** Stops `child` (SIGTERM, then SIGKILL after 10 s) and waits for its exit. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** A TCP port free on 127.0.0.1 right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/** What 127.0.0.1:`port` sends before it closes the connection. */
function readLine(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const socket = connect(port, "127.0.0.1");
    socket.setTimeout(5_000, () => socket.destroy(new Error("no answer in 5 s")));
    socket.on("data", (chunk) => (text += chunk.toString()));
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
}

describe("the project's images", () => {
  let work: string;
  let first: BuiltImage[];
  let second: BuiltImage[];

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "liqo-image-test-"));
    first = await buildImages({ outDir: join(work, "a") });
    second = await buildImages({ outDir: join(work, "b") });
    console.log(formatReport(first));
  }, 300_000);
  afterAll(() => rm(work, { recursive: true, force: true }));

  it(
    "are built twice with the same bytes and digests, under the version's references (the agent's naming its bundle too)",
    async () => {
      const version = JSON.parse(await readFile(join(__dirname, "..", "..", "package.json"), "utf8")).version;
      const bundle = await readFile(AGENT_BUNDLE);
      const build = createHash("sha256").update(bundle).digest("hex").slice(0, 12);
      expect(first.map((image) => image.reference)).toEqual([
        `pulumi-liqo.local/agent:${version}-${build}`,
        ...[
          "podtool",
          "pause",
          "coredns",
          "metrics-server",
          "local-path-provisioner",
          "metallb-controller",
          "metallb-speaker",
          "flannel",
        ].map((name) => `pulumi-liqo.local/${name}:${version}`),
      ]);
      // What the package deploys by default is that reference.
      expect(DEFAULT_AGENT_IMAGE).toBe(first[0]!.reference);
      for (const [i, image] of first.entries()) {
        const [a, b] = await Promise.all([readFile(image.file), readFile(second[i]!.file)]);
        expect({ name: image.name, digest: second[i]!.digest, same: a.equals(b) }).toEqual({
          name: image.name,
          digest: image.digest,
          same: true,
        });
        expect(createHash("sha256").update(a).digest("hex")).toBe(createHash("sha256").update(b).digest("hex"));
        expect(image.bytes).toBe(a.length);
      }
      // Small: the node binary is most of it (DESIGN figure of a plain copy: 134 MB uncompressed).
      const agent = first[0]!;
      expect(agent.bytes).toBeLessThan(60e6);
      expect(agent.uncompressedBytes).toBeLessThan(140e6);
    },
    TEST_BOUND_MS,
  );

  it(
    "the agent image's tools run in its own root filesystem, node as the non-root user",
    async () => {
      const { rootfs, config } = await unpackRootfs(first[0]!.file, join(work, "agent"));
      expect(config.config).toMatchObject({ Entrypoint: AGENT_ENTRYPOINT, User: `${NONROOT}:${NONROOT}` });
      // The tag names the code inside: two builds of different code never share a reference.
      const inside = createHash("sha256")
        .update(await readFile(join(rootfs, AGENT_PATHS.bundle)))
        .digest("hex");
      expect(first[0]!.reference.endsWith(`-${inside.slice(0, 12)}`)).toBe(true);
      const env = config.config.Env;

      // ip also says it cannot read libbpf's runtime version: it looks in /proc/self/maps, and this chroot has no /proc.
      expect(await inImage(rootfs, env, ["/usr/sbin/ip", "-V"])).toMatch(/^ip utility, iproute2-\S+, libbpf \S+\n/);
      expect(
        await inImage(
          rootfs,
          env,
          ["/usr/local/bin/node", "-e", "console.log(process.version)"],
          `${NONROOT}:${NONROOT}`,
        ),
      ).toBe(`${process.version}\n`);
      const hostIptables = (await run("iptables", ["-V"])).stdout;
      expect(await inImage(rootfs, env, ["/usr/sbin/iptables", "-V"])).toBe(hostIptables);
      expect(await inImage(rootfs, env, ["iptables-save", "-V"])).toBe(
        hostIptables.replace("iptables", "iptables-save"),
      );
      expect(await inImage(rootfs, env, ["iptables-restore", "-V"])).toBe(
        hostIptables.replace("iptables", "iptables-restore"),
      );
      // A rule with a match and a target module: iptables loads libxt_comment.so and libxt_MASQUERADE.so
      // from the image's xtables directory (without it: "Couldn't load match `comment'").
      const rules = [
        "*nat",
        ":POSTROUTING ACCEPT [0:0]",
        '-A POSTROUTING -s 10.0.0.0/24 -m comment --comment "liqo" -j MASQUERADE',
        "COMMIT",
        "",
      ];
      await writeFile(join(rootfs, "tmp", "rules"), rules.join("\n"));
      expect(await inImage(rootfs, env, ["iptables-restore", "--test", "/tmp/rules"])).toBe("");
      expect(await inImage(rootfs, env, ["/usr/bin/wg", "--version"])).toMatch(/^wireguard-tools v/);
      expect(await inImage(rootfs, env, ["/usr/sbin/sysctl", "-V"])).toMatch(/^sysctl from procps-ng/);
      expect(await inImage(rootfs, env, ["/usr/bin/ping", "-V"])).toMatch(/^ping from iputils/);
      expect(await inImage(rootfs, env, ["wireguard-go", "--version"])).toMatch(/^wireguard-go v/);
      // The bundle loads with no node_modules: it gets as far as reading its kubeconfig.
      const agent = await inImage(
        rootfs,
        env,
        [...AGENT_ENTRYPOINT, "--kubeconfig", "/nonexistent/kubeconfig"],
        `${NONROOT}:${NONROOT}`,
      ).catch(
        (error: { code?: number; stdout?: string; stderr?: string }) =>
          `exit ${error.code}: ${error.stdout}${error.stderr}`,
      );
      expect(agent).toMatch(/^exit 1: .*ENOENT: no such file or directory, open '\/nonexistent\/kubeconfig'/s);
    },
    TEST_BOUND_MS,
  );

  it(
    "the podtool image serves TCP and the pause image waits for SIGTERM, from their own root filesystems",
    async () => {
      const podtool = await unpackRootfs(first[1]!.file, join(work, "podtool"));
      const pause = await unpackRootfs(first[2]!.file, join(work, "pause"));
      expect(podtool.config.config).toMatchObject({ Entrypoint: ["/podtool"], Cmd: ["serve"] });
      expect(pause.config.config).toMatchObject({ Entrypoint: ["/podtool", "pause"], User: "65535:65535" });
      const coredns = await unpackRootfs(first[3]!.file, join(work, "coredns"));
      expect(coredns.config.config).toMatchObject({ Entrypoint: ["/coredns"] });
      const metricsServer = await unpackRootfs(first[4]!.file, join(work, "metrics-server"));
      expect(metricsServer.config.config).toMatchObject({ Entrypoint: ["/metrics-server"] });
      // The provisioner, and the shell its helper pods run (busybox's), in one image.
      const localPath = await unpackRootfs(first[5]!.file, join(work, "local-path-provisioner"));
      expect(localPath.config.config).toMatchObject({ Cmd: ["local-path-provisioner"] });
      // Present in the image itself (busybox's applets are links to it, which lstat does not follow out of the root).
      for (const file of ["usr/bin/local-path-provisioner", "usr/bin/busybox", "bin/sh", "bin/mkdir", "bin/rm"])
        expect([file, lstatSync(join(localPath.rootfs, file), { throwIfNoEntry: false }) !== undefined]).toEqual([
          file,
          true,
        ]);
      for (const [i, component] of ["controller", "speaker"].entries()) {
        const metallb = await unpackRootfs(first[6 + i]!.file, join(work, `metallb-${component}`));
        expect(metallb.config.config).toMatchObject({ Entrypoint: [`/${component}`] });
      }

      const port = await freePort();
      const server = spawn("/usr/sbin/chroot", [podtool.rootfs, "/podtool", "serve", "--tcp", `127.0.0.1:${port}`], {
        stdio: "ignore",
      });
      const sleeper = spawn(
        "/usr/sbin/chroot",
        ["--userspec=65535:65535", pause.rootfs, ...pause.config.config.Entrypoint!],
        { stdio: ["ignore", "pipe", "ignore"] },
      );
      // SIGTERM only once pause says its handler is set: before, the signal would kill it outright.
      const pauseReady = new Promise<string>((resolve) => {
        sleeper.stdout!.once("data", (chunk: Buffer) => resolve(String(chunk)));
        sleeper.once("exit", (code, signal) => resolve(`exited before it was ready (${code ?? signal})`));
      });
      try {
        const answer = await poll(
          { step: "image test", object: "podtool serve", endpoint: `127.0.0.1:${port}` },
          { timeoutMs: 10_000 },
          async () => ({ done: true, value: await readLine(port) }),
        );
        expect(answer).toMatch(new RegExp(`^podtool \\S+ 127\\.0\\.0\\.1:${port}\\n$`));
        expect(sleeper.exitCode).toBeNull();
        expect(await pauseReady).toBe("podtool pause: waiting for SIGTERM\n");
        const started = Date.now();
        await stop(sleeper);
        expect({ code: sleeper.exitCode, signal: sleeper.signalCode }).toEqual({ code: 0, signal: null });
        expect(Date.now() - started).toBeLessThan(5_000);
      } finally {
        await stop(server);
        await stop(sleeper);
      }
    },
    TEST_BOUND_MS,
  );

  it(
    "are imported by containerd 2.4.2 under their references with the printed digests",
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "liqo-ctd-"));
      let containerd: { child: ChildProcess; socket: string } | undefined;
      try {
        containerd = await startContainerd(dir);
        for (const image of first) {
          const started = Date.now();
          await ctr(containerd.socket, ["images", "import", image.file]);
          console.log(
            `${image.reference}: imported in ${((Date.now() - started) / 1000).toFixed(1)} s (${(image.bytes / 1e6).toFixed(1)} MB archive)`,
          );
        }
        const listed = (await ctr(containerd.socket, ["images", "ls"]))
          .trim()
          .split("\n")
          .slice(1)
          .map((line) => line.split(/\s+/));
        expect(listed.map(([ref, , digest]) => `${ref} ${digest}`).sort()).toEqual(
          first.map((image) => `${image.reference} ${image.digest}`).sort(),
        );
        // Every blob is present and the layers unpacked into the snapshotter (diff_ids checked).
        const checked = await ctr(containerd.socket, ["images", "check"]);
        const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        for (const image of first)
          expect(checked).toMatch(
            new RegExp(`${escape(image.reference)}\\s+\\S+\\s+${image.digest}\\s+complete \\(\\d+/\\d+\\) .* true`),
          );
      } finally {
        if (containerd) await stop(containerd.child);
        await rm(dir, { recursive: true, force: true });
      }
      expect(containerd?.child.exitCode !== null || containerd?.child.signalCode !== null).toBe(true);
      expect(existsSync(dir)).toBe(false);
      expect((await readFile("/proc/self/mounts", "utf8")).includes(dir)).toBe(false);
    },
    TEST_BOUND_MS,
  );
});
