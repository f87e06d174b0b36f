/**
 * check() never hands the engine a secret: no failure names a property (the engine would print
 * that property's value as the program gave it), and no reason quotes a kubeconfig or a token, in
 * any form, whatever is wrong with them. A token pasted with its line's end is trimmed.
 */
import { generateKeyPairSync } from "node:crypto";
import { pulumiProvider as cluster, type ClusterInputs } from "../../../../core/resources/cluster.js";
import { UNKNOWN } from "../../../../core/resources/inputs.js";
import { pulumiProvider as peeringToken, type PeeringTokenInputs } from "../../../../core/resources/peering-token.js";
import { pulumiProvider as peering, type PeeringInputs } from "../../../../core/resources/peering.js";
import { pulumiProvider as tunnel, type TunnelInputs } from "../../../../core/resources/tunnel.js";

const keyPem = generateKeyPairSync("ec", { namedCurve: "prime256v1" })
  .privateKey.export({ type: "pkcs8", format: "pem" })
  .toString();
const keyData = Buffer.from(keyPem).toString("base64");
const TOKEN = "plt_0123456789abcdef.ZmFrZS1zZWNyZXQtb2YtYS10b2tlbg";

/** A kubeconfig as kubectl writes it (YAML), its user holding `keyPem`. */
function kubeconfigYaml(server = "https://10.0.0.1:6443", user = "admin"): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: x",
    "  cluster:",
    `    server: ${server}`,
    "    certificate-authority-data: Y2E=",
    "users:",
    `- name: ${user}`,
    "  user:",
    "    client-certificate-data: Y2VydA==",
    `    client-key-data: ${keyData}`,
    "contexts:",
    "- name: x",
    "  context: { cluster: x, user: admin }",
    "current-context: x",
    "",
  ].join("\n");
}

/** Kubeconfigs wrong in every way a check tells apart, each holding the key. */
const MALFORMED: Record<string, string> = {
  "bad indentation after the key": kubeconfigYaml().replace(
    `client-key-data: ${keyData}`,
    `client-key-data: ${keyData}\n   oops: ${keyData}`,
  ),
  "the key where a mapping belongs": kubeconfigYaml().replace("  user:\n", `  user: ${keyData}\n    x:\n`),
  "an alias and a tag made of the key": kubeconfigYaml().replace(
    `client-key-data: ${keyData}`,
    `client-key-data: *${keyData}\n    other: !${keyData} y`,
  ),
  "no user for the context": kubeconfigYaml(undefined, "someone-else"),
  "a server that is not a URL": kubeconfigYaml(`${keyData}`),
  "no kubeconfig at all": `client-key-data: ${keyData}`,
};

/** Every form in which the key or the token could leak: as given, decoded, and line by line. */
const SECRET_FORMS = [
  keyData,
  keyPem,
  ...keyPem.split("\n").filter((line) => line.length > 20),
  TOKEN,
  TOKEN.split(".")[1]!,
];

/** The failures, after asserting none names a property and none quotes a secret. */
function safe(failures: readonly { property: string; reason: string }[] | undefined): string[] {
  const reasons = (failures ?? []).map((f) => f.reason);
  expect((failures ?? []).map((f) => f.property).filter((p) => p !== "")).toEqual([]);
  for (const form of SECRET_FORMS) expect(JSON.stringify(failures)).not.toContain(form);
  return reasons;
}

const goodKubeconfig = kubeconfigYaml();
const handover = { clusterId: "p1", authUrl: "https://10.0.0.2:8443", authCaCert: "ca", token: TOKEN };
const goodPeering: PeeringInputs = {
  consumerKubeconfig: goodKubeconfig,
  consumerClusterId: "c1",
  provider: handover,
  resources: { sharePercent: 50 },
};
const inBand: PeeringInputs = {
  ...goodPeering,
  approach: "in-band",
  provider: undefined as never,
  providerKubeconfig: goodKubeconfig,
  tunnel: { serverAddress: "203.0.113.7" },
};
const goodTunnel: TunnelInputs = {
  consumerKubeconfig: goodKubeconfig,
  consumerClusterId: "c1",
  providerClusterId: "p1",
  providerClusterName: "p",
  tenantNamespace: "t",
  serverAddress: "203.0.113.7",
};
const goodCluster: ClusterInputs = {
  name: "a",
  kubeconfig: goodKubeconfig,
  podCidr: "10.100.0.0/16",
  serviceCidr: "10.200.0.0/16",
};
const goodToken: PeeringTokenInputs = {
  kubeconfig: goodKubeconfig,
  clusterId: "p1",
  authUrl: "https://10.0.0.2:8443",
  authCaCert: "ca",
};

/** Each resource's kubeconfig inputs, as a check of inputs with `text` in that input. */
const KUBECONFIG_INPUTS: [
  string,
  (text: string) => Promise<readonly { property: string; reason: string }[] | undefined>,
][] = [
  [
    "Cluster kubeconfig",
    async (text) => (await cluster.check!(goodCluster, { ...goodCluster, kubeconfig: text })).failures,
  ],
  [
    "PeeringToken kubeconfig",
    async (text) => (await peeringToken.check!(goodToken, { ...goodToken, kubeconfig: text })).failures,
  ],
  [
    "Peering consumerKubeconfig",
    async (text) => (await peering.check!(goodPeering, { ...goodPeering, consumerKubeconfig: text })).failures,
  ],
  [
    "Peering providerKubeconfig",
    async (text) => (await peering.check!(inBand, { ...inBand, providerKubeconfig: text })).failures,
  ],
  [
    "Tunnel consumerKubeconfig",
    async (text) => (await tunnel.check!(goodTunnel, { ...goodTunnel, consumerKubeconfig: text })).failures,
  ],
];

describe("check() and secrets", () => {
  test("GIVEN good inputs with a real key WHEN checked THEN nothing fails (the malformed cases below fail for their fault alone)", async () => {
    for (const [, checkWith] of KUBECONFIG_INPUTS) expect(await checkWith(goodKubeconfig)).toEqual([]);
  });

  test.each(Object.entries(MALFORMED))(
    "GIVEN a kubeconfig with %s WHEN each resource checks it THEN the failure names the input and quotes nothing of it",
    async (_case, text) => {
      for (const [name, checkWith] of KUBECONFIG_INPUTS) {
        const input = name.split(" ")[1]!;
        const reasons = safe(await checkWith(text));
        expect([name, reasons]).toEqual([
          name,
          [expect.stringMatching(new RegExp(`^${input}: not a usable kubeconfig: `))],
        ]);
      }
    },
  );

  test("GIVEN a YAML fault WHEN checked THEN the reason says where it is", async () => {
    const reasons = safe(
      (await cluster.check!(goodCluster, { ...goodCluster, kubeconfig: MALFORMED["bad indentation after the key"]! }))
        .failures,
    );
    expect(reasons).toEqual([
      expect.stringMatching(/^kubeconfig: not a usable kubeconfig: it is not valid YAML at line 13, column \d+/),
    ]);
  });

  test("GIVEN a self-peering WHEN checked THEN it fails on provider.clusterId without quoting the handover", async () => {
    const reasons = safe(
      (await peering.check!(goodPeering, { ...goodPeering, provider: { ...handover, clusterId: "c1" } })).failures,
    );
    expect(reasons).toEqual([
      "provider.clusterId: a cluster cannot peer with itself (consumer and provider are both cluster c1)",
    ]);
  });

  test("GIVEN the token pasted into the auth URL WHEN checked THEN the failure names provider.authUrl and quotes nothing", async () => {
    const reasons = safe(
      (await peering.check!(goodPeering, { ...goodPeering, provider: { ...handover, authUrl: TOKEN } })).failures,
    );
    expect(reasons).toEqual(["provider.authUrl: is not an https URL"]);
  });

  test("GIVEN a token pasted with its line's end (or spaces) WHEN checked THEN it passes, trimmed, and the rest of the handover is as given", async () => {
    for (const pasted of [`${TOKEN}\n`, `${TOKEN}\r\n`, `  ${TOKEN} \n`]) {
      const result = await peering.check!(goodPeering, { ...goodPeering, provider: { ...handover, token: pasted } });
      expect(result).toEqual({ inputs: goodPeering, failures: [] });
    }
  });

  test("GIVEN a token broken across lines, or blank WHEN checked THEN it fails on provider.token without quoting it", async () => {
    const [head, tail] = [TOKEN.slice(0, 20), TOKEN.slice(20)];
    expect(
      safe(
        (await peering.check!(goodPeering, { ...goodPeering, provider: { ...handover, token: `${head}\n${tail}\n` } }))
          .failures,
      ),
    ).toEqual([expect.stringMatching(/^provider\.token: has whitespace inside it/)]);
    expect(
      safe((await peering.check!(goodPeering, { ...goodPeering, provider: { ...handover, token: "\n" } })).failures),
    ).toEqual(["provider.token: is empty"]);
  });

  test("GIVEN the handover not known yet (preview) WHEN checked THEN it is handed back as it is", async () => {
    const unknown = { ...goodPeering, provider: UNKNOWN as never };
    expect(await peering.check!(goodPeering, unknown)).toEqual({ inputs: unknown, failures: [] });
    const unknownToken = { ...goodPeering, provider: { ...handover, token: UNKNOWN } };
    expect(await peering.check!(goodPeering, unknownToken)).toEqual({ inputs: unknownToken, failures: [] });
  });
});
