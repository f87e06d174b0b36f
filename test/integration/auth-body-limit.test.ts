/**
 * The auth service's body limit, against a real auth service for cluster `a` (started in this
 * process, as test/integration/authentication.test.ts does): a body over MAX_BODY_BYTES gets a
 * 413 the client actually reads, not a connection reset, and counts against the source's budget.
 */
import { waitForProjectKindsCounted } from "../../core/authentication/tenant-quota.js";
import type * as k8s from "@kubernetes/client-node";
import { request } from "node:https";
import { startAuthService } from "../../agent/auth-service/index.js";
import { IDENTITY_PATH, MAX_BODY_BYTES } from "../../core/authentication/protocol.js";
import {
  ensureAuthServiceTls,
  ensureClusterIdentity,
  ensureCustomResourceDefinitions,
  ensureSystemNamespace,
  uninstallCluster,
} from "../../core/cluster/install.js";
import { clusterOf } from "../../local-cluster/lab.js";
import { adminConfig } from "../../harness/install.js";
import { sharedLab, SHARED_LAB_BOUND_MS } from "../../harness/labs.js";

/** Each test's bound: a few posts to the auth service of the shared lab's a. */
const TEST_BOUND_MS = 1 * 60_000;
/** The bound of this file's set-up and clean-up: an install's first steps (namespace, CRDs, the quota's counting, identity and TLS), or its uninstall. */
const HOOK_BOUND_MS = SHARED_LAB_BOUND_MS + 120_000;

/** What came back for one request. */
interface Reply {
  readonly status: number;
  readonly connection: string | undefined;
  readonly body: string;
}

/**
 * POSTs `body` over HTTPS, trusting `caPem`, and resolves with the answer once it is read whole.
 * An error of the request (its body cut short by the server's close) counts only when no answer came.
 */
function post(url: string, body: Buffer, caPem: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        ca: caPem,
        headers: { "content-type": "application/json", "content-length": String(body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("auth service body limit", () => {
  let kcA: k8s.KubeConfig;
  let caPem: string;

  /** Starts an auth service of its own (its own failure budget), runs `body` with its URL, stops it. */
  async function withService<T>(body: (url: string) => Promise<T>): Promise<T> {
    const service = await startAuthService({
      kc: kcA,
      listen: { host: "127.0.0.1", port: 0 },
      log: { info: () => undefined, warn: () => undefined },
    });
    try {
      return await body(`https://127.0.0.1:${service.port}${IDENTITY_PATH}`);
    } finally {
      await service.close();
    }
  }

  beforeAll(async () => {
    const a = clusterOf(await sharedLab(), "a");
    kcA = adminConfig(a);
    await ensureSystemNamespace(kcA);
    await ensureCustomResourceDefinitions(kcA);
    // As the install ends: until the quota controller knows the project's kinds, a tenant's quota
    // stays uncounted and the auth service refuses to issue identities.
    await waitForProjectKindsCounted(kcA, "test", 90_000);
    const apiServerCaPem = Buffer.from(kcA.getCurrentCluster()!.caData!, "base64").toString("utf8");
    await ensureClusterIdentity(kcA, { clusterName: "a", apiServerUrl: a.apiServerUrl, apiServerCaPem });
    caPem = (await ensureAuthServiceTls(kcA, { hosts: ["127.0.0.1"] })).caPem;
  }, HOOK_BOUND_MS);

  afterAll(async () => {
    if (kcA) await uninstallCluster(kcA, { keepDefinitions: true });
  }, HOOK_BOUND_MS);

  test(
    "GIVEN a body of MAX_BODY_BYTES+1 bytes WHEN posted THEN the client reads a 413 with connection: close; one of " +
      "MAX_BODY_BYTES is read (and refused as no JSON)",
    async () => {
      await withService(async (url) => {
        const over = await post(url, Buffer.alloc(MAX_BODY_BYTES + 1, "a"), caPem);
        expect(over).toEqual({
          status: 413,
          connection: "close",
          body: JSON.stringify({ error: `request body larger than ${MAX_BODY_BYTES} bytes` }),
        });
        expect((await post(url, Buffer.alloc(MAX_BODY_BYTES, "a"), caPem)).status).toBe(400);
      });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN a body far over the limit (16 MiB) WHEN posted THEN the client still reads the 413, not a connection reset",
    async () => {
      await withService(async (url) => {
        expect((await post(url, Buffer.alloc(16 * 1024 * 1024, "a"), caPem)).status).toBe(413);
      });
    },
    TEST_BOUND_MS,
  );

  test(
    "GIVEN oversized bodies from one address WHEN 5 were refused THEN the next is throttled (429): 413 counts against the budget",
    async () => {
      await withService(async (url) => {
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++)
          statuses.push((await post(url, Buffer.alloc(MAX_BODY_BYTES + 1, "a"), caPem)).status);
        expect(statuses).toEqual([413, 413, 413, 413, 413, 429]);
      });
    },
    TEST_BOUND_MS,
  );
});
