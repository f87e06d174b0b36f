/**
 * The agent's placement webhook (agent/offloading/placement-listener.ts), as a Kubernetes 1.35
 * consumer's API server calls it, against the shared lab's cluster `a`: the listener does not
 * listen until the install's Secret exists, then serves with it, under the name the API server
 * dials; a pod's review is answered with the placement's patch; and what a stranger in the cluster
 * sends instead (a forged review, a body that is not JSON or too large, another path or method) is
 * refused and changes nothing in the cluster. (That a real 1.35 API server calls it and places
 * pods so is `npm run matrix`'s: the suite's clusters run 1.36.)
 */
import * as k8s from "@kubernetes/client-node";
import { request } from "node:https";
import { PLACEMENT_SERVICE, PLACEMENT_TLS_NAME, PLACEMENT_TLS_SECRET, SYSTEM_NAMESPACE } from "../../core/api/names.js";
import { ensurePlacementWebhook, ensureSystemNamespace } from "../../core/cluster/install.js";
import { PLACEMENT_REVIEW_LIMIT_BYTES } from "../../core/offloading/placement-webhook.js";
import { poll } from "../../core/wait/poll.js";
import { startPlacementListener } from "../../agent/offloading/placement-listener.js";
import type { Reporter } from "../../agent/reporter.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab } from "../../harness/labs.js";
import { clusterOf } from "../../local-cluster/lab.js";

/** The test's bound: a Secret and a Service written, a listener started, a dozen requests. */
const TEST_BOUND_MS = 2 * 60_000;

/** POSTs (or `method`s) `body` to the listener on loopback under the webhook's TLS name, trusting `caPem`. */
function send(
  port: number,
  path: string,
  body: Buffer,
  caPem: string,
  method = "POST",
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method,
        ca: caPem,
        servername: PLACEMENT_TLS_NAME,
        headers: { "content-type": "application/json", "content-length": String(body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", (error) => reject(error));
    req.end(body);
  });
}

/** A review of pod `web` being created, as the API server sends one. */
function podReview(uid: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid,
        resource: { group: "", version: "v1", resource: "pods" },
        namespace: "shop",
        operation: "CREATE",
        object: { apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec: { containers: [{ name: "web" }] } },
      },
    }),
  );
}

describe("the agent's placement webhook", () => {
  test(
    "GIVEN the install's webhook Secret WHEN the API server's review and a stranger's forged requests come THEN the review " +
      "gets the placement, every forgery is refused, and the cluster is unchanged",
    async () => {
      const kc = adminConfig(clusterOf(await sharedLab(), "a"));
      const core = kc.makeApiClient(k8s.CoreV1Api);
      const stop = new AbortController();
      const warnings: string[] = [];
      const reporter: Reporter = { info: () => undefined, warn: (line) => void warnings.push(line) };
      await ensureSystemNamespace(kc);
      try {
        // No Secret yet (a cluster on 1.36 or later): the listener does not listen.
        await core
          .deleteNamespacedSecret({ name: PLACEMENT_TLS_SECRET, namespace: SYSTEM_NAMESPACE })
          .catch(() => undefined);
        const listener = await startPlacementListener({ kc, reporter, signal: stop.signal, port: 0 });
        expect(listener.port()).toBeUndefined();

        await ensurePlacementWebhook(kc);
        const secret = await core.readNamespacedSecret({ name: PLACEMENT_TLS_SECRET, namespace: SYSTEM_NAMESPACE });
        const caPem = Buffer.from(secret.data!["ca.crt"]!, "base64").toString();
        const service = await core.readNamespacedService({ name: PLACEMENT_SERVICE, namespace: SYSTEM_NAMESPACE });
        expect(service.spec?.ports).toEqual([expect.objectContaining({ port: 443, targetPort: 9443 })]);
        await listener.refresh();
        const port = listener.port()!;
        expect(port).toBeGreaterThan(0);
        /** The versions of what the webhook's install wrote: the listener writes nothing, whatever it is sent. */
        const written = async (): Promise<string[]> => [
          (await core.readNamespacedSecret({ name: PLACEMENT_TLS_SECRET, namespace: SYSTEM_NAMESPACE })).metadata!
            .resourceVersion!,
          (await core.readNamespacedService({ name: PLACEMENT_SERVICE, namespace: SYSTEM_NAMESPACE })).metadata!
            .resourceVersion!,
        ];
        const before = await written();

        // The API server's review: allowed, with the toleration and the virtual nodes' selector.
        const answered = await send(port, "/place-pods/remote", podReview("u-1"), caPem);
        expect(answered.status).toBe(200);
        const response = JSON.parse(answered.body).response as { uid: string; allowed: boolean; patch: string };
        expect({ uid: response.uid, allowed: response.allowed }).toEqual({ uid: "u-1", allowed: true });
        expect(
          JSON.parse(Buffer.from(response.patch, "base64").toString()).map((op: { path: string }) => op.path),
        ).toEqual(["/spec/tolerations", "/spec/nodeSelector"]);

        // A stranger's forgeries: each refused, naming what is wrong.
        const forged = [
          send(port, "/place-pods/remote", Buffer.from("{not json"), caPem),
          send(port, "/place-pods/remote", Buffer.from(JSON.stringify({ kind: "AdmissionReview" })), caPem),
          send(port, "/place-pods/local", podReview("u-2"), caPem),
          send(port, "/place-pods/remote", podReview("u-3"), caPem, "PUT"),
          send(port, "/place-pods/remote", Buffer.alloc(PLACEMENT_REVIEW_LIMIT_BYTES + 1, 0x20), caPem),
        ];
        expect((await Promise.all(forged)).map((r) => [r.status, JSON.parse(r.body).error])).toEqual([
          [400, "the body is not JSON"],
          [400, "not an admission.k8s.io/v1 AdmissionReview"],
          [404, "no such path: POST /place-pods/local"],
          [404, "no such path: PUT /place-pods/remote"],
          [413, `review larger than ${PLACEMENT_REVIEW_LIMIT_BYTES} bytes`],
        ]);
        // Said once (the log takes one refusal a minute), and nothing of the cluster's changed.
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatch(/^placement webhook: refused a request from 127\.0\.0\.1: /);
        expect(await written()).toEqual(before);

        // A renewed certificate is served without a restart.
        await core.deleteNamespacedSecret({ name: PLACEMENT_TLS_SECRET, namespace: SYSTEM_NAMESPACE });
        await ensurePlacementWebhook(kc);
        const renewed = Buffer.from(
          (await core.readNamespacedSecret({ name: PLACEMENT_TLS_SECRET, namespace: SYSTEM_NAMESPACE })).data![
            "ca.crt"
          ]!,
          "base64",
        ).toString();
        expect(renewed).not.toBe(caPem);
        await listener.refresh();
        await poll(
          { step: "test", object: "the listener serving the renewed certificate", endpoint: `127.0.0.1:${port}` },
          { timeoutMs: 10_000, intervalMs: 200 },
          async () => {
            const reply = await send(port, "/place-pods/remote", podReview("u-4"), renewed).catch((e: Error) => e);
            return reply instanceof Error ? { done: false, state: reply.message } : { done: true, value: undefined };
          },
        );
      } finally {
        stop.abort();
        await core
          .deleteNamespacedSecret({ name: PLACEMENT_TLS_SECRET, namespace: SYSTEM_NAMESPACE })
          .catch(() => undefined);
        await core
          .deleteNamespacedService({ name: PLACEMENT_SERVICE, namespace: SYSTEM_NAMESPACE })
          .catch(() => undefined);
      }
    },
    TEST_BOUND_MS,
  );
});
