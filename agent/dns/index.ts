/**
 * The consumer DNS as the control role runs it, in its pod: listening at {@link CONSUMER_DNS_PORT}
 * (the Service `pulumi-liqo-dns` gives it port 53), asking the cluster DNS the pod itself uses, in
 * the cluster domain that pod's search list names.
 */
import { readFileSync } from "node:fs";
import type * as k8s from "@kubernetes/client-node";
import { CONSUMER_DNS_PORT } from "../../core/cluster/agent-components.js";
import { CLUSTER_DOMAIN, clusterDomainOf, nameserverOf } from "../../core/offloading/dns-names.js";
import type { Reporter } from "../reporter.js";
import { serveConsumerDns } from "./server.js";
import { ConsumerZones } from "./zones.js";

/** Starts the answerer, unless the pod names no nameserver (then offloaded pods get no answers, and the log says why). */
export async function startConsumerDns(options: {
  readonly kc: k8s.KubeConfig;
  readonly reporter: Reporter;
  readonly signal: AbortSignal;
  /** @default /etc/resolv.conf */
  readonly resolvConf?: string;
}): Promise<void> {
  const path = options.resolvConf ?? "/etc/resolv.conf";
  const conf = readFileSync(path, "utf8");
  const upstream = nameserverOf(conf);
  if (!upstream) {
    options.reporter.warn(`consumer DNS: ${path} names no nameserver: offloaded pods' names go unanswered`);
    return;
  }
  const domains = { consumer: CLUSTER_DOMAIN, provider: clusterDomainOf(conf) ?? CLUSTER_DOMAIN };
  const zones = new ConsumerZones(options.kc);
  await serveConsumerDns({
    listen: { host: "0.0.0.0", port: CONSUMER_DNS_PORT },
    upstream: { address: upstream, port: 53 },
    domains,
    zoneOf: (address) => zones.zoneOf(address),
    signal: options.signal,
    reporter: options.reporter,
  });
  options.reporter.info(
    `consumer DNS: answering offloaded pods at port ${CONSUMER_DNS_PORT}, through ${upstream} (cluster domain ${domains.provider})`,
  );
}
