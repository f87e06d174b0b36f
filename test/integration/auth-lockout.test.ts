/**
 * The auth service against a stranger, through the path consumers use: a's agent runs as a pod and
 * its auth service is reached through a NodePort Service on a's node, whose masquerade makes every
 * client arrive from the same node address. A flood of wrong tokens must throttle that address and
 * nobody who proves more (a consumer's certificate, a token a holds); a forged certificate chain is
 * refused every time, logged and counted; a handshake that fails is answered, logged and counted;
 * the consumer's identity cannot store more objects than its tenant's quota.
 */
import * as k8s from "@kubernetes/client-node";
import { X509Certificate } from "node:crypto";
import { connect } from "node:net";
import { request as httpsRequest } from "node:https";
import { connect as tlsConnect } from "node:tls";
import { startAuthService } from "../../agent/auth-service/index.js";
import { API_GROUP, API_GROUP_VERSION, API_VERSION, SYSTEM_NAMESPACE } from "../../core/api/names.js";
import type { TunnelEndpoint } from "../../core/api/crds.js";
import { parseAuthUrl, postToAuthService, type AuthAnswer } from "../../core/authentication/auth-client.js";
import { forgeIdentityRequest, renewIdentity, requestIdentity } from "../../core/authentication/identity.js";
import { IDENTITY_PATH, RENEW_PATH } from "../../core/authentication/protocol.js";
import { removeTenant } from "../../core/authentication/tenant.js";
import { CONSUMER_QUOTA, TENANT_OBJECT_LIMITS } from "../../core/authentication/tenant-quota.js";
import { ensurePeeringTokenSecret, forgePeeringToken, revokePeeringToken } from "../../core/authentication/tokens.js";
import { readClientCa } from "../../agent/auth-service/tls-material.js";
import { AGENT_NAME, COMPONENT_LABEL } from "../../core/cluster/agent-components.js";
import { forgeClusterId } from "../../core/cluster/install.js";
import { loadKubeconfig } from "../../core/kube/client.js";
import { getResourceOffer } from "../../core/negotiation/request.js";
import { getIdentityKubeconfig, heldCertificateOf } from "../../core/authentication/stored-identity.js";
import { createPeering, deletePeering, type PeeringRecord } from "../../core/peering/peering.js";
import { progressTo } from "../../core/operation/progress.js";
import { forgeCertificateAuthority, forgeClientCertificate } from "../../core/pki/x509.js";
import { poll } from "../../core/wait/poll.js";
import { clusterOf, type LabState } from "../../local-cluster/lab.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";
import { preparePeering, type PeeringPair } from "../../harness/peering-pair.js";

/** Each test's bound: the auth service's answers to floods, renewals and quota refusals on the shared lab's peering. */
const TEST_BOUND_MS = 3 * 60_000;
/** The bound of this file's set-up and clean-up: a peering of the shared lab's a and b (its own steps bounded), or its removal. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS + 180_000;

const quiet = progressTo(() => undefined);
/** One request's bound: a loaded machine answers in well under a second. */
const REQUEST_TIMEOUT_MS = 20_000;

/** Posts to a's auth service; resolves the answer or the network error's code (a reset, a TLS alert). */
async function post(
  pair: PeeringPair,
  path: string,
  body: unknown,
  client?: { certPem: string; keyPem: string },
): Promise<AuthAnswer | { error: string }> {
  return postToAuthService({
    endpoint: parseAuthUrl(pair.auth.authUrl, "test"),
    path,
    caPem: pair.auth.authCaCert,
    body,
    ...(client ? { certPem: client.certPem, keyPem: client.keyPem } : {}),
    timeoutMs: REQUEST_TIMEOUT_MS,
  }).catch((error: unknown) => ({ error: (error as { code?: string }).code ?? (error as Error).message }));
}

const statusOf = (answer: AuthAnswer | { error: string }): number | string =>
  "status" in answer ? answer.status : answer.error;

/** A client that speaks only TLS 1.0: resolves the error code its handshake ended with. */
function oldTlsClient(at: { host: string; port: number }): Promise<string> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      ...at,
      minVersion: "TLSv1",
      maxVersion: "TLSv1",
      ciphers: "DEFAULT@SECLEVEL=0",
      rejectUnauthorized: false,
      timeout: REQUEST_TIMEOUT_MS,
    });
    socket.on("secureConnect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.on("timeout", () => socket.destroy(new Error("test: no answer from the auth service")));
    socket.on("error", (error: Error & { code?: string }) => resolve(error.code ?? error.message));
  });
}

/** A client that sends plain HTTP to the TLS port: resolves what came back (as text). */
function plainHttpClient(at: { host: string; port: number }): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(at, () =>
      socket.write("POST /v1/identity HTTP/1.1\r\nhost: a\r\ncontent-length: 0\r\n\r\n"),
    );
    const chunks: Buffer[] = [];
    socket.setTimeout(REQUEST_TIMEOUT_MS, () =>
      socket.destroy(new Error("test: the auth service kept the connection open")),
    );
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    socket.on("error", reject);
  });
}

/** What a's agent pod has logged since `since`. */
async function agentLog(kcA: k8s.KubeConfig, since: Date): Promise<string[]> {
  const core = kcA.makeApiClient(k8s.CoreV1Api);
  const pods = await core.listNamespacedPod({
    namespace: SYSTEM_NAMESPACE,
    labelSelector: `${COMPONENT_LABEL}=${AGENT_NAME}`,
  });
  const running = pods.items.find((p) => p.status?.phase === "Running");
  if (!running) throw new Error("test: a's agent pod is not running");
  const sinceSeconds = Math.max(1, Math.ceil((Date.now() - since.getTime()) / 1000) + 1);
  const text = await core.readNamespacedPodLog({
    name: running.metadata!.name!,
    namespace: SYSTEM_NAMESPACE,
    sinceSeconds,
  });
  return String(text).split("\n");
}

/** Polls a's agent log until `count` lines match `pattern`; resolves them. */
function logged(kcA: k8s.KubeConfig, since: Date, pattern: RegExp, count: number): Promise<string[]> {
  return poll(
    { step: "test", object: `${count} lines matching ${pattern} in a's agent log`, endpoint: "a's agent pod" },
    { timeoutMs: 30_000, intervalMs: 500 },
    async () => {
      const lines = (await agentLog(kcA, since)).filter((line) => pattern.test(line));
      return lines.length >= count ? { done: true, value: lines } : { done: false, state: `${lines.length} lines` };
    },
  );
}

describe("auth service lockout and quotas: a stranger against provider a, through its NodePort", () => {
  let lab: LabState;
  let pair: PeeringPair;
  let record: PeeringRecord | undefined;
  /** b's identity on a: its certificate and key. */
  let identity: { certPem: string; keyPem: string; kc: k8s.KubeConfig };

  beforeAll(async () => {
    lab = await sharedLab();
    pair = await preparePeering(clusterOf(lab, "a"), clusterOf(lab, "b"), { cpu: "1", memory: "1Gi", pods: 5 });
    record = await createPeering(pair.request, quiet);
    const text = await getIdentityKubeconfig(pair.consumer.kc, pair.provider.clusterId);
    if (!text) throw new Error("test: b holds no identity for a");
    const held = heldCertificateOf(text, "b's identity");
    identity = { certPem: held.certificatePem, keyPem: held.keyPem, kc: loadKubeconfig(text, "b's identity") };
  }, HOOK_BOUND_MS);

  afterAll(async () => {
    if (record)
      await deletePeering(pair.consumerKubeconfig, record, pair.auth, { force: true, timeoutMs: 60_000 }, quiet).catch(
        () => undefined,
      );
    await pair?.cleanup({ keepDefinitions: true });
  }, HOOK_BOUND_MS);

  test(
    "GIVEN a chain of a leaf and a forged CA named like a's WHEN it renews 10 times THEN each is answered and refused, logged and counted",
    async () => {
      const since = new Date(Date.now() - 1_000);
      const caSubject = new X509Certificate(await readClientCa(pair.provider.kc)).subject;
      const commonName = /CN=([^\n,]+)/.exec(caSubject)![1]!;
      const forgedCa = forgeCertificateAuthority(commonName);
      const leaf = forgeClientCertificate(forgedCa, { commonName: `pulumi-liqo:consumer:${pair.consumer.clusterId}` });
      const client = { certPem: `${leaf.cert}${forgedCa.cert}`, keyPem: leaf.key };
      const { csrPem } = forgeIdentityRequest(pair.consumer.clusterId, leaf.key);
      const statuses: (number | string)[] = [];
      for (let i = 0; i < 10; i++) statuses.push(statusOf(await post(pair, RENEW_PATH, { csr: csrPem }, client)));
      // Every attempt is answered (never a reset); the first five are refused, then the address is throttled.
      expect(statuses.slice(0, 5)).toEqual([403, 403, 403, 403, 403]);
      expect(statuses.slice(5)).toEqual([429, 429, 429, 429, 429]);
      const lines = await logged(
        pair.provider.kc,
        since,
        /refused renewal from \S+: client certificate refused by TLS/,
        5,
      );
      expect(lines).toHaveLength(5);
      await logged(pair.provider.kc, since, /throttling address \S+ for \d+ s after repeated refusals/, 1);
      // b's own renewal is not held up by it: b proves who it is, and is answered without a retry.
      const retries: string[] = [];
      const renewed = await renewIdentity({
        authUrl: pair.auth.authUrl,
        authCaPem: pair.auth.authCaCert,
        certificatePem: identity.certPem,
        keyPem: identity.keyPem,
        consumerClusterId: pair.consumer.clusterId,
        timeoutMs: REQUEST_TIMEOUT_MS,
        onRetry: (message) => void retries.push(message),
      });
      expect(new X509Certificate(renewed).subject).toContain(pair.consumer.clusterId);
      expect(retries).toEqual([]);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN clients whose TLS handshake fails (only TLS 1.0; plain HTTP) THEN TLS 1.0 is answered with an alert, each failure is " +
      "logged with its address, and counted against it",
    async () => {
      const since = new Date(Date.now() - 1_000);
      const { url } = parseAuthUrl(pair.auth.authUrl, "test");
      const at = { host: url.hostname, port: Number(url.port) };
      expect(await oldTlsClient(at)).toBe("ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION");
      expect(await plainHttpClient(at)).toBe("");
      await logged(pair.provider.kc, since, /TLS handshake from \S+ failed: ERR_SSL_UNSUPPORTED_PROTOCOL/, 1);
      await logged(pair.provider.kc, since, /TLS handshake from \S+ failed: ERR_SSL_HTTP_REQUEST/, 1);
      // Counted: a service of its own (its own budget), on loopback, after five such failures.
      const lines: string[] = [];
      const own = await startAuthService({
        kc: pair.provider.kc,
        listen: { host: "127.0.0.1", port: 0 },
        log: { info: (line) => void lines.push(line), warn: (line) => void lines.push(line) },
      });
      try {
        const loopback = { host: "127.0.0.1", port: own.port };
        for (let i = 0; i < 3; i++) await oldTlsClient(loopback);
        for (let i = 0; i < 2; i++) await plainHttpClient(loopback);
        const junk = forgeIdentityRequest(forgeClusterId());
        // Its certificate names a's address, not 127.0.0.1: this request checks the answer, not the server.
        const status = await new Promise<number>((resolve, reject) => {
          const req = httpsRequest(
            {
              ...loopback,
              method: "POST",
              path: IDENTITY_PATH,
              rejectUnauthorized: false,
              timeout: REQUEST_TIMEOUT_MS,
            },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on("error", reject);
          req.end(
            JSON.stringify({
              token: forgePeeringToken().token,
              clusterId: forgeClusterId(),
              clusterName: "x",
              csr: junk.csrPem,
            }),
          );
        });
        expect(status).toBe(429);
        expect(lines.filter((line) => /TLS handshake from \S+ failed/.test(line))).toHaveLength(5);
        expect(lines.filter((line) => /throttling address \S+ for \d+ s/.test(line))).toHaveLength(1);
      } finally {
        await own.close();
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a flood of wrong tokens through a's NodePort WHEN a token is made during it, a new consumer presents it at once " +
      "and b renews its identity THEN both are served without a retry, the flood's address is throttled, and a client " +
      "behind it is told it is flooded",
    async () => {
      const since = new Date(Date.now() - 1_000);
      const newcomer = forgeClusterId();
      const token = forgePeeringToken();
      const junk = forgeIdentityRequest(forgeClusterId());
      const flood: (number | string)[] = [];
      let flooding = true;
      const stranger = async (): Promise<void> => {
        while (flooding && flood.length < 1_000) {
          const body = {
            token: forgePeeringToken().token,
            clusterId: forgeClusterId(),
            clusterName: "x",
            csr: junk.csrPem,
          };
          flood.push(statusOf(await post(pair, IDENTITY_PATH, body)));
        }
      };
      const strangers = [stranger(), stranger(), stranger(), stranger()];
      try {
        await poll(
          { step: "test", object: "the flood throttled", endpoint: pair.auth.authUrl },
          { timeoutMs: 60_000, intervalMs: 100 },
          async () =>
            flood.includes(429) ? { done: true, value: undefined } : { done: false, state: `${flood.length} sent` },
        );
        // The token is made while the flood keeps the auth service's list of token ids fresh, and used the moment it exists.
        await ensurePeeringTokenSecret(pair.provider.kc, { tokenId: token.tokenId, secretHash: token.secretHash });
        const retries = { newcomer: [] as string[], renewal: [] as string[] };
        const bounds = { timeoutMs: 120_000 };
        const [issued, renewed] = await Promise.all([
          requestIdentity({
            authUrl: pair.auth.authUrl,
            authCaPem: pair.auth.authCaCert,
            token: token.token,
            consumerClusterId: newcomer,
            consumerClusterName: "newcomer",
            csrPem: forgeIdentityRequest(newcomer).csrPem,
            ...bounds,
            onRetry: (message) => void retries.newcomer.push(message),
          }),
          renewIdentity({
            authUrl: pair.auth.authUrl,
            authCaPem: pair.auth.authCaCert,
            certificatePem: identity.certPem,
            keyPem: identity.keyPem,
            consumerClusterId: pair.consumer.clusterId,
            ...bounds,
            onRetry: (message) => void retries.renewal.push(message),
          }),
        ]);
        flooding = false;
        await Promise.all(strangers);
        expect(issued.providerClusterId).toBe(pair.provider.clusterId);
        expect(new X509Certificate(renewed).subject).toContain(pair.consumer.clusterId);
        // Neither waited: the token is known from the moment its create returned, and b proves who it is.
        expect(retries).toEqual({ newcomer: [], renewal: [] });
        // A stranger's own client, behind the flood's address, is told at once why and by whom, not after its deadline.
        const stranger429 = await requestIdentity({
          authUrl: pair.auth.authUrl,
          authCaPem: pair.auth.authCaCert,
          token: forgePeeringToken().token,
          consumerClusterId: newcomer,
          consumerClusterName: "stranger",
          csrPem: junk.csrPem,
          timeoutMs: 10_000,
        }).catch((error: Error) => error.message);
        expect(stranger429).toMatch(
          new RegExp(
            "HTTP 429: .*the provider is being flooded with refused requests and throttles those it sees from " +
              "address \\S+; it asks to retry after \\d+ s, past this step's deadline",
          ),
        );
        // The flood was refused throughout, mostly throttled without a step run for it, and its address was named.
        expect(flood.every((status) => status === 403 || status === 429)).toBe(true);
        expect(flood.filter((status) => status === 429).length).toBeGreaterThan(flood.length / 2);
        await logged(pair.provider.kc, since, /throttling address \S+ for \d+ s after repeated refusals/, 1);
        // b's peering still works with the identity it holds.
        await getResourceOffer(identity.kc, { tenantNamespace: record!.tenantNamespace, name: record!.requestName });
      } finally {
        flooding = false;
        await Promise.all(strangers);
        await revokePeeringToken(pair.provider.kc, token.tokenId);
        await removeTenant(pair.provider.kc, newcomer);
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN b's identity WHEN it creates TunnelEndpoints past its tenant's quota THEN the API server refuses the extra ones, " +
      "and the peering keeps working",
    async () => {
      const custom = identity.kc.makeApiClient(k8s.CustomObjectsApi);
      const namespace = record!.tenantNamespace;
      const list = async (): Promise<string[]> =>
        (
          (await custom.listNamespacedCustomObject({
            group: API_GROUP,
            version: API_VERSION,
            namespace,
            plural: "tunnelendpoints",
          })) as {
            items: TunnelEndpoint[];
          }
        ).items.map((e) => e.metadata.name!);
      const before = await list();
      const limit = TENANT_OBJECT_LIMITS["tunnelendpoints"]!;
      const adminCore = pair.provider.kc.makeApiClient(k8s.CoreV1Api);
      const key = `count/tunnelendpoints.${API_GROUP}`;
      /** What the API server enforces: the quota's status (its bound, its count), and which object holds it. */
      const enforced = async (): Promise<Record<string, string | undefined>> => {
        const live = await adminCore.readNamespacedResourceQuota({ name: CONSUMER_QUOTA, namespace });
        return { uid: live.metadata?.uid, hard: live.status?.hard?.[key], used: live.status?.used?.[key] };
      };
      const start = await enforced();
      expect(start).toEqual({ uid: start.uid, hard: String(limit), used: String(before.length) });
      const made: string[] = [];
      const refusals: string[] = [];
      try {
        for (let i = 0; i < limit + 3; i++) {
          const name = `extra-${i}`;
          const body: TunnelEndpoint = {
            apiVersion: API_GROUP_VERSION,
            kind: "TunnelEndpoint",
            metadata: { name, namespace },
            spec: {
              remoteClusterId: pair.consumer.clusterId,
              remoteClusterName: "b",
              role: "server",
              listenPort: 51820,
              mtu: 1420,
              keepaliveSeconds: 0,
              linkCidr: `169.254.${100 + i}.0/30`,
              remote: {},
            },
          };
          await custom
            .createNamespacedCustomObject({
              group: API_GROUP,
              version: API_VERSION,
              namespace,
              plural: "tunnelendpoints",
              body,
            })
            .then(
              () => void made.push(name),
              (error: unknown) =>
                void refusals.push(
                  `${(error as { code?: number }).code}: ${String((error as { body?: unknown }).body)}`,
                ),
            );
        }
        // The same quota, counting every create it let through.
        expect({ made: made.length, ...(await enforced()) }).toEqual({
          made: limit - before.length,
          uid: start.uid,
          hard: String(limit),
          used: String(limit),
        });
        expect(refusals).toHaveLength(limit + 3 - made.length);
        expect(refusals.every((r) => r.startsWith("403:") && r.includes(`exceeded quota: ${CONSUMER_QUOTA}`))).toBe(
          true,
        );
        expect((await list()).sort()).toEqual([...before, ...made].sort());
        // Nor can b's identity lift the bound: the quota is not its to patch or delete.
        const core = identity.kc.makeApiClient(k8s.CoreV1Api);
        const tamper = [
          core.patchNamespacedResourceQuota({
            name: CONSUMER_QUOTA,
            namespace,
            body: [{ op: "replace", path: "/spec/hard", value: {} }],
          }),
          core.deleteNamespacedResourceQuota({ name: CONSUMER_QUOTA, namespace }),
        ];
        for (const attempt of tamper) await expect(attempt).rejects.toMatchObject({ code: 403 });
        const quota = await adminCore.readNamespacedResourceQuota({
          name: CONSUMER_QUOTA,
          namespace,
        });
        expect(quota.spec?.hard?.[`count/tunnelendpoints.${API_GROUP}`]).toBe(String(limit));
        // The peering goes on: b's identity still reads its offer.
        await getResourceOffer(identity.kc, { tenantNamespace: namespace, name: record!.requestName });
      } finally {
        for (const name of made)
          await custom
            .deleteNamespacedCustomObject({
              group: API_GROUP,
              version: API_VERSION,
              namespace,
              plural: "tunnelendpoints",
              name,
            })
            .catch(() => undefined);
      }
    },
    TEST_BOUND_MS,
  );
});
