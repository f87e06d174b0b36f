/** The conformance suite's images as specs: busybox's applets placed under a merged /usr, the references the suite names, each image's sh. */
import { busyboxEntries, E2E_IMAGE_REFERENCES, e2eImages, type E2eImageInputs } from "../../../image/e2e-images.js";

const MERGED = [
  { path: "/bin", target: "usr/bin" },
  { path: "/sbin", target: "usr/sbin" },
  { path: "/lib", target: "usr/lib" },
];

const inputs: E2eImageInputs = {
  agnhost: {
    path: "/cache/agnhost",
    version: "2.63.0",
    certificate: "/cache/localhost.crt",
    key: "/cache/localhost.key",
  },
  busybox: {
    path: "/usr/bin/busybox",
    applets: ["bin/sh", "usr/bin/wget", "usr/bin/env", "sbin/ifconfig", "usr/bin/nc", "bin/busybox"],
  },
  tools: {
    bash: "/usr/bin/bash",
    dig: "/usr/bin/dig",
    nc: "/usr/bin/nc.openbsd",
    curl: "/usr/bin/curl",
    getent: "/usr/bin/getent",
  },
  libraries: [{ path: "/lib/x86_64-linux-gnu/libc.so.6", source: "/usr/lib/x86_64-linux-gnu/libc.so.6" }],
  usrLinks: MERGED,
  coredns: "/cache/coredns",
  pause: "/cache/podtool",
};

describe("busyboxEntries", () => {
  test("GIVEN applets under /bin and /sbin on a merged /usr WHEN placed THEN each is a link under /usr to busybox, and the named ones are left out", () => {
    expect(busyboxEntries(inputs.busybox, MERGED, ["nc"])).toEqual([
      { path: "/usr/bin/busybox", type: "file", content: "/usr/bin/busybox", mode: 0o755 },
      { path: "/usr/bin/sh", type: "symlink", target: "/usr/bin/busybox" },
      { path: "/usr/bin/wget", type: "symlink", target: "/usr/bin/busybox" },
      { path: "/usr/bin/env", type: "symlink", target: "/usr/bin/busybox" },
      { path: "/usr/sbin/ifconfig", type: "symlink", target: "/usr/bin/busybox" },
    ]);
  });

  test("GIVEN a host without merged /usr WHEN placed THEN the applets stay where busybox puts them", () => {
    expect(busyboxEntries(inputs.busybox, []).map((e) => e.path)).toEqual([
      "/usr/bin/busybox",
      "/bin/sh",
      "/usr/bin/wget",
      "/usr/bin/env",
      "/sbin/ifconfig",
      "/usr/bin/nc",
    ]);
  });
});

describe("e2eImages", () => {
  test("GIVEN the machine's files WHEN the images are made THEN they carry the suite's references, agnhost's entrypoint and OpenBSD's nc", () => {
    const images = e2eImages(inputs);

    expect(images.map((i) => [i.spec.reference, ...i.aliases])).toEqual([
      ["registry.k8s.io/e2e-test-images/agnhost:2.63.0", E2E_IMAGE_REFERENCES.agnhostPrevious],
      ["registry.k8s.io/e2e-test-images/nginx:1.15-4"],
      ["registry.k8s.io/e2e-test-images/busybox:1.37.0-1", "registry.k8s.io/e2e-test-images/glibc-dns-testing:2.0.0"],
      ["registry.k8s.io/pause:3.10.2"],
    ]);
    const agnhost = images[0]!.spec;
    expect(agnhost.config).toMatchObject({ entrypoint: ["/agnhost"], cmd: ["pause"] });
    const files = agnhost.layers.flat();
    expect(files).toContainEqual({ path: "/usr/bin/nc", type: "file", content: "/usr/bin/nc.openbsd", mode: 0o755 });
    expect(files).toContainEqual({ path: "/coredns", type: "file", content: "/cache/coredns", mode: 0o755 });
    // What its test-webserver serves to the StatefulSet specs' readiness probe.
    expect(files).toContainEqual({
      path: "/localhost.crt",
      type: "file",
      content: "/cache/localhost.crt",
      mode: 0o644,
    });
    expect(files.filter((f) => f.path === "/usr/bin/nc")).toHaveLength(1);
    // agnhost's specs write for bash, as upstream's agnhost has it.
    expect(files.filter((f) => f.path === "/usr/bin/sh")).toEqual([
      { path: "/usr/bin/sh", type: "symlink", target: "bash" },
    ]);
    expect(files).toContainEqual({ path: "/usr/bin/bash", type: "file", content: "/usr/bin/bash", mode: 0o755 });
  });

  test("GIVEN the machine's files WHEN the nginx image is made THEN it is agnhost's files serving HTTP on port 80", () => {
    const images = e2eImages(inputs);
    const nginx = images.find((image) => image.spec.reference === E2E_IMAGE_REFERENCES.nginx)!.spec;

    expect(nginx.layers).toEqual(images[0]!.spec.layers);
    expect(nginx.config).toMatchObject({ entrypoint: ["/agnhost", "test-webserver"] });
  });

  test("GIVEN the machine's files WHEN the busybox image is made THEN its sh and env are busybox's, beside the real getent and dig, and it has no bash", () => {
    const busybox = e2eImages(inputs).find((image) => image.spec.reference === E2E_IMAGE_REFERENCES.busybox)!.spec;
    const files = busybox.layers.flat();

    // The specs compare busybox ash's words, and its env must print the variable `data-1`.
    expect(files.filter((f) => f.path === "/usr/bin/sh")).toEqual([
      { path: "/usr/bin/sh", type: "symlink", target: "/usr/bin/busybox" },
    ]);
    expect(files.filter((f) => f.path === "/usr/bin/env")).toEqual([
      { path: "/usr/bin/env", type: "symlink", target: "/usr/bin/busybox" },
    ]);
    expect(files).toContainEqual({ path: "/usr/bin/getent", type: "file", content: "/usr/bin/getent", mode: 0o755 });
    expect(files).toContainEqual({ path: "/usr/bin/dig", type: "file", content: "/usr/bin/dig", mode: 0o755 });
    expect(files.map((f) => f.path)).not.toContain("/usr/bin/bash");
    // The layer below the shell is agnhost's own: the nodes store it once.
    expect(busybox.layers[0]).toEqual(e2eImages(inputs)[0]!.spec.layers[0]);
  });
});
