/**
 * Every file the declarations make (codegen/files.ts: schema.json, the TypeScript SDK's generated
 * part) is what is committed: a declaration edited without `npm run generate` fails here, naming
 * the file. The Go, Python and .NET SDKs are held to schema.json by test/unit/plugin/sdks.test.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { generatedFiles } from "../../../codegen/files.js";
import { packageSchema } from "../../../codegen/schema.js";
import { GENERATED_MARK, resourceModule } from "../../../codegen/typescript.js";
import { PEERING } from "../../../declarations/index.js";
import { drawnInputsOf, secretStateOf, accessTypesOf } from "../../../declarations/derived.js";
import { RESOURCES } from "../../../declarations/index.js";
import { string } from "../../../declarations/vocabulary.js";

const REPO = join(__dirname, "..", "..", "..");
const version = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;

describe("generated files", () => {
  test("GIVEN the declarations WHEN generated THEN every generated file is the committed one", () => {
    const stale = Object.entries(generatedFiles(REPO, version))
      .filter(([path, content]) => readFileSync(join(REPO, path), "utf8") !== content)
      .map(([path]) => path);
    expect(stale).toEqual([]);
  });

  test("GIVEN Peering declared with one more input WHEN its SDK module is made THEN its Args have it, and the committed file is stale", () => {
    const added = {
      ...PEERING,
      inputs: { ...PEERING.inputs, priority: { type: string(), description: "A new input." } },
    };
    const made = resourceModule(added);
    expect(made.startsWith(GENERATED_MARK)).toBe(true);
    expect(made).toContain("readonly priority?: pulumi.Input<string>;");
    expect(made).not.toEqual(readFileSync(join(REPO, "sdk", "nodejs", "generated", "peering.ts"), "utf8"));
  });

  test("GIVEN the declarations WHEN the schema is made THEN each resource's inputs carry its declared secrecy and replacement", () => {
    const schema = packageSchema(version) as {
      resources: Record<string, { inputProperties: Record<string, { secret?: boolean; replaceOnChanges?: boolean }> }>;
    };
    const peering = schema.resources["liqo:index:Peering"]!.inputProperties;
    expect(peering["provider"]).toMatchObject({ secret: true });
    expect(peering["provider"]!.replaceOnChanges).toBeUndefined();
    expect(peering["consumer"]!.replaceOnChanges).toBe(true);
    expect(peering["resources"]!.replaceOnChanges).toBeUndefined();
  });
});

describe("what follows from a declaration", () => {
  test("GIVEN the Tunnel WHEN its code's inputs are drawn THEN each comes from its path in the schema's peering", () => {
    const tunnel = RESOURCES.find((declaration) => declaration.name === "Tunnel")!;
    expect(drawnInputsOf(tunnel)).toEqual({
      consumerKubeconfig: "peering.consumer.kubeconfig",
      consumerClusterId: "peering.consumer.clusterId",
      providerClusterId: "peering.providerClusterId",
      providerClusterName: "peering.providerClusterName",
      tenantNamespace: "peering.tenantNamespace",
    });
  });

  test("GIVEN the Peering WHEN its secret state is listed THEN the kubeconfigs drawn from clusters, the handover and the access are, nothing else", () => {
    expect(secretStateOf(PEERING, accessTypesOf(RESOURCES)).sort()).toEqual(
      ["access", "consumerKubeconfig", "provider", "providerKubeconfig"].sort(),
    );
    expect(secretStateOf(PEERING, accessTypesOf(RESOURCES), false)).not.toContain("access");
  });
});
