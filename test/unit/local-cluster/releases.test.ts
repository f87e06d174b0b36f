/** The release a local cluster runs (local-cluster/releases.ts): which binaries, and what is said when they are not built. */
import { mkdtempSync, rmSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { labReleases, patchReleaseOf, releaseCommands } from "../../../local-cluster/releases.js";

const RELEASES = "1.35.4 1.36.3 1.37.2";

describe("a local cluster's Kubernetes release", () => {
  let cache: string;
  beforeEach(() => {
    cache = mkdtempSync(join(tmpdir(), "releases-test-"));
  });
  afterEach(() => rmSync(cache, { recursive: true, force: true }));

  test("GIVEN the releases env.sh hands over WHEN a minor is asked for THEN its pinned patch release is found, or the supported ones named", () => {
    const releases = labReleases({ LIQO_KUBERNETES_RELEASES: RELEASES });
    expect(patchReleaseOf("1.37", releases)).toBe("1.37.2");
    expect(() => patchReleaseOf("1.34", releases)).toThrow("--kubernetes 1.34: expected one of 1.35, 1.36, 1.37");
    expect(() => labReleases({})).toThrow(/LIQO_KUBERNETES_RELEASES is not set; source scripts\/env\.sh/);
  });

  test("GIVEN a release not built WHEN its binaries are asked for THEN the error names what is missing and the command that builds it", () => {
    expect(() => releaseCommands("1.35", { LIQO_KUBERNETES_RELEASES: RELEASES, LIQO_CACHE: cache })).toThrow(
      /^--kubernetes 1\.35: Kubernetes 1\.35\.4 is not built \(no .*kubernetes-1\.35\.4\/bin\/kube-apiserver.*\); run scripts\/toolchain\.sh kubernetes 1\.35$/,
    );
  });

  test("GIVEN a release built in the cache WHEN its binaries are asked for THEN each is its cache directory's", () => {
    for (const [dir, names] of [
      ["kubernetes-1.37.2", ["kube-apiserver", "kube-controller-manager", "kube-scheduler"]],
      ["kubernetes-node-1.37.2", ["kubelet", "kube-proxy"]],
    ] as const) {
      mkdirSync(join(cache, dir, "bin"), { recursive: true });
      for (const name of names) writeFileSync(join(cache, dir, "bin", name), "");
    }
    expect(releaseCommands("1.37", { LIQO_KUBERNETES_RELEASES: RELEASES, LIQO_CACHE: cache })).toEqual({
      apiServer: join(cache, "kubernetes-1.37.2/bin/kube-apiserver"),
      controllerManager: join(cache, "kubernetes-1.37.2/bin/kube-controller-manager"),
      scheduler: join(cache, "kubernetes-1.37.2/bin/kube-scheduler"),
      kubelet: join(cache, "kubernetes-node-1.37.2/bin/kubelet"),
      kubeProxy: join(cache, "kubernetes-node-1.37.2/bin/kube-proxy"),
    });
  });
});
