/**
 * writeImageArchive: the same spec twice gives the same bytes and digest, and GNU tar reads what it
 * wrote (the outer layout and each gzip'd layer) with the modes, owners and times the spec asked for.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeImageArchive, type ImageSpec } from "../../../image/oci-archive.js";

describe("writeImageArchive", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "oci-archive-test-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const spec = (hostFile: string): ImageSpec => ({
    reference: "pulumi-liqo.local/test:1.2.3",
    layers: [
      [
        { path: "/bin/tool", type: "file", content: hostFile },
        { path: "/tmp", type: "dir", mode: 0o1777 },
        { path: "/etc/passwd", type: "file", content: Buffer.from("root:x:0:0::/:/x\n") },
      ],
      [
        { path: "/home/nonroot", type: "dir", mode: 0o700, uid: 65532, gid: 65532 },
        { path: "/usr/bin/tool", type: "symlink", target: "../../bin/tool" },
      ],
    ],
    config: { entrypoint: ["/bin/tool"], cmd: ["serve"], env: ["PATH=/bin"], user: "65532:65532" },
  });

  it("writes the same bytes and the same digest twice, and GNU tar reads the layout and its layers as specified", async () => {
    // GIVEN a host file with the executable bit
    const hostFile = join(dir, "tool");
    writeFileSync(hostFile, Buffer.alloc(300_000, 7), { mode: 0o755 });

    // WHEN the same spec is written twice
    const first = await writeImageArchive(join(dir, "a.tar"), spec(hostFile));
    const second = await writeImageArchive(join(dir, "b.tar"), spec(hostFile));

    // THEN the archives are byte-identical and the digest is the manifest's
    const a = readFileSync(join(dir, "a.tar"));
    expect(a.equals(readFileSync(join(dir, "b.tar")))).toBe(true);
    expect(second).toEqual(first);
    expect(first.bytes).toBe(a.length);
    expect(first.reference).toBe("pulumi-liqo.local/test:1.2.3");

    const out = join(dir, "out");
    execFileSync("mkdir", [out]);
    const outer = execFileSync("tar", ["-tvf", join(dir, "a.tar"), "--numeric-owner", "--full-time"], {
      encoding: "utf8",
    });
    const names = outer
      .trim()
      .split("\n")
      .map((line) => line.split(/\s+/).pop());
    expect(names[0]).toBe("blobs/");
    expect(names.slice(-2)).toEqual(["index.json", "oci-layout"]);
    expect(names).toEqual([...names].sort());
    execFileSync("tar", ["-xf", join(dir, "a.tar"), "-C", out]);

    const blob = (digest: string): Buffer => readFileSync(join(out, "blobs", "sha256", digest.replace("sha256:", "")));
    const index = JSON.parse(readFileSync(join(out, "index.json"), "utf8"));
    expect(index.manifests).toHaveLength(1);
    expect(index.manifests[0].digest).toBe(first.digest);
    expect(index.manifests[0].annotations).toEqual({
      "io.containerd.image.name": "pulumi-liqo.local/test:1.2.3",
      "org.opencontainers.image.ref.name": "pulumi-liqo.local/test:1.2.3",
    });
    const manifestBytes = blob(first.digest);
    expect(`sha256:${createHash("sha256").update(manifestBytes).digest("hex")}`).toBe(first.digest);
    const manifest = JSON.parse(manifestBytes.toString());
    const config = JSON.parse(blob(manifest.config.digest).toString());
    expect(config.config).toEqual({
      User: "65532:65532",
      Env: ["PATH=/bin"],
      Entrypoint: ["/bin/tool"],
      Cmd: ["serve"],
    });
    expect(config.created).toBeUndefined();
    expect(manifest.layers).toHaveLength(2);

    // each layer: a gzip with a fixed header whose tar's sha256 is the config's diff_id
    const listings = manifest.layers.map((layer: { digest: string; size: number }, i: number) => {
      const gz = blob(layer.digest);
      expect(gz.length).toBe(layer.size);
      expect([...gz.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
      const tar = execFileSync("gzip", ["-dc"], { input: gz });
      expect(`sha256:${createHash("sha256").update(tar).digest("hex")}`).toBe(config.rootfs.diff_ids[i]);
      return execFileSync("tar", ["-tvf", "-", "--numeric-owner", "--full-time"], { input: tar, encoding: "utf8" })
        .trim()
        .split("\n")
        .map((line) => line.replace(/\s+/g, " "));
    });
    expect(listings[0]).toEqual([
      "drwxr-xr-x 0/0 0 1970-01-01 00:00:00 bin/",
      "-rwxr-xr-x 0/0 300000 1970-01-01 00:00:00 bin/tool",
      "drwxr-xr-x 0/0 0 1970-01-01 00:00:00 etc/",
      "-rw-r--r-- 0/0 17 1970-01-01 00:00:00 etc/passwd",
      "drwxrwxrwt 0/0 0 1970-01-01 00:00:00 tmp/",
    ]);
    expect(listings[1]).toEqual([
      "drwxr-xr-x 0/0 0 1970-01-01 00:00:00 home/",
      "drwx------ 65532/65532 0 1970-01-01 00:00:00 home/nonroot/",
      "drwxr-xr-x 0/0 0 1970-01-01 00:00:00 usr/",
      "drwxr-xr-x 0/0 0 1970-01-01 00:00:00 usr/bin/",
      "lrwxrwxrwx 0/0 0 1970-01-01 00:00:00 usr/bin/tool -> ../../bin/tool",
    ]);
  });

  it("leaves no archive (and no partial file) when a layer cannot be written", async () => {
    const file = join(dir, "bad.tar");
    await expect(writeImageArchive(file, spec(join(dir, "missing")))).rejects.toThrow(
      `image entry /bin/tool: cannot read host file ${join(dir, "missing")}: ENOENT`,
    );
    expect(execFileSync("ls", ["-A", dir], { encoding: "utf8" })).toBe("");
  });
});
