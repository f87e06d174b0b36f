/**
 * The agent: what must keep running between two `pulumi up`s, one program for every cluster.
 * It serves the provider side (auth service, offer answering) and the consumer side (virtual-node
 * heartbeat, and in-band authentication and negotiation through the tunnel) at once, since a
 * cluster may be both. In a real cluster it runs as the Deployment
 * that `Cluster` installs; in local clusters, as a process in the cluster's network namespace.
 *
 * With --gateway-netns it is also the cluster's gateway: it sets up the WireGuard tunnels the
 * cluster's TunnelEndpoints ask for, in that network namespace (in local clusters, the cluster's).
 *
 *   node dist/agent/main.js [--kubeconfig PATH] [--auth-listen HOST:PORT] [--name NAME]
 *                           [--gateway-netns NETNS --gateway-dir DIR]
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
import { TunnelGateway } from "./gateway/tunnels.js";
import { advanceInBandPeerings } from "./in-band.js";
import { answerResourceRequests } from "./offer-answering.js";
import { consoleReporter } from "./reporter.js";

/**
 * Pauses between passes: the node heartbeat every 10 s as kubelets do; offers answered promptly;
 * the gateway every 2 s, which bounds how long a killed tunnel stays down.
 */
const INTERVALS = { heartbeat: 10_000, offers: 1_000, liveness: 3_000, gateway: 2_000 };

function inClusterConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromCluster();
  return kc;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: "string" },
      "auth-listen": { type: "string", default: "0.0.0.0:8443" },
      name: { type: "string", default: hostname() },
      "gateway-netns": { type: "string" },
      "gateway-dir": { type: "string" },
    },
  });
  const gatewayNetns = values["gateway-netns"];
  if (gatewayNetns && !values["gateway-dir"]) throw new Error("--gateway-netns needs --gateway-dir (where the gateway keeps its logs)");
  // Without --kubeconfig the agent runs in a pod, with its ServiceAccount.
  const kc = values.kubeconfig ? loadKubeconfig(readFileSync(values.kubeconfig, "utf8"), `--kubeconfig ${values.kubeconfig}`) : inClusterConfig();
  const [host, port] = values["auth-listen"]!.split(":");
  const reporter = consoleReporter;
  const stop = new AbortController();

  // TLS material is re-read every 2 s: a reinstalled Cluster's new certificate is served at once.
  const auth = await startAuthService({ kc, listen: { host: host!, port: Number(port) }, log: reporter, refreshIntervalMs: 2000 });
  reporter.info(`agent ${values.name}: auth service listening on ${host}:${auth.port}`);
  const loops = [
    runLoop({ name: "liveness", intervalMs: INTERVALS.liveness, signal: stop.signal, reporter }, () => renewAgentLease(kc, values.name!, auth.servingCertificate())),
    runLoop({ name: "offer answering", intervalMs: INTERVALS.offers, signal: stop.signal, reporter }, async () => void (await answerResourceRequests(kc, reporter))),
    runLoop({ name: "in-band peering", intervalMs: INTERVALS.offers, signal: stop.signal, reporter }, () => advanceInBandPeerings(kc, reporter)),
    runLoop({ name: "heartbeat", intervalMs: INTERVALS.heartbeat, signal: stop.signal, reporter }, async () => void (await beatOnce(kc, reporter))),
  ];
  if (gatewayNetns) {
    const gateway = new TunnelGateway({ kc, netns: gatewayNetns, workDir: values["gateway-dir"]!, reporter });
    loops.push(runLoop({ name: "gateway", intervalMs: INTERVALS.gateway, signal: stop.signal, reporter }, () => gateway.pass()));
    reporter.info(`agent ${values.name}: gateway for network namespace ${gatewayNetns}`);
  }
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
