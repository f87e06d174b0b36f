/** forgeKubeconfig: a kubeconfig with embedded certificates that client-node reads back unchanged. */
import type { RequestOptions } from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import { forgeKubeconfig, type KubeconfigParts } from "../../../../core/kube/kubeconfig.js";

/** PEM-shaped text; the builder must carry it byte for byte, whatever it is. */
const pem = (label: string, body: string): string => `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;

const parts: KubeconfigParts = {
  name: "liqo-peer-b",
  server: "https://172.29.1.10:6443",
  caPem: pem("CERTIFICATE", "MIIBkTCCATegAwIBAgIUCAfake+CA/body==\nSECONDLINE"),
  certPem: pem("CERTIFICATE", "MIIBkDCCATagAwIBAgIUCLIENT+cert/body=="),
  keyPem: pem("EC PRIVATE KEY", "MHcCAQEEIKEY+private/body=="),
};

interface KubeconfigDocument {
  apiVersion: string;
  kind: string;
  clusters: Array<{ name: string; cluster: { server: string; "certificate-authority-data": string } }>;
  users: Array<{ name: string; user: { "client-certificate-data": string; "client-key-data": string } }>;
  contexts: Array<{ name: string; context: { cluster: string; user: string } }>;
  "current-context": string;
}

const decode = (base64: string): string => Buffer.from(base64, "base64").toString("utf8");
const load = (text: string): KubeConfig => {
  const kc = new KubeConfig();
  kc.loadFromString(text);
  return kc;
};

describe("forgeKubeconfig", () => {
  test("GIVEN certificates WHEN forged THEN the output is JSON of a v1 Config", () => {
    const doc = JSON.parse(forgeKubeconfig(parts)) as KubeconfigDocument;
    expect(doc.apiVersion).toBe("v1");
    expect(doc.kind).toBe("Config");
  });

  test("GIVEN certificates WHEN forged THEN the PEMs are embedded as base64 that decodes to them exactly", () => {
    const doc = JSON.parse(forgeKubeconfig(parts)) as KubeconfigDocument;
    expect(decode(doc.clusters[0]!.cluster["certificate-authority-data"])).toBe(parts.caPem);
    expect(decode(doc.users[0]!.user["client-certificate-data"])).toBe(parts.certPem);
    expect(decode(doc.users[0]!.user["client-key-data"])).toBe(parts.keyPem);
  });

  test("GIVEN certificates WHEN forged THEN the embedded data is strict base64, not raw PEM", () => {
    const doc = JSON.parse(forgeKubeconfig(parts)) as KubeconfigDocument;
    for (const data of [
      doc.clusters[0]!.cluster["certificate-authority-data"],
      doc.users[0]!.user["client-certificate-data"],
      doc.users[0]!.user["client-key-data"],
    ]) {
      expect(data).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
      expect(data).not.toContain("BEGIN");
    }
  });

  test("GIVEN a name WHEN forged THEN one cluster, one user and one context carry it and the current context is set to it", () => {
    const doc = JSON.parse(forgeKubeconfig(parts)) as KubeconfigDocument;
    expect(doc.clusters.map((c) => c.name)).toEqual([parts.name]);
    expect(doc.users.map((u) => u.name)).toEqual([parts.name]);
    expect(doc.contexts).toEqual([{ name: parts.name, context: { cluster: parts.name, user: parts.name } }]);
    expect(doc["current-context"]).toBe(parts.name);
    expect(doc.clusters[0]!.cluster.server).toBe(parts.server);
  });

  test("GIVEN a forged kubeconfig WHEN loaded by client-node THEN the current context, cluster and server read back", () => {
    const kc = load(forgeKubeconfig(parts));
    expect(kc.getCurrentContext()).toBe(parts.name);
    expect(kc.getCurrentCluster()?.name).toBe(parts.name);
    expect(kc.getCurrentCluster()?.server).toBe(parts.server);
    expect(kc.getCurrentUser()?.name).toBe(parts.name);
  });

  test("GIVEN a forged kubeconfig WHEN loaded by client-node THEN the CA, certificate and key decode to the PEMs given", () => {
    const kc = load(forgeKubeconfig(parts));
    expect(decode(kc.getCurrentCluster()!.caData!)).toBe(parts.caPem);
    expect(decode(kc.getCurrentUser()!.certData!)).toBe(parts.certPem);
    expect(decode(kc.getCurrentUser()!.keyData!)).toBe(parts.keyPem);
  });

  test("GIVEN a forged kubeconfig WHEN client-node builds TLS options from it THEN they hold the CA, certificate and key", async () => {
    const kc = load(forgeKubeconfig(parts));
    const options: RequestOptions = {};
    await kc.applyToHTTPSOptions(options);
    expect(String(options.ca)).toBe(parts.caPem);
    expect(String(options.cert)).toBe(parts.certPem);
    expect(String(options.key)).toBe(parts.keyPem);
  });

  test("GIVEN a name and server with characters JSON must escape WHEN forged and loaded THEN they read back unchanged", () => {
    const odd = { ...parts, name: 'lab "x"\\y', server: 'https://[fd00::1]:6443/path?q="1"' };
    const kc = load(forgeKubeconfig(odd));
    expect(kc.getCurrentContext()).toBe(odd.name);
    expect(kc.getCurrentCluster()?.server).toBe(odd.server);
  });

  test("GIVEN PEMs with non-ASCII text WHEN forged THEN the base64 is of their UTF-8 bytes", () => {
    const unicode = { ...parts, caPem: pem("CERTIFICATE", "données-é-ü") };
    const doc = JSON.parse(forgeKubeconfig(unicode)) as KubeconfigDocument;
    expect(decode(doc.clusters[0]!.cluster["certificate-authority-data"])).toBe(unicode.caPem);
  });
});
