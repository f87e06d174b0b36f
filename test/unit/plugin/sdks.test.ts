/**
 * The SDKs of the plugin's other languages, committed under sdk/<language>: each is what
 * `scripts/sdk.sh` (the CLI's `pulumi package gen-sdk` through the toolchain's language host)
 * writes from schema.json now, so a schema change without regenerating fails here. Nothing of
 * them runs here (docs/plugin.md says why): the Python SDK is byte-compiled by the system python3,
 * the .NET project file is parsed as XML. No lab; about a second of generation.
 */
import { execa } from "execa";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tree } from "../../support/file-tree.js";

const REPO = join(__dirname, "..", "..", "..");
const LANGUAGES = ["go", "python", "dotnet"] as const;
const schema = JSON.parse(readFileSync(join(REPO, "schema.json"), "utf8")) as {
  name: string;
  version: string;
  description: string;
};

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

  test("GIVEN the .NET SDK WHEN its project file is parsed as XML THEN it packs Pulumi.Liqo at the schema's version, description and logo", async () => {
    // Python's XML parser, as the project has none of its own: a malformed file (such as a
    // description with an unescaped <Name>, which the generator writes as it is) fails the parse.
    const read = await execa("python3", [
      "-c",
      "import sys, json, xml.etree.ElementTree as E\n" +
        "root = E.parse(sys.argv[1]).getroot()\n" +
        "group = root.find('PropertyGroup')\n" +
        "print(json.dumps({'root': root.tag, 'sdk': root.get('Sdk'), 'version': group.findtext('Version'),\n" +
        "  'description': group.findtext('Description'), 'icon': group.findtext('PackageIcon'),\n" +
        "  'references': [r.get('Include') for r in root.iter('PackageReference')]}))",
      join(generated, "dotnet", "Pulumi.Liqo.csproj"),
    ]);
    expect(JSON.parse(read.stdout)).toEqual({
      root: "Project",
      sdk: "Microsoft.NET.Sdk",
      version: schema.version,
      description: schema.description,
      icon: "logo.png",
      references: ["Microsoft.SourceLink.GitHub", "Pulumi"],
    });
    // The package's icon is the project's own logo, read from the checkout, never downloaded.
    expect(readFileSync(join(generated, "dotnet", "logo.png"))).toEqual(readFileSync(join(REPO, "docs", "logo.png")));
    expect(JSON.parse(readFileSync(join(generated, "dotnet", "pulumi-plugin.json"), "utf8"))).toEqual({
      resource: true,
      name: schema.name,
      version: schema.version,
    });
  });
});
