/**
 * What a no-change `pulumi preview` makes the dynamic provider host load: each resource shim, then
 * its `check` and `diff`. Neither needs a cluster, so neither may load the Kubernetes client
 * (about 0.4 s and 80 MB): the shims load their steps on first need (create, read, update,
 * delete). Each shim runs in a fresh node process, as the host loads it: the built module.
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { forgeKubeconfig } from "../../../../core/kube/kubeconfig.js";

const DIST = join(dirname(require.resolve("pulumi-liqo/package.json")), "dist", "core");

/** The consumer's kubeconfig, as the Peering and the Tunnel take it. */
const kubeconfig = forgeKubeconfig({
  name: "b",
  server: "https://10.0.0.2:6443",
  caPem: "-",
  certPem: "-",
  keyPem: "-",
});
const cluster = { name: "b", kubeconfig, podCidr: "10.100.0.0/16", serviceCidr: "10.200.0.0/16" };
const clusterOuts = {
  ...cluster,
  clusterId: "00000000000000bb",
  apiServerUrl: "https://10.0.0.2:6443",
  authUrl: "https://10.0.0.2:8443",
  authCaCert: "auth-ca",
  gatewayEndpoint: "10.0.0.2:51820",
};
const token = { kubeconfig, clusterId: "00000000000000aa", authUrl: "https://10.0.0.1:8443", authCaCert: "auth-ca" };
const peering = {
  consumerKubeconfig: kubeconfig,
  consumerClusterId: "00000000000000bb",
  provider: { ...token, token: "plt_0123456789abcdef_secret0" },
  resources: { cpu: "2", memory: "4Gi", pods: 20 },
};
const record = {
  providerClusterId: "00000000000000aa",
  providerClusterName: "a",
  tenantNamespace: "liqo-tenant-00000000000000bb",
  requestName: "00000000000000bb",
  virtualNodeName: "liqo-a",
  offer: { cpu: "2", memory: "4Gi", pods: 20 },
  providerApiServerUrl: "https://10.0.0.1:6443",
  status: "Ready",
};
const tunnel = {
  consumerKubeconfig: kubeconfig,
  consumerClusterId: "00000000000000bb",
  providerClusterId: "00000000000000aa",
  providerClusterName: "a",
  tenantNamespace: "liqo-tenant-00000000000000bb",
  serverAddress: "10.0.0.1",
};

/** Each shim with the state a stack holds and new inputs: unchanged, and changed in place. */
const SHIMS = {
  cluster: { olds: clusterOuts, news: cluster, changed: { ...cluster, podCidr: "10.101.0.0/16" } },
  "peering-token": {
    olds: { ...token, token: "plt_x", tokenId: "x" },
    news: token,
    changed: { ...token, authUrl: "https://10.0.0.9:8443" },
  },
  peering: {
    olds: { ...peering, ...record, provider: token },
    news: peering,
    changed: { ...peering, resources: { cpu: "3", memory: "4Gi", pods: 20 } },
  },
  tunnel: {
    olds: { ...tunnel, status: "Connected" },
    news: tunnel,
    changed: { ...tunnel, port: 51821 },
  },
} as const;

/** What the child process saw: the packages loaded after each stage, and what check and diff answered. */
interface Seen {
  readonly afterPreview: string[];
  readonly failures: unknown[];
  readonly unchanged: boolean;
  readonly changed: boolean;
  readonly afterSteps: string[];
}

/**
 * Loads shim `name` in a fresh node process, runs check and both diffs, lists the packages then
 * loaded; then loads `steps` (the module its create would load) and lists them again.
 */
function previewIn(name: keyof typeof SHIMS, steps: string): Seen {
  const script = `
    const packages = () => [...new Set(Object.keys(require.cache)
      .map((path) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(path)?.[1]).filter(Boolean))].sort();
    const { olds, news, changed } = ${JSON.stringify(SHIMS[name])};
    (async () => {
      const { pulumiProvider: provider } = require(${JSON.stringify(join(DIST, "resources", `${name}.js`))});
      const checked = await provider.check(olds, news);
      const unchanged = await provider.diff("id", olds, checked.inputs);
      const diffed = await provider.diff("id", olds, changed);
      const afterPreview = packages();
      require(${JSON.stringify(join(DIST, steps))});
      process.stdout.write(JSON.stringify({
        afterPreview, failures: checked.failures, unchanged: unchanged.changes, changed: diffed.changes,
        afterSteps: packages(),
      }));
    })().catch((error) => { process.stderr.write(String(error.stack)); process.exit(1); });`;
  const child = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 60_000 });
  if (child.status !== 0) throw new Error(`shim ${name}: exited ${child.status}: ${child.stderr}`);
  return JSON.parse(child.stdout) as Seen;
}

const CLIENT = "@kubernetes/client-node";

describe("a resource shim during a no-change preview", () => {
  test.each([
    ["cluster", "cluster/lifecycle.js"],
    ["peering-token", "authentication/tokens.js"],
    ["peering", "peering/lifecycle.js"],
    ["tunnel", "network-fabric/tunnel-lifecycle.js"],
  ] as const)(
    "GIVEN the %s shim WHEN check and diff run THEN the Kubernetes client is not loaded, and its steps (%s) load it",
    (name, steps) => {
      const seen = previewIn(name, steps);
      expect(seen.failures).toEqual([]);
      expect([seen.unchanged, seen.changed]).toEqual([false, true]);
      // Only the YAML parser that judges kubeconfigs: nothing that talks to a cluster.
      expect(seen.afterPreview).toEqual(["js-yaml"]);
      // The same look sees the client once the steps are loaded, so its absence above is no blind spot.
      expect(seen.afterSteps).toContain(CLIENT);
    },
  );
});

describe("a resource shim's first step", () => {
  test("GIVEN the built peering shim WHEN its read loads the steps THEN the Kubernetes client comes from the bundle, and from nowhere else", () => {
    const bundle = join(DIST, "..", "vendor", "kubernetes-client.cjs");
    const script = `
      const { olds } = ${JSON.stringify(SHIMS.peering)};
      const { pulumiProvider: provider } = require(${JSON.stringify(join(DIST, "resources", "peering.js"))});
      // The read fails (no cluster behind this kubeconfig); what it loaded on the way is what counts.
      provider.read("id", olds).catch(() => undefined).finally(() => {
        const loaded = Object.keys(require.cache);
        process.stdout.write(JSON.stringify({
          bundle: loaded.includes(${JSON.stringify(bundle)}),
          package: loaded.filter((path) => path.includes("/node_modules/${CLIENT}/")).length,
        }));
        process.exit(0);
      });`;
    const child = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 60_000 });
    expect(child.stderr).toBe("");
    expect(JSON.parse(child.stdout)).toEqual({ bundle: true, package: 0 });
  });
});
