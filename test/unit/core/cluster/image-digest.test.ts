/** The digest a Cluster reports for its agent's image, read from what the container runtime says. */
import { imageDigestOf } from "../../../../core/cluster/agent.js";

const DIGEST = `sha256:${"0123456789abcdef".repeat(4)}`;

describe("imageDigestOf", () => {
  test("GIVEN an image id as runtimes report it (a bare digest, a repository's digest) THEN the digest", () => {
    expect(imageDigestOf(DIGEST)).toBe(DIGEST);
    expect(imageDigestOf(`pulumi-liqo.local/agent@${DIGEST}`)).toBe(DIGEST);
    expect(imageDigestOf(`docker-pullable://registry.example:5000/agent@${DIGEST}`)).toBe(DIGEST);
  });

  test("GIVEN no id, a tag or a truncated digest THEN none", () => {
    expect(imageDigestOf(undefined)).toBeUndefined();
    expect(imageDigestOf("")).toBeUndefined();
    expect(imageDigestOf("pulumi-liqo.local/agent:0.1.0-3f2a9c1b7d0e")).toBeUndefined();
    expect(imageDigestOf(DIGEST.slice(0, -1))).toBeUndefined();
    expect(imageDigestOf(`${DIGEST}0`)).toBeUndefined();
  });
});
