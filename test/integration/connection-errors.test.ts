/**
 * Errors name their cause, against real endpoints of the shared lab: a closed port (refused), an
 * address whose packets are dropped (timed out), a real API server reached with the wrong CA
 * (unknown authority) and under a name its certificate does not carry (name mismatch). Each
 * failure, whether of a client-node call (`describeFailure`), of the short probe
 * (`probeApiServer`) or of the auth client, names the cause and the URL; the probe answers in
 * one connection attempt. A server that completes TLS handshakes and then answers nothing, as an
 * API server does whose etcd is stopped, is out of reach to the probe within seconds.
 */
import * as k8s from "@kubernetes/client-node";
import type { AddressInfo } from "node:net";
import { createServer, type TLSSocket } from "node:tls";
import { clusterOf, setProfile, type ClusterState, type LabState } from "../../local-cluster/lab.js";
import { AUTH_SERVICE_PORT } from "../../local-cluster/control-plane.js";
import { waitForAuthService } from "../../core/authentication/identity.js";
import { describeFailure, PROBE_ANSWER_TIMEOUT_MS, PROBE_TIMEOUT_MS, probeApiServer } from "../../core/kube/client.js";
import { forgeCertificateAuthority, forgeServingCertificate } from "../../core/pki/x509.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";

/** Each test's bound: each call's and probe's own timeout against the shared lab. */
const TEST_BOUND_MS = 2 * 60_000;
/** The bound of this file's set-up and clean-up: the shared lab. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS;

/** A copy of `cluster`'s admin kubeconfig with its cluster entry changed by `change`. */
function kubeconfigVariant(cluster: ClusterState, change: (c: k8s.Cluster) => k8s.Cluster): k8s.KubeConfig {
  const admin = adminConfig(cluster);
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: admin.clusters.map(change),
    users: admin.users,
    contexts: admin.contexts,
    currentContext: admin.currentContext,
  });
  return kc;
}

/** What a client-node call through `kc` fails with, as `describeFailure` says it, and how long it took. */
async function failureOf(kc: k8s.KubeConfig): Promise<{ message: string; ms: number }> {
  const started = Date.now();
  const server = kc.getCurrentCluster()!.server;
  const message = await kc
    .makeApiClient(k8s.CoreV1Api)
    .listNamespace()
    .then(
      () => "the call succeeded",
      (error: unknown) => {
        try {
          return describeFailure("test: listing namespaces", server)(error);
        } catch (described) {
          return (described as Error).message;
        }
      },
    );
  return { message, ms: Date.now() - started };
}

/** What the probe says of `kc`'s API server, and how long it took. */
async function probeOf(kc: k8s.KubeConfig): Promise<{ outcome: string | undefined; ms: number }> {
  const started = Date.now();
  const outcome = await probeApiServer(kc);
  return { outcome, ms: Date.now() - started };
}

describe("errors that name their cause, on real endpoints", () => {
  let lab: LabState;
  let a: ClusterState;
  beforeAll(async () => {
    lab = await sharedLab();
    a = clusterOf(lab, "a");
  }, HOOK_BOUND_MS);

  test(
    "GIVEN a's real kubeconfig WHEN probed THEN the API server answers within the probe's time",
    async () => {
      const { outcome, ms } = await probeOf(adminConfig(a));
      expect(outcome).toBeUndefined();
      expect(ms).toBeLessThan(PROBE_TIMEOUT_MS);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a port nothing listens on WHEN called and probed THEN both say connection refused at that URL, at once",
    async () => {
      const url = `https://${a.publicAddress}:6555`;
      const kc = kubeconfigVariant(a, (c) => ({ ...c, server: url }));
      const call = await failureOf(kc);
      expect(call.message).toBe(
        `test: listing namespaces at ${url}: connection refused (nothing listens at that address and port; ECONNREFUSED)`,
      );
      expect(call.ms).toBeLessThan(2_000);
      const probe = await probeOf(kc);
      expect(probe.outcome).toMatch(/^connection refused \(.*ECONNREFUSED\)$/);
      expect(probe.ms).toBeLessThan(2_000);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN an address whose packets are dropped (a's auth port under gateway-only) WHEN called and probed THEN both say " +
      "timed out at that URL; the probe within its few seconds",
    async () => {
      const url = `https://${a.publicAddress}:${AUTH_SERVICE_PORT}`;
      const kc = kubeconfigVariant(a, (c) => ({ ...c, server: url }));
      await setProfile(lab, "gateway-only");
      try {
        const probe = await probeOf(kc);
        expect(probe.outcome).toMatch(
          /^timed out \(no answer to the connection attempt: the host is down or a firewall drops the packets; ETIMEDOUT\)$/,
        );
        expect(probe.ms).toBeGreaterThanOrEqual(PROBE_TIMEOUT_MS - 50);
        expect(probe.ms).toBeLessThan(PROBE_TIMEOUT_MS + 1_000);
        // client-node's own connection attempt gives up after undici's 10 s.
        const call = await failureOf(kc);
        expect(call.message).toMatch(
          new RegExp(
            `^test: listing namespaces at ${url.replace(/\./g, "\\.")}: timed out \\(.*UND_ERR_CONNECT_TIMEOUT\\)$`,
          ),
        );
        expect(call.ms).toBeLessThan(15_000);
        // The auth client names it the same way, with the auth service's URL.
        const auth = await waitForAuthService(
          a.authUrl,
          Buffer.from(adminConfig(a).getCurrentCluster()!.caData!, "base64").toString(),
          2_000,
        ).then(
          () => "answered",
          (error: Error) => error.message,
        );
        expect(auth).toContain(`at ${a.authUrl}`);
        expect(auth).toMatch(/last state: timed out \(/);
      } finally {
        await setProfile(lab, "open");
      }
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a's API server and the CA of cluster b WHEN called and probed THEN both say TLS: unknown authority at that URL",
    async () => {
      const otherCa = adminConfig(clusterOf(lab, "b")).getCurrentCluster()!.caData!;
      const kc = kubeconfigVariant(a, (c) => ({ ...c, caData: otherCa, caFile: undefined }));
      const call = await failureOf(kc);
      expect(call.message).toMatch(
        new RegExp(
          `^test: listing namespaces at ${a.apiServerUrl.replace(/\./g, "\\.")}: TLS: unknown authority \\(the server's ` +
            `certificate is not signed by the CA given; [A-Z_]+\\)$`,
        ),
      );
      expect((await probeOf(kc)).outcome).toMatch(/^TLS: unknown authority \(/);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a's API server verified under a name its certificate does not carry WHEN called and probed THEN both say TLS: " +
      "name mismatch at that URL",
    async () => {
      const kc = kubeconfigVariant(a, (c) => ({ ...c, tlsServerName: "not-this-apiserver.invalid" }));
      const call = await failureOf(kc);
      expect(call.message).toBe(
        `test: listing namespaces at ${a.apiServerUrl}: TLS: name mismatch (the server's certificate is not for the host name ` +
          `or address dialled; ERR_TLS_CERT_ALTNAME_INVALID)`,
      );
      expect((await probeOf(kc)).outcome).toMatch(/^TLS: name mismatch \(/);
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a TLS server that completes handshakes and answers no request WHEN probed THEN it says no answer, within " +
      "the handshake's and the answer's time",
    async () => {
      const ca = forgeCertificateAuthority("stuck-apiserver-ca");
      const serving = forgeServingCertificate(ca, "stuck-apiserver", [], ["127.0.0.1"]);
      const held: TLSSocket[] = [];
      const server = createServer({ cert: serving.cert, key: serving.key }, (socket) => held.push(socket));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const kc = kubeconfigVariant(a, (c) => ({
          ...c,
          server: url,
          caData: Buffer.from(ca.cert).toString("base64"),
          caFile: undefined,
        }));
        const probe = await probeOf(kc);
        expect(probe.outcome).toBe(
          `no answer: it completed the TLS handshake but answered no request within ${PROBE_ANSWER_TIMEOUT_MS / 1000} s ` +
            "(its storage or the server itself is stuck)",
        );
        expect(held).toHaveLength(1);
        expect(probe.ms).toBeGreaterThanOrEqual(PROBE_ANSWER_TIMEOUT_MS - 50);
        expect(probe.ms).toBeLessThan(PROBE_TIMEOUT_MS + PROBE_ANSWER_TIMEOUT_MS);
      } finally {
        for (const socket of held) socket.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
    TEST_BOUND_MS,
  );
});
