/**
 * Which Kubernetes releases a Cluster accepts (core/cluster/kubernetes-release.ts), read from what
 * API servers report, managed offerings' suffixes included; and the window matches the releases the
 * local clusters build (scripts/versions.sh).
 */
import { readFileSync } from "node:fs";
import {
  releaseOf,
  releaseRefusal,
  supportedWindow,
  SUPPORTED_KUBERNETES_MINORS,
} from "../../../../core/cluster/kubernetes-release.js";

describe("the supported Kubernetes releases", () => {
  test("GIVEN what API servers report WHEN read THEN the release comes from major/minor, a managed '+' suffix read away, else from gitVersion", () => {
    expect(releaseOf({ major: "1", minor: "37", gitVersion: "v1.37.2" })).toEqual({
      major: 1,
      minor: 37,
      text: "v1.37.2",
    });
    expect(releaseOf({ major: "1", minor: "35+", gitVersion: "v1.35.4-eks-1a2b3c" })?.minor).toBe(35);
    expect(releaseOf({ major: "", minor: "", gitVersion: "v1.36.3-gke.100" })).toMatchObject({ major: 1, minor: 36 });
    expect(releaseOf({ gitVersion: "devel" })).toBeUndefined();
  });

  test("GIVEN each supported release WHEN judged THEN none is refused", () => {
    for (const minor of SUPPORTED_KUBERNETES_MINORS)
      expect(releaseRefusal({ major: "1", minor: String(minor), gitVersion: `v1.${minor}.0` })).toBeUndefined();
  });

  test("GIVEN a release below or above the window, or none WHEN judged THEN the refusal names the version and the window", () => {
    expect(releaseRefusal({ major: "1", minor: "34", gitVersion: "v1.34.4" })).toBe(
      "it runs Kubernetes v1.34.4, outside the supported releases (1.35 to 1.37): upgrade it, or peer it with a " +
        "release of pulumi-liqo that supports 1.34",
    );
    expect(releaseRefusal({ major: "1", minor: "38", gitVersion: "v1.38.0" })).toContain(
      "v1.38.0, outside the supported releases (1.35 to 1.37)",
    );
    expect(releaseRefusal({ gitVersion: "devel" })).toMatch(
      /names no release .*devel.*supported: Kubernetes 1\.35 to 1\.37/,
    );
  });

  test("GIVEN scripts/versions.sh WHEN its KUBERNETES_RELEASES are read THEN they are the supported window, the default among them", () => {
    const versions = readFileSync("scripts/versions.sh", "utf8");
    const releases = /^KUBERNETES_RELEASES="([^"]+)"$/m.exec(versions)![1]!.split(" ");
    expect(releases.map((release) => release.split(".").slice(0, 2).join("."))).toEqual(
      SUPPORTED_KUBERNETES_MINORS.map((minor) => `1.${minor}`),
    );
    expect(releases).toContain(/^KUBERNETES_VERSION=(\S+)$/m.exec(versions)![1]);
    expect(supportedWindow()).toBe("1.35 to 1.37");
  });
});
