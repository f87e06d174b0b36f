/**
 * The pure parts of what the images take from the host: ldd's output, iptables' backend, the
 * library layout, and the size report.
 */
import { libraryEntries } from "../../../image/agent-image.js";
import { formatReport, type BuiltImage } from "../../../image/build.js";
import { iptablesBackend, parseLdd } from "../../../image/host-files.js";

describe("parseLdd", () => {
  it("lists every library and the dynamic loader, and leaves out the vDSO", () => {
    const output = [
      "\tlinux-vdso.so.1 (0x00007ffd1e5f2000)",
      "\tlibmnl.so.0 => /lib/x86_64-linux-gnu/libmnl.so.0 (0x00007f0c51d10000)",
      "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0c51afb000)",
      "\t/lib64/ld-linux-x86-64.so.2 (0x00007f0c51de0000)",
      "",
    ].join("\n");
    expect(parseLdd("/usr/sbin/x", output)).toEqual([
      "/lib/x86_64-linux-gnu/libmnl.so.0",
      "/lib/x86_64-linux-gnu/libc.so.6",
      "/lib64/ld-linux-x86-64.so.2",
    ]);
  });

  it("gives nothing for a static executable and throws naming a library ldd does not find", () => {
    expect(parseLdd("/bin/static", "\tnot a dynamic executable\n")).toEqual([]);
    expect(() => parseLdd("/usr/sbin/ip", "\tlibbpf.so.1 => not found\n")).toThrow(
      "image: /usr/sbin/ip needs libbpf.so.1, which ldd does not find",
    );
  });
});

describe("iptablesBackend", () => {
  it("tells nft from legacy as `iptables -V` prints them, and refuses what it cannot tell", () => {
    expect(iptablesBackend("iptables v1.8.9 (nf_tables)\n")).toBe("nft");
    expect(iptablesBackend("iptables v1.8.9 (legacy)\n")).toBe("legacy");
    expect(iptablesBackend("iptables v1.6.1\n")).toBe("legacy");
    expect(() => iptablesBackend("something else")).toThrow('cannot tell the iptables backend from "something else"');
  });
});

describe("libraryEntries", () => {
  it("puts the real file under its real name and the ldd name as a symlink to it", () => {
    expect(
      libraryEntries([
        { path: "/usr/lib/x86_64-linux-gnu/libbpf.so.1", source: "/usr/lib/x86_64-linux-gnu/libbpf.so.1.1.2" },
        { path: "/usr/lib/x86_64-linux-gnu/libc.so.6", source: "/usr/lib/x86_64-linux-gnu/libc.so.6" },
      ]),
    ).toEqual([
      {
        path: "/usr/lib/x86_64-linux-gnu/libbpf.so.1.1.2",
        type: "file",
        content: "/usr/lib/x86_64-linux-gnu/libbpf.so.1.1.2",
      },
      { path: "/usr/lib/x86_64-linux-gnu/libbpf.so.1", type: "symlink", target: "libbpf.so.1.1.2" },
      { path: "/usr/lib/x86_64-linux-gnu/libc.so.6", type: "file", content: "/usr/lib/x86_64-linux-gnu/libc.so.6" },
    ]);
  });
});

describe("formatReport", () => {
  it("prints reference, digest, sizes and the layers biggest first", () => {
    const image: BuiltImage = {
      name: "agent",
      file: "dist/image/agent.oci.tar",
      reference: "pulumi-liqo.local/agent:0.1.0",
      digest: "sha256:abc",
      bytes: 47_900_000,
      uncompressedBytes: 126_300_000,
      layers: [
        { digest: "sha256:1", size: 3_700_000, uncompressedSize: 8_600_000 },
        { digest: "sha256:2", size: 41_500_000, uncompressedSize: 108_500_000 },
      ],
      layerNames: ["libraries", "node"],
      notes: [],
    };
    expect(formatReport([image]).split("\n")).toEqual([
      "agent: pulumi-liqo.local/agent:0.1.0",
      "  file         dist/image/agent.oci.tar",
      "  digest       sha256:abc",
      "  archive      47.9 MB (uncompressed layers 126.3 MB)",
      "  biggest      (compressed / uncompressed)",
      "      41.5 MB /  108.5 MB  node",
      "       3.7 MB /    8.6 MB  libraries",
    ]);
  });
});
