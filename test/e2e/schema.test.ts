/**
 * schema.json against Pulumi's own rules and against the code: it validates against the package
 * meta-schema of the pulumi version this project builds (read from that Go module) and binds in
 * the real `pulumi` CLI; the SDK's argument types and outputs, the secrets it marks, and each
 * resource's `check()` and `diff()` agree with it, so the three cannot drift apart.
 */
import Ajv2020 from "ajv/dist/2020.js";
import { execa } from "execa";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ts from "typescript";
import { forgeKubeconfig } from "../../core/kube/kubeconfig.js";
import { pulumiProvider as cluster } from "../../core/resources/cluster.js";
import { pulumiProvider as namespaceOffloading } from "../../core/resources/namespace-offloading.js";
import { pulumiProvider as peering } from "../../core/resources/peering.js";
import { pulumiProvider as peeringToken } from "../../core/resources/peering-token.js";
import { pulumiProvider as tunnel } from "../../core/resources/tunnel.js";
import { declaredOutputs, sdkProgram } from "../support/sdk-program.js";
import { PULUMI_VERSION } from "../support/versions.js";

/** Each test's bound: the schema's validation and the pulumi CLI's binding of each resource. */
const TEST_BOUND_MS = 2 * 60_000;

const REPO = join(__dirname, "..", "..");
const schema = JSON.parse(readFileSync(join(REPO, "schema.json"), "utf8")) as PackageSchema;

interface PropertySpec {
  readonly secret?: boolean;
  readonly replaceOnChanges?: boolean;
}
interface ResourceSpec {
  readonly inputProperties: Record<string, PropertySpec>;
  readonly requiredInputs?: string[];
  readonly properties: Record<string, PropertySpec>;
}
interface PackageSchema {
  readonly resources: Record<string, ResourceSpec>;
}

/**
 * The five resources: their SDK file and names, and which property check() and diff() see for
 * an input the SDK turns into another (a Cluster passed as `consumer` arrives as its kubeconfig
 * for check() and its id for diff()); other inputs arrive under their own name.
 */
const RESOURCES = {
  Cluster: { file: "cluster.ts", args: "ClusterArgs", provider: cluster, checkedAs: {}, diffedAs: {} },
  PeeringToken: {
    file: "peering-token.ts",
    args: "PeeringTokenArgs",
    provider: peeringToken,
    checkedAs: { cluster: "kubeconfig" },
    diffedAs: { cluster: "kubeconfig" },
  },
  Peering: {
    file: "peering.ts",
    args: "PeeringArgs",
    provider: peering,
    checkedAs: { consumer: "consumerKubeconfig" },
    diffedAs: { consumer: "consumerClusterId", providerCluster: "providerClusterId" },
  },
  Tunnel: {
    file: "tunnel.ts",
    args: "TunnelArgs",
    provider: tunnel,
    checkedAs: { peering: "consumerKubeconfig" },
    diffedAs: { peering: "providerClusterId" },
  },
  NamespaceOffloading: {
    file: "namespace-offloading.ts",
    args: "NamespaceOffloadingArgs",
    provider: namespaceOffloading,
    checkedAs: { consumer: "consumerKubeconfig", peerings: "virtualNodes" },
    diffedAs: { consumer: "consumerClusterId", peerings: "virtualNodes" },
  },
} as const;
const renamed = (map: object, input: string): string => (map as Record<string, string>)[input] ?? input;
type ResourceName = keyof typeof RESOURCES;
const spec = (name: ResourceName): ResourceSpec => schema.resources[`liqo:index:${name}`]!;

/** The SDK's view, read with the TypeScript compiler: each Args interface's properties (optional or not) and each class's declared outputs. */
function readSdk(): { args: Map<string, Map<string, boolean>>; outputs: Map<string, string[]> } {
  // Each resource's Args and declared outputs are generated (sdk/nodejs/generated/), its class is written.
  const files = Object.values(RESOURCES).flatMap((r) => [
    join(REPO, "sdk", "nodejs", r.file),
    join(REPO, "sdk", "nodejs", "generated", r.file),
  ]);
  const program = sdkProgram(files);
  const checker = program.getTypeChecker();
  const args = new Map<string, Map<string, boolean>>();
  const outputs = new Map<string, string[]>();
  for (const file of files) {
    ts.forEachChild(program.getSourceFile(file)!, (node) => {
      if (ts.isInterfaceDeclaration(node) && node.name.text.endsWith("Args")) {
        const properties = checker.getPropertiesOfType(checker.getTypeAtLocation(node));
        args.set(node.name.text, new Map(properties.map((p) => [p.name, (p.flags & ts.SymbolFlags.Optional) !== 0])));
      }
      if (ts.isClassDeclaration(node) && node.name) {
        const name = node.name.text.replace(/Resource$/, "");
        outputs.set(name, [
          ...(outputs.get(name) ?? []),
          ...declaredOutputs(node).map((m) => (m.name as ts.Identifier).text),
        ]);
      }
    });
  }
  return { args, outputs };
}

/** Valid inputs of each resource, as check() and diff() receive them. */
const kubeconfig = forgeKubeconfig({
  name: "x",
  server: "https://10.0.0.1:6443",
  caPem: "ca",
  certPem: "cert",
  keyPem: "key",
});
const GOOD: Record<ResourceName, Record<string, unknown>> = {
  Cluster: { name: "a", kubeconfig, podCidr: "10.100.0.0/16", serviceCidr: "10.200.0.0/16" },
  PeeringToken: { kubeconfig, clusterId: "0123456789abcdef", authUrl: "https://10.0.0.1:8443", authCaCert: "ca" },
  Peering: {
    consumerKubeconfig: kubeconfig,
    consumerClusterId: "c1",
    provider: { clusterId: "p1", authUrl: "https://10.0.0.2:8443", authCaCert: "ca", token: "t" },
    resources: { pods: 10 },
    virtualNodeName: "liqo-p",
    providerClusterName: "p",
  },
  Tunnel: {
    consumerKubeconfig: kubeconfig,
    consumerClusterId: "c1",
    providerClusterId: "p1",
    providerClusterName: "p",
    tenantNamespace: "t",
    serverAddress: "203.0.113.7",
  },
  NamespaceOffloading: {
    consumerKubeconfig: kubeconfig,
    consumerClusterId: "0123456789abcdef",
    namespace: "shop",
    virtualNodes: ["liqo-p"],
  },
};
const CHANGED: Record<string, unknown> = {
  approach: "in-band",
  virtualNodeName: "other",
  rotation: "2",
  expiresInSeconds: 60,
  consumerClusterId: "c2",
  providerClusterId: "p2",
  namespace: "store",
  naming: "same",
  virtualNodes: ["liqo-p", "liqo-q"],
  kubeconfig: forgeKubeconfig({ name: "y", server: "https://10.0.0.9:6443", caPem: "ca", certPem: "c", keyPem: "k" }),
};

describe("schema.json", () => {
  test(
    "GIVEN schema.json WHEN validated against the Pulumi package meta-schema of the pulumi version built here THEN it has no errors",
    async () => {
      const { stdout } = await execa(
        "go",
        ["mod", "download", "-json", `github.com/pulumi/pulumi/pkg/v3@v${PULUMI_VERSION}`],
        { env: { GOFLAGS: "-mod=mod" } },
      );
      const metaSchema = JSON.parse(
        readFileSync(join(JSON.parse(stdout).Dir as string, "codegen", "schema", "pulumi.json"), "utf8"),
      );
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      const parses =
        (parse: (text: string) => unknown) =>
        (text: string): boolean => {
          try {
            parse(text);
            return true;
          } catch {
            return false;
          }
        };
      ajv.addFormat(
        "regex",
        parses((text) => new RegExp(text)),
      );
      ajv.addFormat(
        "uri-reference",
        parses((text) => new URL(text, "https://example.invalid/")),
      );
      const validate = ajv.compile(metaSchema);
      expect(validate(schema) ? [] : validate.errors).toEqual([]);
      // The validator has teeth: a property of an unknown type is an error.
      const broken = structuredClone(schema) as unknown as {
        resources: Record<string, { inputProperties: Record<string, unknown> }>;
      };
      broken.resources["liqo:index:Tunnel"]!.inputProperties["port"] = { type: "int" };
      expect(validate(broken)).toBe(false);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN schema.json WHEN the pulumi CLI binds each resource THEN it accepts them",
    async () => {
      const home = mkdtempSync(join(tmpdir(), "pulumi-liqo-schema-"));
      try {
        for (const name of Object.keys(RESOURCES)) {
          const result = await execa(
            "pulumi",
            ["package", "info", join(REPO, "schema.json"), "--module", "index", "--resource", name],
            { env: { PULUMI_HOME: home, PULUMI_SKIP_UPDATE_CHECK: "true" }, reject: false },
          );
          expect([name, result.exitCode, result.stderr]).toEqual([name, 0, ""]);
        }
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN the SDK WHEN its argument types and outputs are read THEN they are exactly the schema's inputs (required ones " +
      "required) and within its outputs",
    () => {
      const sdk = readSdk();
      for (const [name, resource] of Object.entries(RESOURCES) as [ResourceName, (typeof RESOURCES)[ResourceName]][]) {
        const properties = sdk.args.get(resource.args)!;
        expect([name, [...properties.keys()].sort()]).toEqual([name, Object.keys(spec(name).inputProperties).sort()]);
        expect([
          name,
          [...properties]
            .filter(([, optional]) => !optional)
            .map(([key]) => key)
            .sort(),
        ]).toEqual([name, [...(spec(name).requiredInputs ?? [])].sort()]);
        const known = new Set([...Object.keys(spec(name).properties), ...Object.keys(spec(name).inputProperties)]);
        expect([name, sdk.outputs.get(name)!.filter((output) => !known.has(output))]).toEqual([name, []]);
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN the schema's secrets WHEN the SDK is read THEN every secret output is marked secret there too",
    () => {
      for (const name of Object.keys(RESOURCES) as ResourceName[]) {
        const source = readFileSync(join(REPO, "sdk", "nodejs", "generated", RESOURCES[name].file), "utf8");
        const marked = new Set(
          [...(/additionalSecretOutputs: \[([^\]]*)\]/.exec(source)?.[1] ?? "").matchAll(/"(\w+)"/g)].map((m) => m[1]!),
        );
        for (const [property, propertySpec] of Object.entries(spec(name).properties)) {
          if (propertySpec.secret) expect([name, property, marked.has(property)]).toEqual([name, property, true]);
        }
        for (const [property, propertySpec] of Object.entries(spec(name).inputProperties)) {
          // Secret inputs are wrapped with pulumi.secret() where the SDK passes them on (sdk/nodejs/program-inputs.ts),
          // and kept secret in the state.
          if (propertySpec.secret) expect([name, property, marked.has(property)]).toEqual([name, property, true]);
        }
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN each required input left out WHEN check() runs THEN it fails naming that input (or the property the SDK passes it as)",
    async () => {
      for (const name of Object.keys(RESOURCES) as ResourceName[]) {
        for (const input of spec(name).requiredInputs ?? []) {
          const without = { ...GOOD[name] };
          delete without[renamed(RESOURCES[name].checkedAs, input)];
          const { failures } = await RESOURCES[name].provider.check!(GOOD[name] as never, without as never);
          // Failures carry no property (the engine would print its value, secret or not): each reason starts with its input.
          const named = (failures ?? []).map((f) => f.property || f.reason.slice(0, f.reason.indexOf(": ")));
          expect([name, input, named]).toEqual([
            name,
            input,
            expect.arrayContaining([renamed(RESOURCES[name].checkedAs, input)]),
          ]);
        }
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN each input the schema marks replaceOnChanges WHEN changed THEN diff() replaces; other inputs change in place",
    async () => {
      for (const name of Object.keys(RESOURCES) as ResourceName[]) {
        for (const [input, propertySpec] of Object.entries(spec(name).inputProperties)) {
          const property = renamed(RESOURCES[name].diffedAs, input);
          if (!(property in CHANGED)) continue;
          // A Peering's providerCluster exists in-band only.
          const inBand = name === "Peering" && input === "providerCluster" ? { approach: "in-band" } : {};
          const olds = { ...GOOD[name], ...inBand };
          const news = { ...olds, [property]: CHANGED[property] };
          const diff = await RESOURCES[name].provider.diff!("id", olds as never, news as never);
          expect([name, input, (diff.replaces ?? []).length > 0]).toEqual([
            name,
            input,
            propertySpec.replaceOnChanges === true,
          ]);
        }
      }
    },
    TEST_BOUND_MS,
  );
});
