/**
 * Authentication on real clusters: cluster `a` is installed as a provider and its auth service runs
 * in this process (talking to a's API server as admin); cluster `b` is the consumer. The identity
 * issued through a's own CSR API authenticates, and may touch only its tenant's peering objects;
 * every refusal leaves nothing behind; revocation removes everything of the consumer.
 */
import { waitForProjectKindsCounted } from "../../core/authentication/tenant-quota.js";
import * as k8s from "@kubernetes/client-node";
import forge from "node-forge";
import { createPublicKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { startAuthService, type RunningAuthService } from "../../agent/auth-service/index.js";
import type { Reporter } from "../../agent/reporter.js";
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  SYSTEM_NAMESPACE,
  consumerUserName,
  tenantNamespace,
} from "../../core/api/names.js";
import { forgeCustomResourceDefinitions } from "../../core/api/crds.js";
import {
  certificateValidity,
  forgeIdentityKubeconfig,
  forgeIdentityRequest,
  renewIdentity,
  requestIdentity,
  revokeIdentity,
  type Identity,
} from "../../core/authentication/identity.js";
import { parseAuthUrl, postToAuthService } from "../../core/authentication/auth-client.js";
import { RENEW_PATH } from "../../core/authentication/protocol.js";
import { removeTenant, TENANT_ROLE } from "../../core/authentication/tenant.js";
import {
  ensurePeeringTokenSecret,
  forgePeeringToken,
  getPeeringTokenRecord,
  parsePeeringToken,
  peeringTokenSecretName,
  revokePeeringToken,
} from "../../core/authentication/tokens.js";
import { forgeRsaKeyPem, publicKeyFingerprint } from "../../core/authentication/consumer-key.js";
import {
  approveCsr,
  forgeCertificateSigningRequest,
  submitCsr,
  waitForCertificate,
} from "../../core/authentication/certificates.js";
import {
  ensureAuthServiceTls,
  ensureClusterIdentity,
  ensureCustomResourceDefinitions,
  ensureSystemNamespace,
  forgeClusterId,
  getClusterIdentity,
  uninstallCluster,
} from "../../core/cluster/install.js";
import { forgeCertificateAuthority, forgeClientCertificate, nativeSigner } from "../../core/pki/x509.js";
import { clusterOf, type ClusterState, type LabState } from "../../local-cluster/lab.js";
import { loadKubeconfig, readOptional } from "../../core/kube/client.js";
import { statusOf } from "../../core/kube/errors.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";

/** Each test's bound: requests to the auth service and the CSR signer's answers, each with its own deadline. */
const TEST_BOUND_MS = 3 * 60_000;
/** The bound of this file's set-up and clean-up: the provider's and consumer's install steps and the auth service's start, or their uninstall. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS + 180_000;

const TIMEOUT_MS = 30_000;

function adminConfig(cluster: ClusterState): k8s.KubeConfig {
  return loadKubeconfig(readFileSync(cluster.kubeconfig, "utf8"), `cluster ${cluster.name} admin kubeconfig`);
}

function apiServerCa(kc: k8s.KubeConfig): string {
  const cluster = kc.getCurrentCluster()!;
  return cluster.caData
    ? Buffer.from(cluster.caData, "base64").toString("utf8")
    : readFileSync(cluster.caFile!, "utf8");
}

/** Every line the auth service said, to prove it never says a secret. */
function capturingReporter(): Reporter & { readonly lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (line) => void lines.push(line), warn: (line) => void lines.push(line) };
}

/** What the provider cluster holds of one consumer: its tenant namespace and CSRs. */
async function leftOf(kc: k8s.KubeConfig, consumerClusterId: string): Promise<{ namespace: boolean; csrs: string[] }> {
  const namespace = await readOptional(() =>
    kc.makeApiClient(k8s.CoreV1Api).readNamespace({ name: tenantNamespace(consumerClusterId) }),
  );
  const csrs = await kc
    .makeApiClient(k8s.CertificatesV1Api)
    .listCertificateSigningRequest({ labelSelector: `${REMOTE_CLUSTER_LABEL}=${consumerClusterId}` });
  return { namespace: namespace !== undefined, csrs: csrs.items.map((c) => c.metadata!.name!) };
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The error a promise rejects with (fails the test if it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error("expected a rejection, got success");
    },
    (error: unknown) => error as Error,
  );
}

/** SelfSubjectAccessReview as the identity: may it do `verb` on `resource` in `namespace`? */
async function may(
  identity: k8s.KubeConfig,
  verb: string,
  group: string,
  resource: string,
  namespace?: string,
): Promise<boolean> {
  const review = await identity.makeApiClient(k8s.AuthorizationV1Api).createSelfSubjectAccessReview({
    body: { spec: { resourceAttributes: { verb, group, resource, ...(namespace ? { namespace } : {}) } } },
  });
  return review.status?.allowed === true;
}

describe("authentication (out-of-band): provider a, consumer b", () => {
  let lab: LabState;
  let kcA: k8s.KubeConfig;
  let kcB: k8s.KubeConfig;
  let providerId: string;
  let consumerId: string;
  let authCaPem: string;
  let service: RunningAuthService | undefined;
  let reporter: ReturnType<typeof capturingReporter>;
  let authUrl: string;

  /** A token recorded on a; returned with a cleanup. */
  async function newToken(expiresAt?: Date): Promise<{ token: string; tokenId: string }> {
    const forged = forgePeeringToken();
    await ensurePeeringTokenSecret(kcA, {
      tokenId: forged.tokenId,
      secretHash: forged.secretHash,
      ...(expiresAt ? { expiresAt } : {}),
    });
    return forged;
  }

  /** Starts a separate auth service (its own failure budget), runs `body`, stops it. */
  async function withOwnService<T>(body: (url: string) => Promise<T>): Promise<T> {
    const own = await startAuthService({ kc: kcA, listen: { host: "127.0.0.1", port: 0 }, log: reporter });
    try {
      return await body(`https://127.0.0.1:${own.port}`);
    } finally {
      await own.close();
    }
  }

  beforeAll(async () => {
    lab = await sharedLab();
    const [a, b] = [clusterOf(lab, "a"), clusterOf(lab, "b")];
    kcA = adminConfig(a);
    kcB = adminConfig(b);
    // Provider a: what its Cluster resource installs.
    await ensureSystemNamespace(kcA);
    await ensureCustomResourceDefinitions(kcA);
    // As the install ends: until the quota controller knows the project's kinds, a tenant's quota
    // stays uncounted and the auth service refuses to issue identities.
    await waitForProjectKindsCounted(kcA, "test", 90_000);
    providerId = (
      await ensureClusterIdentity(kcA, {
        clusterName: "a",
        apiServerUrl: a.apiServerUrl,
        apiServerCaPem: apiServerCa(kcA),
      })
    ).clusterId;
    authCaPem = (await ensureAuthServiceTls(kcA, { hosts: ["127.0.0.1"] })).caPem;
    // Consumer b: only its identity is needed for authentication.
    await ensureSystemNamespace(kcB);
    consumerId = (
      await ensureClusterIdentity(kcB, {
        clusterName: "b",
        apiServerUrl: b.apiServerUrl,
        apiServerCaPem: apiServerCa(kcB),
      })
    ).clusterId;
    reporter = capturingReporter();
    service = await startAuthService({ kc: kcA, listen: { host: "127.0.0.1", port: 0 }, log: reporter });
    authUrl = `https://127.0.0.1:${service.port}`;
  }, HOOK_BOUND_MS);

  afterAll(async () => {
    try {
      await service?.close();
    } finally {
      if (kcA) await uninstallCluster(kcA, { keepDefinitions: true });
      if (kcB) await uninstallCluster(kcB, { keepDefinitions: true });
    }
  }, HOOK_BOUND_MS);

  test(
    "GIVEN an installed cluster WHEN installed again THEN its id and the auth CA stay; new hosts get a new certificate",
    async () => {
      const a = clusterOf(lab, "a");
      const again = await ensureClusterIdentity(kcA, {
        clusterName: "a",
        apiServerUrl: a.apiServerUrl,
        apiServerCaPem: apiServerCa(kcA),
      });
      expect(again.clusterId).toBe(providerId);
      expect(providerId).toMatch(/^[0-9a-f]{16}$/);
      // (Other suites' installs of the shared cluster may have recorded its CIDRs too.)
      expect(await getClusterIdentity(kcA)).toMatchObject({
        clusterId: providerId,
        clusterName: "a",
        apiServerUrl: a.apiServerUrl,
        apiServerCaPem: apiServerCa(kcA),
      });
      expect((await ensureAuthServiceTls(kcA, { hosts: ["127.0.0.1"] })).caPem).toBe(authCaPem);
      await ensureCustomResourceDefinitions(kcA);
      // A host the certificate does not cover: a new CA (and the old one restored for the other tests).
      const other = await ensureAuthServiceTls(kcA, { hosts: ["127.0.0.1", "auth.example.test"] });
      expect(other.caPem).not.toBe(authCaPem);
      expect((await ensureAuthServiceTls(kcA, { hosts: ["auth.example.test"] })).caPem).toBe(other.caPem);
      const core = kcA.makeApiClient(k8s.CoreV1Api);
      const secret = await core.readNamespacedSecret({ name: "auth-service-tls", namespace: SYSTEM_NAMESPACE });
      const tlsCrt = Buffer.from(secret.data!["tls.crt"]!, "base64").toString();
      expect(new (await import("node:crypto")).X509Certificate(tlsCrt).subjectAltName).toContain(
        "DNS:auth.example.test",
      );
      // The service in this process re-reads TLS only every 30 s: restart it on the new material.
      await service!.close();
      authCaPem = other.caPem;
      service = await startAuthService({ kc: kcA, listen: { host: "127.0.0.1", port: 0 }, log: reporter });
      authUrl = `https://127.0.0.1:${service.port}`;
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a valid token WHEN b requests an identity THEN it authenticates as its own user and may CRUD its " +
      "ResourceRequests, and nothing else",
    async () => {
      const { token, tokenId } = await newToken();
      try {
        const { keyPem, csrPem } = forgeIdentityRequest(consumerId);
        const identity = await requestIdentity({
          authUrl,
          authCaPem,
          token,
          consumerClusterId: consumerId,
          consumerClusterName: "b",
          csrPem,
          timeoutMs: TIMEOUT_MS,
        });
        expect(identity).toMatchObject({
          apiServerUrl: clusterOf(lab, "a").apiServerUrl,
          tenantNamespace: tenantNamespace(consumerId),
          providerClusterId: providerId,
          providerClusterName: "a",
        });
        expect(identity.apiServerCaPem).toBe(apiServerCa(kcA));

        const asB = loadKubeconfig(forgeIdentityKubeconfig(identity, keyPem), "identity kubeconfig");
        const who = await asB.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: {} });
        expect(who.status?.userInfo?.username).toBe(consumerUserName(consumerId));
        expect(who.status?.userInfo?.groups).toEqual(["system:authenticated"]);

        const tenant = identity.tenantNamespace;
        for (const verb of ["get", "list", "watch", "create", "update", "patch", "delete"])
          expect(await may(asB, verb, API_GROUP, "resourcerequests", tenant)).toBe(true);
        for (const verb of ["get", "list", "watch"])
          expect(await may(asB, verb, API_GROUP, "resourceoffers", tenant)).toBe(true);
        for (const verb of ["create", "update", "delete"])
          expect(await may(asB, verb, API_GROUP, "resourceoffers", tenant)).toBe(false);
        expect(await may(asB, "get", "", "secrets", tenant)).toBe(false);
        expect(await may(asB, "list", "", "secrets", tenant)).toBe(false);
        expect(await may(asB, "list", "", "pods", tenant)).toBe(false);
        expect(await may(asB, "create", "", "pods", tenant)).toBe(false);
        expect(await may(asB, "get", "", "configmaps", tenant)).toBe(false);
        expect(await may(asB, "create", "rbac.authorization.k8s.io", "rolebindings", tenant)).toBe(false);
        expect(await may(asB, "update", API_GROUP, "resourcerequests/status", tenant)).toBe(false);
        for (const verb of ["get", "create", "patch", "delete"])
          expect(await may(asB, verb, API_GROUP, "tunnelendpoints", tenant)).toBe(true);
        expect(await may(asB, "patch", API_GROUP, "tunnelendpoints/status", tenant)).toBe(false);
        expect(await may(asB, "get", API_GROUP, "tunnelendpoints", SYSTEM_NAMESPACE)).toBe(false);
        for (const elsewhere of ["default", SYSTEM_NAMESPACE, tenantNamespace(forgeClusterId())]) {
          expect(await may(asB, "list", API_GROUP, "resourcerequests", elsewhere)).toBe(false);
          expect(await may(asB, "create", API_GROUP, "resourcerequests", elsewhere)).toBe(false);
        }
        expect(await may(asB, "list", API_GROUP, "resourcerequests")).toBe(false); // all namespaces
        expect(await may(asB, "list", "", "namespaces")).toBe(false);
        expect(await may(asB, "list", "", "nodes")).toBe(false);
        expect(await may(asB, "create", "certificates.k8s.io", "certificatesigningrequests")).toBe(false);
        // The admin's view agrees: a SubjectAccessReview for the user alone.
        const sar = await kcA.makeApiClient(k8s.AuthorizationV1Api).createSubjectAccessReview({
          body: {
            spec: {
              user: consumerUserName(consumerId),
              resourceAttributes: { verb: "get", resource: "secrets", namespace: tenant },
            },
          },
        });
        expect(sar.status?.allowed).toBe(false);

        // Real calls, not only reviews.
        const custom = asB.makeApiClient(k8s.CustomObjectsApi);
        const request = {
          apiVersion: API_GROUP_VERSION,
          kind: "ResourceRequest",
          metadata: { name: "auth-test" },
          spec: { consumerClusterId: consumerId, consumerClusterName: "b", resources: { sharePercent: 10 } },
        };
        await custom.createNamespacedCustomObject({
          group: API_GROUP,
          version: "v1alpha1",
          namespace: tenant,
          plural: "resourcerequests",
          body: request,
        });
        await custom.patchNamespacedCustomObject(
          {
            group: API_GROUP,
            version: "v1alpha1",
            namespace: tenant,
            plural: "resourcerequests",
            name: "auth-test",
            body: [{ op: "replace", path: "/spec/resources/sharePercent", value: 20 }],
          },
          k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.JsonPatch),
        );
        const read = (await custom.getNamespacedCustomObject({
          group: API_GROUP,
          version: "v1alpha1",
          namespace: tenant,
          plural: "resourcerequests",
          name: "auth-test",
        })) as { spec: { resources: { sharePercent: number } } };
        expect(read.spec.resources.sharePercent).toBe(20);
        await custom.deleteNamespacedCustomObject({
          group: API_GROUP,
          version: "v1alpha1",
          namespace: tenant,
          plural: "resourcerequests",
          name: "auth-test",
        });
        const status = (call: Promise<unknown>): Promise<number | undefined> =>
          call.then(
            () => 200,
            (e: unknown) => statusOf(e),
          );
        const core = asB.makeApiClient(k8s.CoreV1Api);
        expect(await status(core.listNamespacedSecret({ namespace: tenant }))).toBe(403);
        expect(await status(core.listNamespacedPod({ namespace: tenant }))).toBe(403);
        expect(await status(core.listNamespace())).toBe(403);
        expect(
          await status(
            custom.listNamespacedCustomObject({
              group: API_GROUP,
              version: "v1alpha1",
              namespace: "default",
              plural: "resourcerequests",
            }),
          ),
        ).toBe(403);
        // The identity is the provider's: b's own API server does not know it.
        const onB = loadKubeconfig(
          forgeIdentityKubeconfig(
            { ...identity, apiServerUrl: clusterOf(lab, "b").apiServerUrl, apiServerCaPem: apiServerCa(kcB) },
            keyPem,
          ),
          "identity on b",
        );
        expect(await status(onB.makeApiClient(k8s.CoreV1Api).listNamespacedConfigMap({ namespace: "default" }))).toBe(
          401,
        );

        // A retried `pulumi up`: the same consumer asks again, gets a fresh certificate, and the
        // namespace and RBAC are reused; only the newest CSR is kept.
        const firstCsrs = (await leftOf(kcA, consumerId)).csrs;
        expect(firstCsrs).toHaveLength(1);
        const retry = forgeIdentityRequest(consumerId, keyPem);
        const again: Identity = await requestIdentity({
          authUrl,
          authCaPem,
          token,
          consumerClusterId: consumerId,
          consumerClusterName: "b",
          csrPem: retry.csrPem,
          timeoutMs: TIMEOUT_MS,
        });
        expect(again.certificatePem).not.toBe(identity.certificatePem);
        expect(again.tenantNamespace).toBe(tenant);
        const secondCsrs = (await leftOf(kcA, consumerId)).csrs;
        expect(secondCsrs).toHaveLength(1);
        expect(secondCsrs[0]).not.toBe(firstCsrs[0]);
        const asBAgain = loadKubeconfig(forgeIdentityKubeconfig(again, retry.keyPem), "second identity");
        expect(await may(asBAgain, "create", API_GROUP, "resourcerequests", tenant)).toBe(true);
        const rbac = kcA.makeApiClient(k8s.RbacAuthorizationV1Api);
        const binding = await rbac.readNamespacedRoleBinding({ name: TENANT_ROLE, namespace: tenant });
        expect(binding.subjects).toEqual([
          { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: consumerUserName(consumerId) },
        ]);
        const csr = await kcA
          .makeApiClient(k8s.CertificatesV1Api)
          .readCertificateSigningRequest({ name: secondCsrs[0]! });
        expect(csr.spec.signerName).toBe("kubernetes.io/kube-apiserver-client");
        expect(csr.spec.usages).toContain("client auth");
        expect(csr.spec.expirationSeconds).toBeGreaterThanOrEqual(600);
        expect(csr.metadata?.labels).toMatchObject({
          [MANAGED_BY_LABEL]: MANAGED_BY,
          [REMOTE_CLUSTER_LABEL]: consumerId,
        });

        // The token's Secret holds only the hash and never the token, in any encoding.
        const stored = await kcA
          .makeApiClient(k8s.CoreV1Api)
          .readNamespacedSecret({ name: peeringTokenSecretName(tokenId), namespace: SYSTEM_NAMESPACE });
        const secretPart = parsePeeringToken(token)!.secret;
        const raw = JSON.stringify(stored);
        const decoded = Object.values(stored.data ?? {})
          .map((v) => Buffer.from(v, "base64").toString("utf8"))
          .join("\n");
        for (const text of [raw, decoded]) {
          expect(text).not.toContain(secretPart);
          expect(text).not.toContain(Buffer.from(token).toString("base64"));
          expect(text).not.toContain(Buffer.from(secretPart).toString("base64"));
        }
        expect(Object.keys(stored.data ?? {}).sort()).toEqual(["secretHash"]);
        // ...and, since its first use, the consumer it is bound to (an id and a key's hash).
        expect(await getPeeringTokenRecord(kcA, tokenId)).toMatchObject({
          boundTo: { clusterId: consumerId, keySha256: publicKeyFingerprint(createPublicKey(keyPem)) },
        });
        // Nothing secret was logged.
        const said = reporter.lines.join("\n");
        for (const secret of [token, secretPart, keyPem, identity.certificatePem]) expect(said).not.toContain(secret);
        expect(said).toContain(`issued identity to consumer ${consumerId}`);
      } finally {
        await revokePeeringToken(kcA, tokenId);
        await removeTenant(kcA, consumerId);
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN an issued identity WHEN b revokes it THEN its tenant namespace, RBAC and CSRs are gone, and revoking again is a no-op",
    async () => {
      const { token, tokenId } = await newToken();
      try {
        const { keyPem, csrPem } = forgeIdentityRequest(consumerId);
        const identity = await requestIdentity({
          authUrl,
          authCaPem,
          token,
          consumerClusterId: consumerId,
          consumerClusterName: "b",
          csrPem,
          timeoutMs: TIMEOUT_MS,
        });
        expect(await leftOf(kcA, consumerId)).toMatchObject({ namespace: true });
        expect((await leftOf(kcA, consumerId)).csrs).toHaveLength(1);

        const revoked = await revokeIdentity({
          authUrl,
          authCaPem,
          certificatePem: identity.certificatePem,
          keyPem,
          timeoutMs: TIMEOUT_MS,
        });
        expect(revoked).toEqual({ revoked: true, tenantNamespace: tenantNamespace(consumerId) });
        expect(await leftOf(kcA, consumerId)).toEqual({ namespace: false, csrs: [] });
        const asB = loadKubeconfig(forgeIdentityKubeconfig(identity, keyPem), "revoked identity");
        expect(await may(asB, "create", API_GROUP, "resourcerequests", identity.tenantNamespace)).toBe(false);

        expect(
          await revokeIdentity({
            authUrl,
            authCaPem,
            certificatePem: identity.certificatePem,
            keyPem,
            timeoutMs: TIMEOUT_MS,
          }),
        ).toEqual({ revoked: false, tenantNamespace: tenantNamespace(consumerId) });

        // A certificate for the same user from another CA proves nothing.
        const stranger = forgeClientCertificate(forgeCertificateAuthority("not the cluster CA"), {
          commonName: consumerUserName(consumerId),
        });
        const refused = await rejectionOf(
          revokeIdentity({
            authUrl,
            authCaPem,
            certificatePem: stranger.cert,
            keyPem: stranger.key,
            timeoutMs: TIMEOUT_MS,
          }),
        );
        expect(refused.message).toContain(authUrl);
        expect(refused.message).toMatch(/HTTP 403: revocation refused/);
        // A cluster-signed certificate for another user (here: the lab's admin) is refused too.
        const admin = kcA.getCurrentUser()!;
        const adminRefused = await rejectionOf(
          revokeIdentity({
            authUrl,
            authCaPem,
            certificatePem: Buffer.from(admin.certData!, "base64").toString(),
            keyPem: Buffer.from(admin.keyData!, "base64").toString(),
            timeoutMs: TIMEOUT_MS,
          }),
        );
        expect(adminRefused.message).toMatch(/HTTP 403: revocation refused: client certificate subject/);
      } finally {
        await revokePeeringToken(kcA, tokenId);
        await removeTenant(kcA, consumerId);
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN b's token and identity WHEN c, holding the same token, asks as b, as itself, or as b with a token of its own, " +
      "or revokes b with a certificate for b's name THEN each is refused and b's tenant is untouched",
    async () => {
      // Its own service: four refusals must not spend the failure budget of the suite's service.
      await withOwnService(async (authUrl) => {
        const shared = await newToken();
        const own = await newToken();
        const cId = forgeClusterId();
        const [bKey, cKey] = [forgeRsaKeyPem(), forgeRsaKeyPem()];
        try {
          const identity = await requestIdentity({
            authUrl,
            authCaPem,
            token: shared.token,
            consumerClusterId: consumerId,
            consumerClusterName: "b",
            csrPem: forgeIdentityRequest(consumerId, bKey).csrPem,
            timeoutMs: TIMEOUT_MS,
          });
          const tenant = identity.tenantNamespace;
          const rbac = kcA.makeApiClient(k8s.RbacAuthorizationV1Api);
          const snapshot = async () => ({
            ...(await leftOf(kcA, consumerId)),
            namespaceVersion: (await kcA.makeApiClient(k8s.CoreV1Api).readNamespace({ name: tenant })).metadata
              ?.resourceVersion,
            bindingVersion: (await rbac.readNamespacedRoleBinding({ name: TENANT_ROLE, namespace: tenant })).metadata
              ?.resourceVersion,
            ownToken: (await getPeeringTokenRecord(kcA, own.tokenId))?.boundTo,
            c: await leftOf(kcA, cId),
          });
          const before = await snapshot();
          expect(before).toMatchObject({ namespace: true, ownToken: undefined, c: { namespace: false, csrs: [] } });
          const ask = (token: string, clusterId: string, key: string): Promise<Error> =>
            rejectionOf(
              requestIdentity({
                authUrl,
                authCaPem,
                token,
                consumerClusterId: clusterId,
                consumerClusterName: "c",
                csrPem: forgeIdentityRequest(clusterId, key).csrPem,
                timeoutMs: TIMEOUT_MS,
              }),
            );

          // c names b, with b's token: the token is b's (its id and its key), and c has only the id.
          const asB = await ask(shared.token, consumerId, cKey);
          expect(asB.message).toContain(authUrl);
          expect(asB.message).toContain(
            "HTTP 403: peering token refused: it is bound to the consumer that used it first",
          );
          // c as itself, with b's token: a token is for one consumer.
          expect((await ask(shared.token, cId, cKey)).message).toContain(
            "HTTP 403: peering token refused: it is bound to the consumer that used it first",
          );
          // c names b with a fresh token of its own: b's tenant is bound to b's key, whatever the token.
          const ownAsB = await ask(own.token, consumerId, cKey);
          expect(ownAsB.message).toContain(
            `HTTP 403: cluster ${consumerId} already holds an identity on this provider, bound to another key`,
          );
          expect(await snapshot()).toEqual(before);

          // A certificate for b's name with c's key, as the provider's CA signed such certificates before
          // tokens were bound: it may not revoke b.
          const { csrPem } = forgeIdentityRequest(consumerId, cKey);
          const csrName = await submitCsr(
            kcA,
            forgeCertificateSigningRequest({ consumerClusterId: consumerId, csrPem }),
          );
          await approveCsr(kcA, csrName);
          const forged = await waitForCertificate(kcA, csrName, { timeoutMs: TIMEOUT_MS });
          await kcA.makeApiClient(k8s.CertificatesV1Api).deleteCertificateSigningRequest({ name: csrName });
          const revokeRefused = await rejectionOf(
            revokeIdentity({ authUrl, authCaPem, certificatePem: forged, keyPem: cKey, timeoutMs: TIMEOUT_MS }),
          );
          expect(revokeRefused.message).toContain(
            `HTTP 403: revocation refused: the certificate's key is not the one consumer ${consumerId}'s identity is bound to`,
          );
          expect(await snapshot()).toEqual(before);

          // b itself is unaffected: it comes back with its token and key, and its identity still works.
          const asBAgain = loadKubeconfig(forgeIdentityKubeconfig(identity, bKey), "b's identity");
          expect(await may(asBAgain, "create", API_GROUP, "resourcerequests", tenant)).toBe(true);
          await requestIdentity({
            authUrl,
            authCaPem,
            token: shared.token,
            consumerClusterId: consumerId,
            consumerClusterName: "b",
            csrPem: forgeIdentityRequest(consumerId, bKey).csrPem,
            timeoutMs: TIMEOUT_MS,
          });
          const said = reporter.lines.join("\n");
          for (const secret of [shared.token, own.token, bKey, cKey]) expect(said).not.toContain(secret);
        } finally {
          await revokePeeringToken(kcA, shared.tokenId);
          await revokePeeringToken(kcA, own.tokenId);
          await removeTenant(kcA, consumerId);
          await removeTenant(kcA, cId);
        }
      });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a fresh token WHEN two consumers use it at the same moment THEN exactly one is issued an identity and the token is bound to it",
    async () => {
      await withOwnService(async (url) => {
        const { token, tokenId } = await newToken();
        const ids = [forgeClusterId(), forgeClusterId()];
        const keys = [forgeRsaKeyPem(), forgeRsaKeyPem()];
        try {
          const outcomes = await Promise.allSettled(
            ids.map((id, i) =>
              requestIdentity({
                authUrl: url,
                authCaPem,
                token,
                consumerClusterId: id,
                consumerClusterName: "racer",
                csrPem: forgeIdentityRequest(id, keys[i]).csrPem,
                timeoutMs: TIMEOUT_MS,
              }),
            ),
          );
          const winners = outcomes.flatMap((o, i) => (o.status === "fulfilled" ? [i] : []));
          expect(winners).toHaveLength(1);
          const [winner, loser] = [winners[0]!, 1 - winners[0]!];
          expect(String((outcomes[loser] as PromiseRejectedResult).reason)).toContain(
            "HTTP 403: peering token refused: it is bound to the consumer that used it first",
          );
          expect((await getPeeringTokenRecord(kcA, tokenId))?.boundTo).toEqual({
            clusterId: ids[winner],
            keySha256: publicKeyFingerprint(createPublicKey(keys[winner]!)),
          });
          expect(await leftOf(kcA, ids[loser]!)).toEqual({ namespace: false, csrs: [] });
        } finally {
          await revokePeeringToken(kcA, tokenId);
          for (const id of ids) await removeTenant(kcA, id);
        }
      });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a wrong, a revoked or an expired token THEN the request is refused naming the auth URL, and nothing is created",
    async () => {
      await withOwnService(async (url) => {
        const { token, tokenId } = await newToken();
        const expired = await newToken(new Date(Date.now() - 60_000));
        const id = forgeClusterId();
        try {
          const { csrPem } = forgeIdentityRequest(id);
          const ask = (presented: string): Promise<Error> =>
            rejectionOf(
              requestIdentity({
                authUrl: url,
                authCaPem,
                token: presented,
                consumerClusterId: id,
                consumerClusterName: "b",
                csrPem,
                timeoutMs: TIMEOUT_MS,
              }),
            );

          const wrong = await ask(`plt_${tokenId}_${"x".repeat(43)}`);
          expect(wrong.message).toContain(url);
          expect(wrong.message).toContain("authentication");
          expect(wrong.message).toContain("HTTP 403: peering token refused: unknown, revoked or wrong token");
          expect(wrong.message).not.toContain(parsePeeringToken(token)!.secret);

          const unknown = await ask(forgePeeringToken().token);
          expect(unknown.message).toContain("HTTP 403: peering token refused: unknown, revoked or wrong token");

          await revokePeeringToken(kcA, tokenId);
          const revoked = await ask(token);
          expect(revoked.message).toContain(url);
          expect(revoked.message).toContain("HTTP 403: peering token refused: unknown, revoked or wrong token");

          const late = await ask(expired.token);
          expect(late.message).toContain("HTTP 403: peering token refused: it has expired");

          expect(await leftOf(kcA, id)).toEqual({ namespace: false, csrs: [] });
        } finally {
          await revokePeeringToken(kcA, tokenId);
          await revokePeeringToken(kcA, expired.tokenId);
          await removeTenant(kcA, id);
        }
      });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a valid token WHEN the CSR asks for another subject or for O=system:masters THEN it is refused and nothing is created",
    async () => {
      await withOwnService(async (url) => {
        const { token, tokenId } = await newToken();
        const id = forgeClusterId();
        try {
          const ask = (csrPem: string, clusterId = id): Promise<Error> =>
            rejectionOf(
              requestIdentity({
                authUrl: url,
                authCaPem,
                token,
                consumerClusterId: clusterId,
                consumerClusterName: "b",
                csrPem,
                timeoutMs: TIMEOUT_MS,
              }),
            );

          const otherSubject = await ask(forgeIdentityRequest(forgeClusterId()).csrPem);
          expect(otherSubject.message).toContain(url);
          expect(otherSubject.message).toContain(
            `HTTP 403: CSR refused: CSR subject must be exactly CN=${consumerUserName(id)}`,
          );

          const keyPem = forgeRsaKeyPem();
          const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
          const masters = forge.pki.createCertificationRequest();
          masters.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
          masters.setSubject([
            { name: "organizationName", value: "system:masters" },
            { name: "commonName", value: consumerUserName(id) },
          ]);
          masters.sign(nativeSigner(keyPem), forge.md.sha256.create());
          const mastersRefused = await ask(forge.pki.certificationRequestToPem(masters));
          expect(mastersRefused.message).toContain("HTTP 403: CSR refused");
          expect(mastersRefused.message).toContain("O=system:masters");

          const malformedId = await ask(forgeIdentityRequest(id).csrPem, "NOT-AN-ID");
          expect(malformedId.message).toContain("HTTP 400: clusterId must be 16 lowercase hex characters");

          expect(await leftOf(kcA, id)).toEqual({ namespace: false, csrs: [] });
        } finally {
          await revokePeeringToken(kcA, tokenId);
          await removeTenant(kcA, id);
        }
      });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a burst of 10 wrong tokens from one address THEN the service answers 429 with Retry-After, and nothing is created",
    async () => {
      await withOwnService(async (url) => {
        const id = forgeClusterId();
        try {
          const { csrPem } = forgeIdentityRequest(id);
          const messages: string[] = [];
          for (let i = 0; i < 10; i++) {
            const error = await rejectionOf(
              requestIdentity({
                authUrl: url,
                authCaPem,
                token: forgePeeringToken().token,
                consumerClusterId: id,
                consumerClusterName: "b",
                csrPem,
                timeoutMs: TIMEOUT_MS,
              }),
            );
            messages.push(error.message);
          }
          expect(messages.slice(0, 5).every((m) => m.includes("HTTP 403"))).toBe(true);
          expect(messages.slice(5).every((m) => m.includes("HTTP 429") && /retry after \d+ s/.test(m))).toBe(true);
          expect(messages[9]).toContain(url);
          expect(await leftOf(kcA, id)).toEqual({ namespace: false, csrs: [] });
        } finally {
          await removeTenant(kcA, id);
        }
      });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN an auth URL nothing answers on THEN the request fails within its timeout, naming host and port",
    async () => {
      const port = await closedPort();
      const { csrPem } = forgeIdentityRequest(consumerId);
      const args = {
        authCaPem,
        token: forgePeeringToken().token,
        consumerClusterId: consumerId,
        consumerClusterName: "b",
        csrPem,
        timeoutMs: 2_000,
      };
      for (const [url, host, p] of [
        [`https://127.0.0.1:${port}`, "127.0.0.1", String(port)],
        ["https://192.0.2.1:7443", "192.0.2.1", "7443"],
      ] as const) {
        const started = Date.now();
        const error = await rejectionOf(requestIdentity({ ...args, authUrl: url }));
        expect(Date.now() - started).toBeLessThan(2_000 + 1_500);
        expect(error.message).toContain("authentication");
        expect(error.message).toContain(`host ${host}, port ${p}`);
        expect(error.message).toContain("timed out after 2 s");
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN the wrong auth CA THEN the request fails at once, saying the service's certificate does not verify",
    async () => {
      // Keys are made before the clock starts: only the request is timed.
      const [otherCa, { csrPem }] = [forgeCertificateAuthority("some other CA").cert, forgeIdentityRequest(consumerId)];
      const started = Date.now();
      const error = await rejectionOf(
        requestIdentity({
          authUrl,
          authCaPem: otherCa,
          token: forgePeeringToken().token,
          consumerClusterId: consumerId,
          consumerClusterName: "b",
          csrPem,
          timeoutMs: TIMEOUT_MS,
        }),
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(error.message).toContain(authUrl);
      expect(error.message).toContain("TLS certificate does not verify");
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN b's identity WHEN b renews it with that identity THEN a later certificate of the same user and key that works; " +
      "WHEN a stranger, another consumer, b with another key, or b once revoked tries THEN each is refused and nothing changes",
    async () => {
      // Its own service: five refusals must not spend the failure budget of the suite's service.
      await withOwnService(async (url) => {
        const [bToken, cToken] = [await newToken(), await newToken()];
        const cId = forgeClusterId();
        const [bKey, cKey] = [forgeRsaKeyPem(), forgeRsaKeyPem()];
        const issue = (token: string, clusterId: string, key: string): Promise<Identity> =>
          requestIdentity({
            authUrl: url,
            authCaPem,
            token,
            consumerClusterId: clusterId,
            consumerClusterName: "x",
            csrPem: forgeIdentityRequest(clusterId, key).csrPem,
            timeoutMs: TIMEOUT_MS,
          });
        /** A renewal as raw as an attacker would send it: any client certificate, any CSR. */
        const renewAs = (client: { cert: string; key: string } | undefined, csr: string) =>
          postToAuthService({
            endpoint: parseAuthUrl(url, "test"),
            path: RENEW_PATH,
            caPem: authCaPem,
            body: { csr },
            ...(client ? { certPem: client.cert, keyPem: client.key } : {}),
            timeoutMs: TIMEOUT_MS,
          });
        try {
          const b = await issue(bToken.token, consumerId, bKey);
          const c = await issue(cToken.token, cId, cKey);

          // b renews with the identity it holds, and no token.
          const renewed = await renewIdentity({
            authUrl: url,
            authCaPem,
            certificatePem: b.certificatePem,
            keyPem: bKey,
            consumerClusterId: consumerId,
            timeoutMs: TIMEOUT_MS,
          });
          expect(renewed).not.toBe(b.certificatePem);
          expect(certificateValidity(renewed).notAfter.getTime()).toBeGreaterThanOrEqual(
            certificateValidity(b.certificatePem).notAfter.getTime(),
          );
          expect(publicKeyFingerprint(createPublicKey(renewed))).toBe(publicKeyFingerprint(createPublicKey(bKey)));
          expect(
            await may(
              loadKubeconfig(forgeIdentityKubeconfig({ ...b, certificatePem: renewed }, bKey), "renewed identity"),
              "create",
              API_GROUP,
              "resourcerequests",
              b.tenantNamespace,
            ),
          ).toBe(true);
          // The older CSR is tidied: one record per consumer.
          expect((await leftOf(kcA, consumerId)).csrs).toHaveLength(1);

          const rbac = kcA.makeApiClient(k8s.RbacAuthorizationV1Api);
          const snapshot = async () => ({
            b: await leftOf(kcA, consumerId),
            c: await leftOf(kcA, cId),
            namespaceVersion: (await kcA.makeApiClient(k8s.CoreV1Api).readNamespace({ name: b.tenantNamespace }))
              .metadata?.resourceVersion,
            bindingVersion: (await rbac.readNamespacedRoleBinding({ name: TENANT_ROLE, namespace: b.tenantNamespace }))
              .metadata?.resourceVersion,
          });
          const before = await snapshot();
          const bCsr = forgeIdentityRequest(consumerId, bKey).csrPem;

          // A stranger with no certificate.
          const bare = await renewAs(undefined, bCsr);
          expect(bare.status).toBe(401);
          expect(bare.body).toEqual({
            error: "renewal refused: a client certificate (the identity itself) is required",
          });
          // A stranger with a certificate for b's name from another CA (and a CSR of its own key for b).
          const stranger = forgeClientCertificate(forgeCertificateAuthority("not the cluster CA"), {
            commonName: consumerUserName(consumerId),
          });
          const strangerAnswer = await renewAs(stranger, forgeIdentityRequest(consumerId, stranger.key).csrPem);
          expect(strangerAnswer.status).toBe(403);
          expect(String((strangerAnswer.body as { error: string }).error)).toMatch(
            /^renewal refused: client certificate refused by TLS/,
          );
          // Another consumer, c, with its own valid identity, asking for a certificate in b's name.
          const other = await rejectionOf(
            renewIdentity({
              authUrl: url,
              authCaPem,
              certificatePem: c.certificatePem,
              keyPem: cKey,
              consumerClusterId: consumerId,
              timeoutMs: TIMEOUT_MS,
            }),
          );
          expect(other.message).toContain(url);
          expect(other.message).toContain(
            `HTTP 403: renewal refused: CSR subject must be exactly CN=${consumerUserName(cId)}`,
          );
          // b's own certificate, with a CSR of another key: a renewal never moves an identity to a new key.
          const moved = await renewAs({ cert: renewed, key: bKey }, forgeIdentityRequest(consumerId, cKey).csrPem);
          expect(moved.status).toBe(403);
          expect(moved.body).toEqual({
            error: "renewal refused: the CSR must be signed by the key of the certificate being renewed",
          });
          expect(await snapshot()).toEqual(before);

          // b revoked: the certificate it still holds renews nothing; only a token brings it back.
          await revokeIdentity({
            authUrl: url,
            authCaPem,
            certificatePem: renewed,
            keyPem: bKey,
            timeoutMs: TIMEOUT_MS,
          });
          const revoked = await rejectionOf(
            renewIdentity({
              authUrl: url,
              authCaPem,
              certificatePem: renewed,
              keyPem: bKey,
              consumerClusterId: consumerId,
              timeoutMs: TIMEOUT_MS,
            }),
          );
          expect(revoked.message).toContain(
            `HTTP 403: renewal refused: consumer ${consumerId} holds no active identity on this provider (revoked or never ` +
              `issued): peer again with a peering token`,
          );
          expect(await leftOf(kcA, consumerId)).toEqual({ namespace: false, csrs: [] });
          expect(await leftOf(kcA, cId)).toEqual(before.c);

          const said = reporter.lines.join("\n");
          expect(said).toContain(`renewed identity of consumer ${consumerId}`);
          for (const secret of [bToken.token, cToken.token, bKey, cKey, renewed, b.certificatePem])
            expect(said).not.toContain(secret);
        } finally {
          await revokePeeringToken(kcA, bToken.tokenId);
          await revokePeeringToken(kcA, cToken.tokenId);
          await removeTenant(kcA, consumerId);
          await removeTenant(kcA, cId);
        }
      });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN installed clusters WHEN uninstalled keeping the definitions, then fully THEN first no object of the project's " +
      "kinds is left anywhere (one held by a finalizer of ours included) but its CRDs, then no namespace, CRD or CSR",
    async () => {
      // An object of the project's kinds outside its namespaces, held by one of its finalizers: the
      // agent that would release it goes with the install.
      const custom = kcA.makeApiClient(k8s.CustomObjectsApi);
      const requests = { group: API_GROUP, version: API_VERSION, plural: "resourcerequests" };
      await custom.createNamespacedCustomObject({
        ...requests,
        namespace: "default",
        body: {
          apiVersion: API_GROUP_VERSION,
          kind: "ResourceRequest",
          metadata: { name: "held", finalizers: [`${API_GROUP}/test-hold`] },
          spec: { consumerClusterId: "held", resources: { sharePercent: 10 } },
        },
      });
      await uninstallCluster(kcA, { keepDefinitions: true });
      for (const crd of forgeCustomResourceDefinitions()) {
        const plural = crd.spec.names.plural;
        const left = (await custom.listClusterCustomObject({ ...requests, plural })) as { items: unknown[] };
        expect({ plural, left: left.items }).toEqual({ plural, left: [] });
      }
      expect(await getClusterIdentity(kcA)).toBeUndefined();

      await uninstallCluster(kcA);
      const labelled = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
      expect(
        (await kcA.makeApiClient(k8s.CoreV1Api).listNamespace({ labelSelector: labelled })).items.filter(
          (ns) => ns.status?.phase !== "Terminating",
        ),
      ).toEqual([]);
      expect(
        await readOptional(() => kcA.makeApiClient(k8s.CoreV1Api).readNamespace({ name: SYSTEM_NAMESPACE })),
      ).toBeUndefined();
      expect(
        (await kcA.makeApiClient(k8s.CertificatesV1Api).listCertificateSigningRequest({ labelSelector: labelled }))
          .items,
      ).toEqual([]);
      for (const crd of forgeCustomResourceDefinitions()) {
        expect(
          await readOptional(() =>
            kcA.makeApiClient(k8s.ApiextensionsV1Api).readCustomResourceDefinition({ name: crd.metadata!.name! }),
          ),
        ).toBeUndefined();
      }
      expect(await getClusterIdentity(kcA)).toBeUndefined();
      await uninstallCluster(kcA); // idempotent
    },
    TEST_BOUND_MS,
  );
});
