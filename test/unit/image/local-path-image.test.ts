/** The storage image as a spec: busybox's applets where busybox puts them, the provisioner where upstream's image has it. */
import { LOCAL_PATH_PROVISIONER_PATH, localPathImage } from "../../../image/local-path-image.js";

describe("localPathImage", () => {
  const { spec, layerNames } = localPathImage(
    {
      provisioner: "/cache/local-path-provisioner",
      busybox: { path: "/cache/busybox", applets: ["bin/sh", "bin/mkdir", "bin/rm", "usr/bin/env", "bin/busybox"] },
    },
    "1.2.3",
  );

  test("GIVEN the toolchain's files WHEN forged THEN the helper pods' /bin/sh, mkdir and rm are busybox, and the provisioner is on PATH", () => {
    expect(spec.reference).toBe("pulumi-liqo.local/local-path-provisioner:1.2.3");
    expect(spec.layers[0]).toEqual([
      { path: "/usr/bin/busybox", type: "file", content: "/cache/busybox", mode: 0o755 },
      { path: "/bin/sh", type: "symlink", target: "/usr/bin/busybox" },
      { path: "/bin/mkdir", type: "symlink", target: "/usr/bin/busybox" },
      { path: "/bin/rm", type: "symlink", target: "/usr/bin/busybox" },
      { path: "/usr/bin/env", type: "symlink", target: "/usr/bin/busybox" },
    ]);
    expect(spec.layers[1]).toEqual([
      { path: LOCAL_PATH_PROVISIONER_PATH, type: "file", content: "/cache/local-path-provisioner", mode: 0o755 },
    ]);
    expect(spec.config.env?.[0]?.split("=")[1]?.split(":")).toContain("/usr/bin");
    expect(layerNames).toHaveLength(spec.layers.length);
  });
});
