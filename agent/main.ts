/**
 * The agent: what must keep running between two `pulumi up`s, one program for every cluster.
 * It serves the provider side (auth service, offer answering) and the consumer side (virtual-node
 * heartbeat) at once, since a cluster may be both. In a real cluster it runs as the Deployment
 * that `Cluster` installs; in local clusters, as a process in the cluster's network namespace.
 *
 *   node dist/agent/main.js [--kubeconfig PATH] [--auth-listen HOST:PORT] [--name NAME]
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { loadKubeconfig } from "../provider/kube/client.js";
import { startAuthService } from "./auth-service/index.js";
import { beatOnce } from "./heartbeat.js";
import { renewAgentLease } from "./liveness.js";
import { runLoop } from "./loop.js";
import { answerResourceRequests } from "./offer-answering.js";
import { consoleReporter } from "./reporter.js";

/** Pauses between passes: the node heartbeat every 10 s as kubelets do; offers answered promptly. */
const INTERVALS = { heartbeat: 10_000, offers: 1_000, liveness: 5_000 };

function inClusterConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromCluster();
  return kc;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { kubeconfig: { type: "string" }, "auth-listen": { type: "string", default: "0.0.0.0:8443" }, name: { type: "string", default: hostname() } },
  });
  // Without --kubeconfig the agent runs in a pod, with its ServiceAccount.
  const kc = values.kubeconfig ? loadKubeconfig(readFileSync(values.kubeconfig, "utf8"), `--kubeconfig ${values.kubeconfig}`) : inClusterConfig();
  const [host, port] = values["auth-listen"]!.split(":");
  const reporter = consoleReporter;
  const stop = new AbortController();

  // TLS material is re-read every 2 s: a reinstalled Cluster's new certificate is served at once.
  const auth = await startAuthService({ kc, listen: { host: host!, port: Number(port) }, log: reporter, refreshIntervalMs: 2000 });
  reporter.info(`agent ${values.name}: auth service listening on ${host}:${auth.port}`);
  const loops = [
    runLoop({ name: "liveness", intervalMs: INTERVALS.liveness, signal: stop.signal, reporter }, () => renewAgentLease(kc, values.name!)),
    runLoop({ name: "offer answering", intervalMs: INTERVALS.offers, signal: stop.signal, reporter }, async () => void (await answerResourceRequests(kc, reporter))),
    runLoop({ name: "heartbeat", intervalMs: INTERVALS.heartbeat, signal: stop.signal, reporter }, async () => void (await beatOnce(kc, reporter))),
  ];
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      reporter.info(`agent ${values.name}: ${signal}, stopping`);
      stop.abort();
      auth.close();
    });
  }
  await Promise.all(loops);
}

main().catch((error: Error) => {
  consoleReporter.warn(`agent: ${error.message}`);
  process.exit(1);
});
