/**
 * The auth service's refusals, timed: a wrong secret for a real token id against a token whose id
 * does not exist. The two must take the same time, or the answer's latency tells a guesser which
 * ids are real. Measured end to end (TLS, the service, its read of the token's Secret) on a real
 * cluster, interleaved, with the failure limiter opened wide so that no answer is a 429.
 */
import { randomBytes } from "node:crypto";
import { startAuthService } from "../agent/auth-service/index.js";
import { IDENTITY_PATH } from "../core/authentication/protocol.js";
import { parseAuthUrl, postToAuthService } from "../core/authentication/auth-client.js";
import { ensurePeeringTokenSecret, forgePeeringToken, parsePeeringToken } from "../core/authentication/tokens.js";
import {
  ensureAuthServiceTls,
  ensureSystemNamespace,
  forgeClusterId,
  uninstallCluster,
} from "../core/cluster/install.js";
import { adminConfig } from "../local-cluster/inspect.js";
import { clusterOf } from "../local-cluster/lab.js";
import { ratio, series, target, type Log, type SectionResult } from "./figures.js";
import { privateLabs, type LabRunner } from "./labs.js";

/** `samples` refusals of each kind, interleaved, on one fresh cluster. */
export async function benchAuth(samples: number, log: Log, labs: LabRunner = privateLabs): Promise<SectionResult> {
  log("auth: one local cluster");
  return labs([{ name: "a" }], {}, async (lab) => {
    const kc = adminConfig(clusterOf(lab, "a"));
    await ensureSystemNamespace(kc);
    const { caPem } = await ensureAuthServiceTls(kc, { hosts: ["127.0.0.1"] });
    const real = forgePeeringToken();
    await ensurePeeringTokenSecret(kc, { tokenId: real.tokenId, secretHash: real.secretHash });
    const quiet = (): void => undefined;
    const service = await startAuthService({
      kc,
      listen: { host: "127.0.0.1", port: 0 },
      log: { info: quiet, warn: quiet },
      failureLimit: { maxFailures: Number.MAX_SAFE_INTEGER },
    });
    try {
      const endpoint = parseAuthUrl(`https://127.0.0.1:${service.port}`, "bench");
      const refusalMs = async (token: string): Promise<number> => {
        const started = performance.now();
        const answer = await postToAuthService({
          endpoint,
          path: IDENTITY_PATH,
          caPem,
          body: { token, clusterId: forgeClusterId(), clusterName: "bench", csr: "-" },
          timeoutMs: 10_000,
        });
        const ms = performance.now() - started;
        if (answer.status !== 403) throw new Error(`auth: expected a 403 refusal, got HTTP ${answer.status}`);
        return ms;
      };
      // A secret of the right shape (43 base64url characters), so both kinds take the path that reads a record.
      const wrongSecret = `plt_${real.tokenId}_${randomBytes(32).toString("base64url")}`;
      if (!parsePeeringToken(wrongSecret)) throw new Error("auth: the wrong-secret token is not well formed");
      const [known, unknown]: [number[], number[]] = [[], []];
      for (let i = 0; i < samples; i++) {
        known.push(await refusalMs(wrongSecret));
        unknown.push(await refusalMs(forgePeeringToken().token));
      }
      log(`auth: ${samples} refusals of each kind`);
      const knownSeries = series("auth refusal: real token id, wrong secret", "ms", known);
      const unknownSeries = series("auth refusal: unknown token id", "ms", unknown);
      const timing = ratio(knownSeries, unknownSeries);
      return {
        series: [knownSeries, unknownSeries],
        targets: [
          target("real id / unknown id refusal time at most", timing, "max", 1.1),
          target("real id / unknown id refusal time at least", timing, "min", 0.9),
        ],
      };
    } finally {
      await service.close();
      await uninstallCluster(kc);
    }
  });
}
