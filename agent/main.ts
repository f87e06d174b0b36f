/**
 * The agent: what must keep running between two `pulumi up`s, one program for every cluster.
 * It serves the provider side (auth service, offer answering) and the consumer side (virtual-node
 * heartbeat, and in-band authentication and negotiation through the tunnel) at once, since a
 * cluster may be both. In a real cluster it runs as the Deployment
 * that `Cluster` installs; in local clusters, as a process in the cluster's network namespace.
 *
 * As a consumer it also renews the identity each peering holds before it expires (renewal.ts).
 *
 * With --gateway-netns it is also the cluster's gateway: it sets up the WireGuard tunnels the
 * cluster's TunnelEndpoints ask for, in that network namespace (in local clusters, the cluster's).
 *
 *   node dist/agent/main.js [--kubeconfig PATH] [--auth-listen HOST:PORT] [--name NAME]
 *                           [--gateway-netns NETNS --gateway-dir DIR [--wireguard-go PATH]]
 *
 * Environment, for tests and benches that cannot wait out a 30-day identity:
 *   LIQO_IDENTITY_LIFETIME_SECONDS  lifetime of the identities this cluster's auth service issues
 *                                   (at least 600, the CSR API's minimum; default 30 days)
 *   LIQO_IDENTITY_RENEW_FRACTION    share of an identity's lifetime after which this cluster's
 *                                   agent renews it (between 0 and 1; default 2/3)
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { loadKubeconfig, reuseConnections } from "../provider/kube/client.js";
import { startAuthService } from "./auth-service/index.js";
import { beatOnce, HEARTBEAT_INTERVAL_MS } from "./heartbeat.js";
import { renewIdentities, RENEW_AT_FRACTION } from "./renewal.js";
import { IDENTITY_EXPIRATION_SECONDS } from "../provider/authentication/certificates.js";
import { renewAgentLease } from "./liveness.js";
import { runLoop, Wakeup } from "./loop.js";
import { RetryNow, wakeOnChanges } from "./watch.js";
import { API_GROUP, API_VERSION, SYSTEM_NAMESPACE } from "../provider/api/index.js";
import { TunnelGateway } from "./gateway/tunnels.js";
import { advanceInBandPeerings } from "./in-band.js";
import { answerResourceRequests, capacityEventFilters } from "./offer-answering.js";
import { consoleReporter } from "./reporter.js";

/**
 * Pauses between passes when nothing wakes a loop. Watches wake the offer answering, the in-band
 * peering and the gateway as soon as what they work on changes, and the liveness lease as soon
 * as a new auth certificate is served; these pauses are only the resync. The node heartbeat
 * renews every 10 s as kubelets do. A pass that waits on a remote side asks for `pending`.
 */
const INTERVALS = {
  heartbeat: HEARTBEAT_INTERVAL_MS,
  offers: 30_000,
  inBand: 30_000,
  liveness: 10_000,
  gateway: 10_000,
  pending: 1_000,
  tlsRefresh: 30_000,
  renewal: 60_000,
};

/** The collection of one of the project's custom resources, across namespaces. */
const collection = (plural: string): string => `/apis/${API_GROUP}/${API_VERSION}/${plural}`;

/** A number from environment variable `name`, or `fallback` when unset; throws naming the variable when out of `[min, max]`. */
function numberFromEnv(name: string, fallback: number, min: number, max: number): number {
  const text = process.env[name];
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < min || value > max)
    throw new Error(`${name}=${JSON.stringify(text)} must be a number from ${min} to ${max}`);
  return value;
}

function inClusterConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromCluster();
  return reuseConnections(kc);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: "string" },
      "auth-listen": { type: "string", default: "0.0.0.0:8443" },
      name: { type: "string", default: hostname() },
      "gateway-netns": { type: "string" },
      "gateway-dir": { type: "string" },
      "wireguard-go": { type: "string" },
    },
  });
  const gatewayNetns = values["gateway-netns"];
  if (gatewayNetns && !values["gateway-dir"])
    throw new Error("--gateway-netns needs --gateway-dir (where the gateway keeps its logs)");
  // Without --kubeconfig the agent runs in a pod, with its ServiceAccount.
  const kc = values.kubeconfig
    ? loadKubeconfig(readFileSync(values.kubeconfig, "utf8"), `--kubeconfig ${values.kubeconfig}`)
    : inClusterConfig();
  const [host, port] = values["auth-listen"]!.split(":");
  const reporter = consoleReporter;
  const stop = new AbortController();

  const identityLifetimeSeconds = Math.round(
    numberFromEnv("LIQO_IDENTITY_LIFETIME_SECONDS", IDENTITY_EXPIRATION_SECONDS, 600, 10 * 365 * 24 * 3600),
  );
  const renewFraction = numberFromEnv("LIQO_IDENTITY_RENEW_FRACTION", RENEW_AT_FRACTION, 0.001, 0.999);

  const wakeups = {
    offers: new Wakeup(),
    inBand: new Wakeup(),
    gateway: new Wakeup(),
    liveness: new Wakeup(),
    renewal: new Wakeup(),
  };
  const auth = await startAuthService({
    kc,
    listen: { host: host!, port: Number(port) },
    log: reporter,
    refreshIntervalMs: INTERVALS.tlsRefresh,
    onReload: () => wakeups.liveness.wake(),
    identityLifetimeSeconds,
  });
  reporter.info(`agent ${values.name}: auth service listening on ${host}:${auth.port}`);
  const watching = { signal: stop.signal, retryNow: new RetryNow(), reporter };
  const capacity = capacityEventFilters();
  let followsCapacity = false;
  const loops = [
    // A reinstalled Cluster's new auth certificate is served, and announced, at once; an install
    // (which writes these Secrets after the custom resource definitions) restarts the watches
    // that found no collection yet.
    wakeOnChanges(
      kc,
      `/api/v1/namespaces/${SYSTEM_NAMESPACE}/secrets`,
      () => {
        void auth.refresh();
        watching.retryNow.kick();
      },
      { signal: stop.signal, reporter },
    ),
    wakeOnChanges(kc, collection("resourcerequests"), () => wakeups.offers.wake(), watching),
    wakeOnChanges(
      kc,
      collection("outgoingpeerings"),
      () => {
        wakeups.inBand.wake();
        wakeups.renewal.wake();
      },
      watching,
    ),
    runLoop(
      { name: "liveness", intervalMs: INTERVALS.liveness, signal: stop.signal, reporter, wakeup: wakeups.liveness },
      () => renewAgentLease(kc, values.name!, auth.servingCertificate()),
    ),
    // Offers that are a share of free capacity follow nodes and pods, as they change.
    wakeOnChanges(kc, "/api/v1/nodes", () => followsCapacity && wakeups.offers.wake(), {
      ...watching,
      relevant: capacity.nodes,
    }),
    wakeOnChanges(kc, "/api/v1/pods", () => followsCapacity && wakeups.offers.wake(), {
      ...watching,
      relevant: capacity.pods,
    }),
    runLoop(
      { name: "offer answering", intervalMs: INTERVALS.offers, signal: stop.signal, reporter, wakeup: wakeups.offers },
      async () => {
        followsCapacity = (await answerResourceRequests(kc, reporter)).followsCapacity;
      },
    ),
    runLoop(
      { name: "in-band peering", intervalMs: INTERVALS.inBand, signal: stop.signal, reporter, wakeup: wakeups.inBand },
      async () => ((await advanceInBandPeerings(kc, reporter)) > 0 ? INTERVALS.pending : undefined),
    ),
    runLoop(
      { name: "heartbeat", intervalMs: INTERVALS.heartbeat, signal: stop.signal, reporter },
      async () => void (await beatOnce(kc, reporter)),
    ),
    // Each pass says when the next identity is due; a new peering wakes it.
    runLoop(
      {
        name: "identity renewal",
        intervalMs: INTERVALS.renewal,
        signal: stop.signal,
        reporter,
        wakeup: wakeups.renewal,
      },
      () => renewIdentities(kc, reporter, { fraction: renewFraction }),
    ),
  ];
  if (gatewayNetns) {
    const gateway = new TunnelGateway({
      kc,
      netns: gatewayNetns,
      workDir: values["gateway-dir"]!,
      reporter,
      ...(values["wireguard-go"] ? { wireguardGo: values["wireguard-go"] } : {}),
    });
    gateway.watchProcesses(stop.signal, () => wakeups.gateway.wake());
    loops.push(wakeOnChanges(kc, collection("tunnelendpoints"), () => wakeups.gateway.wake(), watching));
    loops.push(
      runLoop(
        { name: "gateway", intervalMs: INTERVALS.gateway, signal: stop.signal, reporter, wakeup: wakeups.gateway },
        async () => ((await gateway.pass()) > 0 ? INTERVALS.pending : undefined),
      ),
    );
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
