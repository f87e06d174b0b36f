/**
 * `npm run release -- VERSION` on a clone of this repository: one version for the package, the
 * plugin's schema, the SDKs and the agent image, a changelog entry naming that image and the
 * commits since the last tag, one commit and its tag. It refuses, changing nothing, a version that
 * is not above the current one, a tag that exists and a working tree with changes.
 */
import { execa } from "execa";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const REPO = join(__dirname, "..", "..");
/** The release's bound: a build of the clone (tsc, the agent bundle) and the SDKs' generation, on a loaded 2-core machine. */
const TEST_BOUND_MS = 8 * 60_000;

/** A git identity for the clone's commits, whatever the machine has configured. */
const GIT_ENV = {
  GIT_AUTHOR_NAME: "release test",
  GIT_AUTHOR_EMAIL: "release-test@example.invalid",
  GIT_COMMITTER_NAME: "release test",
  GIT_COMMITTER_EMAIL: "release-test@example.invalid",
};

const read = (dir: string, file: string): string => readFileSync(join(dir, file), "utf8");

describe("npm run release", () => {
  let dir: string;
  let clone: string;
  const git = (...args: string[]) => execa("git", args, { cwd: clone, env: GIT_ENV });
  const release = (...args: string[]) =>
    execa("bash", ["scripts/release.sh", ...args], { cwd: clone, env: GIT_ENV, reject: false, stdin: "ignore" });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pulumi-liqo-release-"));
    clone = join(dir, "repo");
    await execa("git", ["clone", "--quiet", REPO, clone]);
    // The clone builds with this checkout's dependencies (no registry is asked).
    symlinkSync(join(REPO, "node_modules"), join(clone, "node_modules"));
    await execa("bash", ["-c", "printf 'node_modules\\n' >> .git/info/exclude"], { cwd: clone });
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test(
    "GIVEN a clean clone WHEN released as the next minor version THEN the package, schema and SDKs carry it, the " +
      "changelog names the agent image of that build and the commits since, and one commit is tagged; WHEN asked " +
      "again, for a lower version or on a changed tree THEN it refuses and changes nothing",
    async () => {
      const current = JSON.parse(read(clone, "package.json")).version as string;
      const [major, minor] = current.split(".").map(Number);
      const next = `${major}.${minor! + 1}.0`;
      const head = (await git("rev-parse", "HEAD")).stdout;
      const subject = (await git("log", "-1", "--format=%s")).stdout;

      const made = await release(next);
      expect(made.stderr).toContain(`release: ${current} -> ${next}`);
      expect(made.exitCode).toBe(0);

      expect(JSON.parse(read(clone, "package.json")).version).toBe(next);
      expect(JSON.parse(read(clone, "package-lock.json")).version).toBe(next);
      expect(JSON.parse(read(clone, "schema.json")).version).toBe(next);
      expect(read(clone, "sdk/dotnet/Pulumi.Liqo.csproj")).toContain(`<Version>${next}</Version>`);
      const build = JSON.parse(read(clone, "dist/core/cluster/agent-build.json")) as { image: string; build: string };
      expect(build.image).toBe(`pulumi-liqo.local/agent:${next}-${build.build}`);
      const changelog = read(clone, "CHANGELOG.md");
      const entry = changelog.slice(changelog.indexOf(`## ${next} (`));
      expect(entry).toContain(`Agent image: \`${build.image}\``);
      expect(entry).toContain(`- ${subject}`);
      // Above the earlier releases' entries.
      expect(changelog.indexOf(`## ${next} (`)).toBeLessThan(changelog.indexOf(`## ${current}`));

      expect((await git("log", "-1", "--format=%s")).stdout).toBe(`Release ${next}`);
      expect((await git("rev-parse", "HEAD~1")).stdout).toBe(head);
      expect((await git("rev-parse", `v${next}^{commit}`)).stdout).toBe((await git("rev-parse", "HEAD")).stdout);
      expect((await git("status", "--porcelain")).stdout).toBe("");

      // Refusals change nothing.
      const released = (await git("rev-parse", "HEAD")).stdout;
      const again = await release(next);
      expect(again.exitCode).not.toBe(0);
      expect(again.stderr).toContain(`VERSION ${next} is not above the current version ${next}`);
      const lower = await release(current);
      expect(lower.exitCode).not.toBe(0);
      expect(lower.stderr).toContain(`VERSION ${current} is not above the current version ${next}`);
      expect((await release("1.x")).stderr).toContain('VERSION "1.x" is not semver');
      writeFileSync(join(clone, "README.md"), `${read(clone, "README.md")}\nchanged\n`);
      const dirty = await release(`${major}.${minor! + 2}.0`);
      expect(dirty.exitCode).not.toBe(0);
      expect(dirty.stderr).toContain("the working tree has changes");
      expect(JSON.parse(read(clone, "package.json")).version).toBe(next);
      expect((await git("rev-parse", "HEAD")).stdout).toBe(released);
    },
    TEST_BOUND_MS,
  );
});
