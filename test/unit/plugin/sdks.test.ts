/**
 * The SDKs of the plugin's other languages, committed under sdk/<language>: each is what
 * `scripts/sdk.sh` (the CLI's `pulumi package gen-sdk` through the toolchain's language host)
 * writes from schema.json now, so a schema change without regenerating fails here. Nothing of
 * them runs here (docs/plugin.md says why): the Python SDK is byte-compiled by the system python3.
 * No lab; about a second of generation.
 */
import { execa } from "execa";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tree } from "../../support/file-tree.js";

const REPO = join(__dirname, "..", "..", "..");
const LANGUAGES = ["go", "python"] as const;

describe("the generated SDKs", () => {
  let generated: string;

  beforeAll(async () => {
    generated = mkdtempSync(join(tmpdir(), "pulumi-liqo-sdks-"));
    await execa("bash", [join(REPO, "scripts", "sdk.sh"), "--out", generated], { timeout: 60_000 });
  }, 90_000);
  afterAll(() => rmSync(generated, { recursive: true, force: true }));

  test.each(LANGUAGES)(
    "GIVEN schema.json WHEN the %s SDK is generated THEN it is the committed one (scripts/sdk.sh regenerates it)",
    (language) => {
      expect(tree(join(generated, language))).toEqual(tree(join(REPO, "sdk", language)));
    },
  );

  test("GIVEN the Python SDK WHEN byte-compiled by the system python3 THEN every module compiles", async () => {
    // The bytecode goes beside, not into, the generated tree.
    const cache = mkdtempSync(join(tmpdir(), "pulumi-liqo-pycache-"));
    try {
      const compiled = await execa("python3", ["-m", "compileall", "-q", join(generated, "python")], {
        env: { PYTHONPYCACHEPREFIX: cache },
        reject: false,
      });
      expect({ exitCode: compiled.exitCode, output: compiled.stdout + compiled.stderr }).toEqual({
        exitCode: 0,
        output: "",
      });
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
