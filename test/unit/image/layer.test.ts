/**
 * layerMembers and tarHeader: the order, the implied directories and the header fields of a layer,
 * decided before any byte is written.
 */
import { layerMembers, normalizePath } from "../../../image/layer.js";
import { tarHeader } from "../../../image/tar.js";

describe("layerMembers", () => {
  it("sorts entries bytewise and adds every missing parent directory as root 0755", async () => {
    const members = await layerMembers([
      { path: "/usr/sbin/ip", type: "file", content: Buffer.from("x") },
      { path: "/app/agent.js", type: "file", content: Buffer.from("js") },
      { path: "/tmp", type: "dir", mode: 0o1777 },
      { path: "/usr/lib64", type: "symlink", target: "lib" },
    ]);
    expect(members.map((m) => `${m.type} ${m.path} ${m.mode.toString(8)} ${m.uid}:${m.gid}`)).toEqual([
      "dir app 755 0:0",
      "file app/agent.js 644 0:0",
      "dir tmp 1777 0:0",
      "dir usr 755 0:0",
      "symlink usr/lib64 777 0:0",
      "dir usr/sbin 755 0:0",
      "file usr/sbin/ip 644 0:0",
    ]);
  });

  it("gives the same order whatever order the entries come in", async () => {
    const entries = ["/b/c", "/a-b", "/a/b", "/a"].map((path) => ({ path, type: "dir" as const }));
    const forward = (await layerMembers(entries)).map((m) => m.path);
    const backward = (await layerMembers([...entries].reverse())).map((m) => m.path);
    expect(forward).toEqual(["a", "a-b", "a/b", "b", "b/c"]);
    expect(backward).toEqual(forward);
  });

  it("takes a host file's size and its executable bit, and keeps uid/gid as given", async () => {
    const [node] = (
      await layerMembers([{ path: "/n", type: "file", content: process.execPath, uid: 65532, gid: 65532 }])
    ).slice(-1);
    expect(node).toMatchObject({ path: "n", mode: 0o755, uid: 65532, gid: 65532 });
    expect(node!.size).toBeGreaterThan(1_000_000);
  });

  it("refuses a path listed twice, a missing host file, and paths outside the image, naming them", async () => {
    await expect(
      layerMembers([
        { path: "/etc/passwd", type: "file", content: Buffer.from("") },
        { path: "etc/passwd", type: "file", content: Buffer.from("") },
      ]),
    ).rejects.toThrow("image entry /etc/passwd: listed twice in one layer");
    await expect(layerMembers([{ path: "/x", type: "file", content: "/nonexistent/file" }])).rejects.toThrow(
      "image entry /x: cannot read host file /nonexistent/file: ENOENT",
    );
    expect(() => normalizePath("/../etc")).toThrow('image entry "/../etc": not a path inside the image');
    expect(() => normalizePath("/")).toThrow("not a path inside the image");
    await expect(layerMembers([{ path: "/l", type: "symlink" }])).rejects.toThrow(
      "image entry /l: a symlink needs a target",
    );
  });
});

describe("tarHeader", () => {
  it("writes a valid ustar header with mtime 0 and splits a long path at a slash into prefix and name", () => {
    const path = `${"d".repeat(120)}/${"f".repeat(90)}`;
    const header = tarHeader({ path, type: "file", mode: 0o644, uid: 65532, gid: 7, size: 1234 });
    const field = (offset: number, width: number): string =>
      header.toString("utf8", offset, offset + width).replace(/\0.*$/s, "");
    expect(field(0, 100)).toBe("f".repeat(90));
    expect(field(345, 155)).toBe("d".repeat(120));
    expect(field(100, 8)).toBe("0000644");
    expect(parseInt(field(108, 8), 8)).toBe(65532);
    expect(parseInt(field(124, 12), 8)).toBe(1234);
    expect(field(136, 12)).toBe("00000000000");
    let sum = 0;
    for (const [i, byte] of header.entries()) sum += i >= 148 && i < 156 ? 0x20 : byte;
    expect(parseInt(field(148, 8), 8)).toBe(sum);
  });

  it("refuses a path no ustar header can hold", () => {
    expect(() => tarHeader({ path: "x".repeat(300), type: "file", mode: 0o644, uid: 0, gid: 0, size: 0 })).toThrow(
      `tar entry ${"x".repeat(300)}: path too long`,
    );
  });
});
