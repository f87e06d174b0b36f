/**
 * Local clusters are real: each answers /readyz, stores objects, signs approved client CSRs whose
 * certificates then authenticate with exactly the RBAC given, and the connectivity profiles cut
 * exactly what they say.
 */
import * as k8s from "@kubernetes/client-node";
import forge from "node-forge";
import { API_SERVER_PORT, getReadyz } from "../../local-cluster/control-plane.js";
import { clusterOf, setProfile, type ClusterState, type LabState } from "../../local-cluster/lab.js";
import { describeKubeError, statusOf } from "../../core/kube/errors.js";
import { forgeKubeconfig } from "../../core/kube/kubeconfig.js";
import { forgeRsaKeyPem } from "../../core/authentication/consumer-key.js";
import { nativeSigner } from "../../core/pki/x509.js";
import { poll } from "../../core/wait/poll.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab, withLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { canConnectTcp, udpArrives, withTcpListener } from "../support/probes.js";

/** Each test's bound: labs' starts, a CSR's signing and profile changes. */
const TEST_BOUND_MS = 5 * 60_000;
/** The bound of this file's set-up and clean-up: the shared lab. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS;

/** Creates a namespace and a Node object; both must read back. */
async function storesObjects(cluster: ClusterState): Promise<void> {
  const kc = adminConfig(cluster);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const ns = `check-${Date.now().toString(36)}`;
  await core.createNamespace({ body: { metadata: { name: ns } } });
  await core.createNode({ body: { metadata: { name: `node-${ns}`, labels: { test: "local-cluster" } } } });
  expect((await core.readNamespace({ name: ns })).metadata?.name).toBe(ns);
  expect((await core.readNode({ name: `node-${ns}` })).metadata?.labels?.["test"]).toBe("local-cluster");
  await core.deleteNode({ name: `node-${ns}` });
  await core.deleteNamespace({ name: ns });
}

/** A port no cluster component uses, for a listener that stands for any other service. */
const OTHER_PORT = 7070;

describe("local clusters", () => {
  let lab: LabState;
  beforeAll(async () => {
    lab = await sharedLab();
  }, HOOK_BOUND_MS);

  test(
    "GIVEN two clusters with different pod CIDRs WHEN up THEN each is ready and stores namespaces and nodes",
    async () => {
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      expect(a.podCidr).not.toBe(b.podCidr);
      expect(a.publicAddress).not.toBe(b.publicAddress);
      for (const cluster of [a, b]) {
        expect(await getReadyz(adminConfig(cluster))).toEqual({ status: 200, body: "ok" });
        await storesObjects(cluster);
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN two clusters asked for the same pod CIDR WHEN up THEN both run with it",
    async () => {
      await withLab(
        [
          { name: "x", podCidr: "10.50.0.0/16" },
          { name: "y", podCidr: "10.50.0.0/16" },
        ],
        {},
        async (same) => {
          expect(same.clusters.map((c) => c.podCidr)).toEqual(["10.50.0.0/16", "10.50.0.0/16"]);
          for (const cluster of same.clusters) {
            expect((await getReadyz(adminConfig(cluster))).status).toBe(200);
            await storesObjects(cluster);
          }
        },
      );
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN an approved kube-apiserver-client CSR WHEN signed THEN its certificate authenticates with exactly the RBAC given",
    async () => {
      const cluster = clusterOf(lab, "a");
      const admin = adminConfig(cluster);
      const core = admin.makeApiClient(k8s.CoreV1Api);
      const certificates = admin.makeApiClient(k8s.CertificatesV1Api);
      const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
      const suffix = Date.now().toString(36);
      const user = `csr-user-${suffix}`;
      const [allowed, other] = [`allowed-${suffix}`, `other-${suffix}`];
      for (const ns of [allowed, other]) await core.createNamespace({ body: { metadata: { name: ns } } });

      const keyPem = forgeRsaKeyPem();
      const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
      const csr = forge.pki.createCertificationRequest();
      csr.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
      csr.setSubject([{ name: "commonName", value: user }]);
      csr.sign(nativeSigner(keyPem), forge.md.sha256.create());
      const csrName = `test-${suffix}`;
      await certificates.createCertificateSigningRequest({
        body: {
          metadata: { name: csrName },
          spec: {
            request: Buffer.from(forge.pki.certificationRequestToPem(csr)).toString("base64"),
            signerName: "kubernetes.io/kube-apiserver-client",
            expirationSeconds: 600,
            usages: ["client auth"],
          },
        },
      });
      const pending = await certificates.readCertificateSigningRequest({ name: csrName });
      pending.status = {
        conditions: [{ type: "Approved", status: "True", reason: "TestApproval", message: "approved by the test" }],
      };
      await certificates.replaceCertificateSigningRequestApproval({ name: csrName, body: pending });
      const certificate = await poll(
        { step: "test", object: `CSR ${csrName} certificate`, endpoint: cluster.apiServerUrl },
        { timeoutMs: 60_000, intervalMs: 250 },
        async () => {
          const current = await certificates.readCertificateSigningRequest({ name: csrName });
          return current.status?.certificate
            ? { done: true, value: Buffer.from(current.status.certificate, "base64").toString() }
            : { done: false, state: JSON.stringify(current.status?.conditions ?? []) };
        },
      );

      await rbac.createNamespacedRole({
        namespace: allowed,
        body: {
          metadata: { name: "configmap-reader" },
          rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }],
        },
      });
      await rbac.createNamespacedRoleBinding({
        namespace: allowed,
        body: {
          metadata: { name: "configmap-reader" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "configmap-reader" },
          subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
        },
      });

      const ca = Buffer.from(admin.getCurrentCluster()!.caData!, "base64").toString();
      const identity = new k8s.KubeConfig();
      identity.loadFromString(
        forgeKubeconfig({
          name: user,
          server: cluster.apiServerUrl,
          caPem: ca,
          certPem: certificate,
          keyPem,
        }),
      );
      const asUser = identity.makeApiClient(k8s.CoreV1Api);
      const review = await identity.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: {} });
      expect(review.status?.userInfo?.username).toBe(user);
      const listed = await asUser.listNamespacedConfigMap({ namespace: allowed });
      expect(listed.items.map((c) => c.metadata?.name)).toContain("kube-root-ca.crt");
      const refusal = async (call: Promise<unknown>): Promise<number | undefined> =>
        call.then(
          () => 200,
          (e: unknown) => statusOf(e) ?? Number.NaN,
        );
      expect(await refusal(asUser.listNamespacedConfigMap({ namespace: other }))).toBe(403);
      expect(await refusal(asUser.listNamespacedSecret({ namespace: allowed }))).toBe(403);
      expect(await refusal(asUser.listNamespace())).toBe(403);
      expect(
        await refusal(asUser.createNamespacedConfigMap({ namespace: allowed, body: { metadata: { name: "nope" } } })),
      ).toBe(403);

      await certificates.deleteCertificateSigningRequest({ name: csrName });
      for (const ns of [allowed, other]) await core.deleteNamespace({ name: ns });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN the gateway-only profile THEN another cluster reaches only the gateway port, and the host only the API server; open restores both",
    async () => {
      const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
      try {
        await withTcpListener(b.netns, OTHER_PORT, async () => {
          await setProfile(lab, "gateway-only");
          expect(await canConnectTcp(a.netns, b.publicAddress, API_SERVER_PORT)).toBe(false);
          expect(await udpArrives(a.netns, b.netns, b.publicAddress, lab.gatewayPorts.from)).toBe(true);
          // The host keeps an operator's view: the API server answers, no other port does.
          const nodes = await adminConfig(b)
            .makeApiClient(k8s.CoreV1Api)
            .listNode()
            .catch((e: unknown) => {
              throw new Error(describeKubeError(e));
            });
          expect(Array.isArray(nodes.items)).toBe(true);
          expect(await canConnectTcp(undefined, b.publicAddress, OTHER_PORT)).toBe(false);

          await setProfile(lab, "open");
          expect(await canConnectTcp(a.netns, b.publicAddress, API_SERVER_PORT)).toBe(true);
          expect(await udpArrives(a.netns, b.netns, b.publicAddress, lab.gatewayPorts.from)).toBe(true);
          expect(await canConnectTcp(undefined, b.publicAddress, OTHER_PORT)).toBe(true);
        });
      } finally {
        await setProfile(lab, "open");
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN the nat profile THEN the cluster behind NAT reaches out, and is reached only through the ports its router forwards",
    async () => {
      await withLab(
        [{ name: "open" }, { name: "natted" }],
        { profile: "nat", behindNat: ["natted"] },
        async (natLab) => {
          const [open, natted] = [clusterOf(natLab, "open"), clusterOf(natLab, "natted")];
          expect(natted.address).not.toBe(natted.publicAddress);
          // Outbound through the router's masquerade.
          await withTcpListener(open.netns, OTHER_PORT, async () => {
            expect(await canConnectTcp(natted.netns, open.publicAddress, OTHER_PORT)).toBe(true);
          });
          // Inbound: the forwarded API server port answers from the host; nothing else gets in.
          expect((await getReadyz(adminConfig(natted))).status).toBe(200);
          await withTcpListener(natted.netns, OTHER_PORT, async () => {
            expect(await canConnectTcp(open.netns, natted.publicAddress, OTHER_PORT)).toBe(false);
            expect(await canConnectTcp(open.netns, natted.address, OTHER_PORT)).toBe(false);
          });
        },
      );
    },
    TEST_BOUND_MS,
  );
});
