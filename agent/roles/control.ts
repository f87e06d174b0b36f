/**
 * The control role: what must keep running between two `pulumi up`s, apart from the network
 * fabric. It serves the provider side (auth service, offer answering) and the consumer side
 * (virtual-node heartbeat, in-band authentication and negotiation through the tunnel, identity
 * renewal) at once, since a cluster may be both.
 *
 * Environment, for tests and benches that cannot wait out a 30-day identity:
 *   LIQO_IDENTITY_LIFETIME_SECONDS  lifetime of the identities this cluster's auth service issues
 *                                   (at least 600, the CSR API's minimum; default 30 days)
 *   LIQO_IDENTITY_RENEW_FRACTION    share of an identity's lifetime after which this cluster's
 *                                   agent renews it (between 0 and 1; default 2/3)
 *   POD_IP                          the agent pod's address (set by its Deployment): the virtual
 *                                   nodes announce it as their kubelet's, for logs and exec
 */
import type { KubeConfig, V1Node } from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE, type OffloadedPod } from "../../core/api/index.js";
import {
  consumerPodChanges,
  offloadedPodChanges,
  providerPodChanges,
  tunnelStateChanges,
} from "../offloading/wakes.js";
import { IDENTITY_EXPIRATION_SECONDS } from "../../core/authentication/certificates.js";
import { startAuthService } from "../auth-service/index.js";
import { announceKubeletEndpoint, beatOnce, HEARTBEAT_INTERVAL_MS } from "../heartbeat.js";
import { startKubeletEndpoint } from "../offloading/kubelet-endpoint.js";
import { answerNodePorts, NodePortForwarder } from "../offloading/node-ports.js";
import { startConsumerDns } from "../dns/index.js";
import { startPlacementListener } from "../offloading/placement-listener.js";
import { KUBELET_PORT } from "../../core/cluster/agent-components.js";
import { advanceInBandPeerings } from "../in-band.js";
import { renewAgentLease } from "../liveness.js";
import { runLoop, Wakeup } from "../loop.js";
import { answerResourceRequests, capacityEventFilters } from "../offer-answering.js";
import {
  answerOffloadingRequests,
  answerServiceRequests,
  answerClaimRequests,
  ConsumerShortcuts,
  offloadOnce,
  removeWithdrawnPod,
} from "../offloading/index.js";
import { CONSUMER_POD_UID_LABEL } from "../../core/offloading/reflection.js";
import { renewIdentities, RENEW_AT_FRACTION } from "../renewal.js";
import type { Reporter } from "../reporter.js";
import { RetryNow, wakeOnChanges, WatchesPerNamespace, type OnChange } from "../watch.js";
import { collection, numberFromEnv } from "./common.js";
import { internalIpOf } from "../../core/kube/nodes.js";
import { VIRTUAL_NODE_LABEL } from "../../core/virtual-node/node.js";
import { REMOTE_NAMESPACE_LABEL } from "../../core/api/names.js";

/**
 * Pauses between passes when nothing wakes a loop. Watches wake the offer answering and the in-band
 * peering as soon as what they work on changes, and the liveness lease as soon as a new auth
 * certificate is served; these pauses are only the resync. The node heartbeat renews every 10 s as
 * kubelets do. A pass that waits on a remote side asks for `pending`.
 */
const INTERVALS = {
  heartbeat: HEARTBEAT_INTERVAL_MS,
  offers: 30_000,
  inBand: 30_000,
  liveness: 10_000,
  pending: 1_000,
  tlsRefresh: 30_000,
  renewal: 60_000,
  offloadingProvider: 30_000,
  offloadingConsumer: 10_000,
  offloadingPending: 1_000,
  nodePorts: 30_000,
};

/** Where and as whom the control role runs. */
export interface ControlOptions {
  /** The cluster's API. */
  readonly kc: KubeConfig;
  /** Name it renews its liveness lease under. */
  readonly name: string;
  /** Where the auth service listens. @example { host: "0.0.0.0", port: 8443 } */
  readonly listen: { readonly host: string; readonly port: number };
  /** Ends every loop, and closes the auth service. */
  readonly signal: AbortSignal;
  readonly reporter: Reporter;
}

/** Starts the control role; resolves its loops, which settle once `signal` aborts. */
export async function startControl(options: ControlOptions): Promise<Promise<void>[]> {
  const { kc, name, reporter, signal } = options;
  const identityLifetimeSeconds = Math.round(
    numberFromEnv("LIQO_IDENTITY_LIFETIME_SECONDS", IDENTITY_EXPIRATION_SECONDS, 600, 10 * 365 * 24 * 3600),
  );
  const renewFraction = numberFromEnv("LIQO_IDENTITY_RENEW_FRACTION", RENEW_AT_FRACTION, 0.001, 0.999);
  const wakeups = {
    heartbeat: new Wakeup(),
    offers: new Wakeup(),
    inBand: new Wakeup(),
    liveness: new Wakeup(),
    renewal: new Wakeup(),
    offloadingProvider: new Wakeup(),
    offloadingConsumer: new Wakeup(),
    nodePorts: new Wakeup(),
  };
  const auth = await startAuthService({
    kc,
    listen: options.listen,
    log: reporter,
    refreshIntervalMs: INTERVALS.tlsRefresh,
    onReload: () => wakeups.liveness.wake(),
    identityLifetimeSeconds,
  });
  signal.addEventListener("abort", () => auth.close(), { once: true });
  reporter.info(`agent ${name}: auth service listening on ${options.listen.host}:${auth.port}`);
  // The virtual nodes' kubelet API (logs, exec), where the agent runs as a pod: its address is the node's.
  const podAddress = process.env["POD_IP"];
  // Its node ports too, which kube-proxy answers on a real node's address (core/offloading/node-ports.ts).
  const nodePorts = podAddress ? new NodePortForwarder(podAddress, reporter) : undefined;
  signal.addEventListener("abort", () => nodePorts?.close(), { once: true });
  if (podAddress) {
    await startKubeletEndpoint({ kc, address: podAddress, port: KUBELET_PORT, reporter, signal });
    announceKubeletEndpoint({ address: podAddress, port: KUBELET_PORT });
    // Offloaded pods' names, as at home (core/offloading/dns-names.ts).
    await startConsumerDns({ kc, reporter, signal });
  }
  // Where the API server serves no MutatingAdmissionPolicy, the install made this listener's Secret.
  const placement = await startPlacementListener({ kc, reporter, signal });
  const watching = { signal, retryNow: new RetryNow(), reporter };
  const capacity = capacityEventFilters();
  const consumerPodRelevant = consumerPodChanges();
  let followsCapacity = false;
  let virtualNodes: ReadonlySet<string> = new Set<string>();
  // What a consumer's pods read or call, changed where pods are offloaded: the copies and Services on
  // the provider follow at once (consumer-pods.ts, consumer-services.ts), not at the next resync.
  // The agent reads these kinds only in offloaded namespaces: one watch per namespace.
  // A change the watches name is also taken at once for that one object (consumer-shortcuts.ts):
  // at hundreds of pods a pass takes seconds.
  const shortcuts = new ConsumerShortcuts(reporter);
  const wakeConsumer =
    (shortcut?: OnChange): OnChange =>
    (type, object) => {
      wakeups.offloadingConsumer.wake();
      shortcut?.(type, object);
    };
  const readWhereOffloaded = (
    [
      [(ns: string) => `/api/v1/namespaces/${ns}/configmaps`, (t, o) => shortcuts.objectChanged("ConfigMap", t, o)],
      [(ns: string) => `/api/v1/namespaces/${ns}/secrets`, (t, o) => shortcuts.objectChanged("Secret", t, o)],
      [(ns: string) => `/api/v1/namespaces/${ns}/services`, () => wakeups.nodePorts.wake()],
      [(ns: string) => `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, undefined],
    ] as const satisfies readonly (readonly [(ns: string) => string, OnChange | undefined])[]
  ).map(([collection, shortcut]) => new WatchesPerNamespace(kc, collection, wakeConsumer(shortcut), watching));

  return [
    // A reinstalled Cluster's new auth certificate is served, and announced, at once; an install
    // (which writes these Secrets after the custom resource definitions) restarts the watches
    // that found no collection yet.
    wakeOnChanges(
      kc,
      `/api/v1/namespaces/${SYSTEM_NAMESPACE}/secrets`,
      () => {
        void auth.refresh();
        void placement.refresh();
        watching.retryNow.kick();
      },
      { signal, reporter },
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
    runLoop({ name: "liveness", intervalMs: INTERVALS.liveness, signal, reporter, wakeup: wakeups.liveness }, () =>
      renewAgentLease(kc, name, auth.servingCertificate()),
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
      { name: "offer answering", intervalMs: INTERVALS.offers, signal, reporter, wakeup: wakeups.offers },
      async () => {
        followsCapacity = (await answerResourceRequests(kc, reporter)).followsCapacity;
      },
    ),
    runLoop(
      { name: "in-band peering", intervalMs: INTERVALS.inBand, signal, reporter, wakeup: wakeups.inBand },
      async () => ((await advanceInBandPeerings(kc, reporter)) > 0 ? INTERVALS.pending : undefined),
    ),
    // A new virtual node shows this agent's kubelet endpoint (its address, which offloaded pods report
    // as their host's) at once, as a kubelet registers with its addresses, not at the next heartbeat.
    wakeOnChanges(kc, "/api/v1/nodes", () => wakeups.heartbeat.wake(), {
      ...watching,
      labelSelector: VIRTUAL_NODE_LABEL,
      relevant: (type, object) =>
        Boolean(podAddress) && type !== "DELETED" && internalIpOf(object as V1Node) !== podAddress,
    }),
    runLoop(
      { name: "heartbeat", intervalMs: INTERVALS.heartbeat, signal, reporter, wakeup: wakeups.heartbeat },
      async () => void (await beatOnce(kc, reporter)),
    ),
    // Offloading, provider side: requests wake it; so does a pod made for a consumer that goes (it is made again).
    wakeOnChanges(kc, collection("remotenamespaces"), () => wakeups.offloadingProvider.wake(), watching),
    // A withdrawn request's pod goes at once (provider-withdrawal.ts); the pass lets the request go.
    wakeOnChanges(
      kc,
      collection("offloadedpods"),
      (type, object) => {
        wakeups.offloadingProvider.wake();
        if (type === "MODIFIED")
          void removeWithdrawnPod(kc, object as OffloadedPod, reporter).catch((error: unknown) =>
            reporter.warn((error as Error).message),
          );
      },
      { ...watching, relevant: offloadedPodChanges() },
    ),
    wakeOnChanges(kc, collection("reflectedservices"), () => wakeups.offloadingProvider.wake(), watching),
    wakeOnChanges(kc, collection("reflectedclaims"), () => wakeups.offloadingProvider.wake(), watching),
    // A tunnel going down or up: the consumers' endpoints in reflected Services follow it at once.
    wakeOnChanges(kc, collection("tunnelendpoints"), () => wakeups.offloadingProvider.wake(), {
      ...watching,
      relevant: tunnelStateChanges(),
    }),
    wakeOnChanges(kc, "/api/v1/pods", () => wakeups.offloadingProvider.wake(), {
      ...watching,
      labelSelector: CONSUMER_POD_UID_LABEL,
      relevant: providerPodChanges(),
    }),
    // A withdrawn remote namespace gone: its request lets go at once (its finalizer waited for it),
    // not at the next resync, and with it the consumer's delete of its NamespaceOffloading.
    wakeOnChanges(kc, "/api/v1/namespaces", () => wakeups.offloadingProvider.wake(), {
      ...watching,
      labelSelector: `${REMOTE_NAMESPACE_LABEL}=true`,
      relevant: (type) => type === "DELETED",
    }),
    runLoop(
      {
        name: "offloading (provider)",
        intervalMs: INTERVALS.offloadingProvider,
        signal,
        reporter,
        wakeup: wakeups.offloadingProvider,
      },
      async () => {
        await answerOffloadingRequests(kc, reporter);
        // Services and claims after namespaces: a request for a namespace made in this pass is held in the same pass.
        await answerServiceRequests(kc, reporter);
        await answerClaimRequests(kc, reporter);
      },
    ),
    // Offloading, consumer side: its NamespaceOffloadings, OffloadingSelectors, namespaces and the
    // pods bound to its virtual nodes wake it; what the providers do is polled, soon while something is under way there.
    wakeOnChanges(kc, collection("namespaceoffloadings"), () => wakeups.offloadingConsumer.wake(), watching),
    // A selector, or a namespace made or labelled, may offload a namespace (selected-namespaces.ts).
    wakeOnChanges(kc, collection("offloadingselectors"), () => wakeups.offloadingConsumer.wake(), watching),
    wakeOnChanges(kc, "/api/v1/namespaces", () => wakeups.offloadingConsumer.wake(), watching),
    wakeOnChanges(
      kc,
      "/api/v1/pods",
      wakeConsumer((type, object) => shortcuts.podChanged(type, object)),
      {
        ...watching,
        relevant: (type, object) =>
          virtualNodes.has((object as { spec?: { nodeName?: string } }).spec?.nodeName ?? "") &&
          consumerPodRelevant(type, object),
      },
    ),
    runLoop(
      {
        name: "offloading (consumer)",
        intervalMs: INTERVALS.offloadingConsumer,
        signal,
        reporter,
        wakeup: wakeups.offloadingConsumer,
      },
      async () => {
        const pass = await offloadOnce(kc, reporter);
        virtualNodes = pass.virtualNodes;
        shortcuts.use(pass.routes);
        for (const watches of readWhereOffloaded) watches.follow(pass.namespaces);
        return pass.pending ? INTERVALS.offloadingPending : undefined;
      },
    ),
    // A Service changed in a namespace with offloaded pods wakes it; the pause catches the others.
    ...(nodePorts
      ? [
          runLoop(
            { name: "node ports", intervalMs: INTERVALS.nodePorts, signal, reporter, wakeup: wakeups.nodePorts },
            () => answerNodePorts(kc, nodePorts),
          ),
        ]
      : []),
    // Each pass says when the next identity is due; a new peering wakes it.
    runLoop(
      { name: "identity renewal", intervalMs: INTERVALS.renewal, signal, reporter, wakeup: wakeups.renewal },
      () => renewIdentities(kc, reporter, { fraction: renewFraction }),
    ),
  ];
}
