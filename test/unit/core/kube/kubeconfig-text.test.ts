/** Kubeconfig text judged without the Kubernetes client: as the client takes it, never quoting it. */
import { KubeConfig } from "@kubernetes/client-node";
import { KubeconfigError, readKubeconfig, serverOfText } from "../../../../core/kube/kubeconfig-text.js";
import { forgeKubeconfig } from "../../../../core/kube/kubeconfig.js";

const SECRET = "c2VjcmV0LWtleQ==";

/** A kubeconfig as kubectl writes it, with `parts` changed. */
function yaml(parts: { server?: string; user?: string; current?: string; clusterName?: string } = {}): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${parts.clusterName ?? "c"}`,
    "  cluster:",
    `    server: ${parts.server ?? "https://10.0.0.1:6443/"}`,
    "contexts:",
    "- name: ctx",
    "  context:",
    "    cluster: c",
    `    user: ${parts.user ?? "admin"}`,
    `current-context: ${parts.current ?? "ctx"}`,
    "users:",
    "- name: admin",
    "  user:",
    `    client-key-data: ${SECRET}`,
    "",
  ].join("\n");
}

/** The text as @kubernetes/client-node takes it: its current server, or that it refuses it. */
function asClientTakesIt(text: string): string {
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch {
    return "refused";
  }
  const cluster = kc.getCurrentCluster();
  return cluster && kc.getCurrentUser() ? cluster.server : "no cluster or no user";
}

/** The same text as readKubeconfig takes it. */
function asReadHere(text: string): string {
  try {
    return readKubeconfig(text, "kubeconfig").server;
  } catch (error) {
    const reason = (error as KubeconfigError).reason;
    return /names no (cluster|user)/.test(reason) ? "no cluster or no user" : "refused";
  }
}

const CASES: Record<string, string> = {
  "a kubeconfig as kubectl writes it (its server's trailing slash dropped)": yaml(),
  "one as this project forges it (JSON)": forgeKubeconfig({
    name: "x",
    server: "https://10.0.0.2:6443",
    caPem: "ca",
    certPem: "cert",
    keyPem: "key",
  }),
  "a current context that names no context": yaml({ current: "elsewhere" }),
  "a context whose user is missing": yaml({ user: "someone-else" }),
  "a context whose cluster is missing": yaml({ clusterName: "other" }),
  "a cluster without a server": yaml().replace("    server: https://10.0.0.1:6443/\n", "    insecure: true\n"),
  "a cluster without a name": yaml().replace("- name: c\n", "- cluster:\n    x: 1\n  n: c\n"),
  "a context without a cluster": yaml().replace("    cluster: c\n", ""),
  "a user without a name": yaml().replace("- name: admin\n  user:", "- user:"),
  "no lists at all": "apiVersion: v1\nkind: Config\n",
};

describe("readKubeconfig", () => {
  test.each(Object.entries(CASES))(
    "GIVEN %s WHEN read THEN it is taken as the Kubernetes client takes it",
    (_, text) => {
      expect(asReadHere(text)).toBe(asClientTakesIt(text));
    },
  );

  test("GIVEN a kubeconfig WHEN read THEN its current server comes back, as serverOfText gives it", () => {
    expect(readKubeconfig(yaml(), "kubeconfig")).toEqual({ server: "https://10.0.0.1:6443" });
    expect(serverOfText(yaml())).toBe("https://10.0.0.1:6443");
    expect(serverOfText("not: [a kubeconfig")).toBeUndefined();
  });

  test.each([
    ["empty text", "  \n", /it is empty$/],
    ["a server that is not a URL", yaml({ server: "10.0.0.1" }), /the server of its current cluster is not a URL$/],
    [
      "YAML broken next to a key",
      yaml().replace(`client-key-data: ${SECRET}`, `client-key-data: ${SECRET}\n   - x`),
      /is not valid YAML at line \d+, column \d+/,
    ],
    ["a document that is no mapping", `${SECRET}\n`, /does not read as a kubeconfig/],
  ])("GIVEN %s WHEN read THEN the error names the input and quotes nothing of the text", (_, text, reason) => {
    let thrown: unknown;
    try {
      readKubeconfig(text, 'Cluster "a": kubeconfig');
    } catch (error) {
      thrown = error;
    }
    expect((thrown as KubeconfigError).isKubeconfigError).toBe(true);
    expect((thrown as Error).message).toMatch(/^Cluster "a": kubeconfig: not a usable kubeconfig: /);
    expect((thrown as Error).message).toMatch(reason);
    expect((thrown as Error).message).not.toContain(SECRET);
  });
});
