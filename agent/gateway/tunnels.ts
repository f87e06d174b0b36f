/**
 * The gateway's reconciliation: each pass relists the cluster's `TunnelEndpoint`s and brings the
 * namespace to them, one peer at a time, then answers in each status.
 *
 *   key pair     made here, once per endpoint, kept in a Secret of the system namespace: the
 *                private key never leaves the cluster; only the public key goes into the status
 *   interface    a wireguard-go interface named for the endpoint; restarted when it died (the
 *                key is the same, so the peer needs nothing new): its exit is seen within
 *                {@link EXIT_CHECK_MS} and wakes a pass, and the restarted side dials the peer
 *                where it was last seen, so the tunnel is back in about a second
 *   peer         the remote's public key, its endpoint (the client only dials), allowed ranges
 *   remapping    the remote's ranges as this cluster sees them (remapped where they overlap a
 *                local range), with the translation and routes that need
 *   probe        one ping across the tunnel to the remote's tunnel address: Connected when it answers
 *
 * Before any of that, the endpoint's claims are checked (claims.ts): one written by a consumer
 * (in its tenant namespace) gets only its peering's own tunnel, on the link block both sides
 * derive; a refused endpoint is answered in its status and gets no finalizer, key, interface or
 * listener. An endpoint that fails (wireguard-go cannot start, the API refuses a write) is tried
 * again with the agent's backoff (backoff.ts), its own, however often a pass is woken; the
 * reason goes to the reporter when it changes and at each step, and to the endpoint's status.
 * An endpoint being deleted is taken down (interface, rules, routes, key) before the
 * gateway's finalizer is removed, so a delete that returns has left nothing behind.
 */
import * as k8s from "@kubernetes/client-node";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  SYSTEM_NAMESPACE,
  type TunnelEndpoint,
  type TunnelEndpointStatus,
} from "../../core/api/index.js";
import { getClusterIdentity, type ClusterIdentity } from "../../core/cluster/install.js";
import { deleteOptional, describeFailure, ensureObject, readOptional, serverOf } from "../../core/kube/client.js";
import { Cidr } from "../../core/net/cidr.js";
import {
  GATEWAY_FINALIZER,
  gatewayKeySecretName,
  listTunnelEndpoints,
  setTunnelEndpointFinalizers,
  writeTunnelEndpointStatus,
} from "../../core/network-fabric/endpoints.js";
import {
  checkEndpointClaims,
  decideRemoteView,
  servedPortClash,
  type AcceptedClaims,
  type ClaimsVerdict,
  type RefusedClaims,
} from "../../core/network-fabric/claims.js";
import type { RemoteView } from "../../core/network-fabric/remap.js";
import { tunnelAddress } from "../../core/network-fabric/tunnel-plan.js";
import { isRunning, type ProcessRecord } from "../../host/processes.js";
import { runIn } from "../../host/exec.js";
import { Backoff } from "../backoff.js";
import type { Reporter } from "../reporter.js";
import { answerRefusal, readOrigins } from "./admission.js";
import {
  applyPeerFabric,
  applyRelayRule,
  applyServerReplyRule,
  probeAcross,
  readConntrack,
  removePeerFabric,
} from "./fabric.js";
import { WIREGUARD_IFNAME_PREFIX } from "./commands.js";
import {
  configureWireguardPeer,
  deleteWireguardInterface,
  ensureWireguardInterface,
  readWireguardStatus,
  wireguardInterfaceName,
} from "./interface.js";
import { forgeWireguardKeyPair, wireguardPublicKeyOf, type WireguardKeyPair } from "./keys.js";
import { nextSenderToDial, udpSendersTo } from "./client-senders.js";
import { endpointToRedial } from "./client-redial.js";
import { InBandRelay, relayPorts } from "./relay.js";

const STEP = "gateway";

/** Where and how the gateway works. */
export interface GatewayOptions {
  /** The cluster's API. */
  readonly kc: k8s.KubeConfig;
  /**
   * Network namespace whose network is the cluster's (the host-process agent of local clusters:
   * the cluster's namespace). @default this process's own (the gateway pod, on its node's network)
   */
  readonly netns?: string;
  /** Directory for wireguard-go's logs and the short-lived key files `wg` reads. */
  readonly workDir: string;
  readonly reporter: Reporter;
  /** The wireguard-go executable. @default "wireguard-go" */
  readonly wireguardGo?: string;
  /**
   * The address of the gateway's node, to which a Service brings the peers' packets (a gateway
   * pod's host IP). @default none: the gateway's own namespace is reached at the address peers dial
   */
  readonly nodeAddress?: string;
  /** The clock of the backoff of failing endpoints (ms). @default Date.now */
  readonly now?: () => number;
}

/** What was last applied for one endpoint, so that a pass over an unchanged endpoint costs next to nothing. */
interface Applied {
  /** What the applied state was derived from, except the namespace's routes (read only to apply). */
  readonly inputs: string;
  /** The interface, and whom it reaches, so that it can be taken down without its endpoint. */
  readonly ifname: string;
  readonly remoteClusterName: string;
  readonly process: ProcessRecord;
  readonly publicKey: string;
  readonly slot: number;
  readonly view: RemoteView | undefined;
  /** The last status written (without the handshake and round trip), and when. */
  readonly status: string;
  readonly statusWrittenAt: number;
  /** When the link was last probed, and whether the probe was answered. */
  readonly observedAt: number;
  readonly connected: boolean;
  /**
   * Where the peer was last seen (`wg show`), kept across a restart of wireguard-go: a server's
   * fresh process would otherwise not know where its client is until the client gives up on the
   * old session (15 s or more) and handshakes again.
   */
  readonly peerSeenAt: { readonly publicKey: string; readonly endpoint: string } | undefined;
  /**
   * The UDP port the interface got (a client's is any free one), taken again by a restarted
   * client: the server, which remembers where it saw the client, would otherwise dial a port
   * nobody listens on, and wait for the client's own rehandshake (15 s).
   */
  readonly ownPort: number | undefined;
  /** Whom a server dialed since its tunnel went down (nextSenderToDial); empty while connected. */
  readonly dialedWhileDown: readonly string[];
}

/** Rewrite an unchanged status at most this often (it carries the handshake time and round trip). */
const STATUS_REFRESH_MS = 30_000;

/**
 * Probe a connected, unchanged tunnel at most this often (as often as its status is rewritten
 * anyway). A dead wireguard-go is still noticed on the very next pass (its PID is checked every
 * time); a silent peer within this much. Probing every pass cost two process starts per tunnel
 * every 2 s, the bulk of an idle gateway's CPU.
 */
const CONNECTED_PROBE_MS = STATUS_REFRESH_MS;

/**
 * How often the gateway checks that the wireguard-go processes it runs are alive (a read of
 * `/proc/PID/stat` each): a dead one wakes a pass at once rather than at the next resync. Some
 * of them were started by an agent before this one, so they are not its children to wait on.
 */
export const EXIT_CHECK_MS = 250;

/** The Secret holding the key pair of interface `ifname` (named where the Tunnel's delete can name it too). */
export const keySecretName = gatewayKeySecretName;

/** The interface name of an endpoint: one per endpoint object, unique on the machine. */
export function interfaceOf(endpoint: TunnelEndpoint, localClusterId: string): string {
  return wireguardInterfaceName(`${endpoint.metadata.namespace}/${endpoint.metadata.name}`, localClusterId);
}

/** The smallest slot (1-255) no other endpoint holds. */
function freeSlot(endpoints: readonly TunnelEndpoint[], self: TunnelEndpoint): number {
  const taken = new Set(endpoints.filter((e) => e.metadata.uid !== self.metadata.uid).map((e) => e.status?.slot));
  for (let slot = 1; slot <= 255; slot++) if (!taken.has(slot)) return slot;
  throw new Error(`${STEP}: every one of the 255 peer slots is taken`);
}

/** Destinations of the namespace's own routes (its bridges, links, host networks): no remote may be seen under them. */
async function localRoutes(netns: string | undefined, exceptPrefix: string): Promise<Cidr[]> {
  const out = await runIn(netns, "ip", ["-4", "-o", "route", "show", "table", "main"]);
  const cidrs: Cidr[] = [];
  for (const line of out.split("\n")) {
    const [dest] = line.trim().split(/\s+/);
    if (!dest || dest === "default" || line.includes(` dev ${exceptPrefix}`)) continue;
    try {
      cidrs.push(Cidr.parse(dest.includes("/") ? dest : `${dest}/32`));
    } catch {
      // Not an IPv4 network (e.g. a broadcast or multicast entry): it cannot clash.
    }
  }
  return cidrs;
}

/** What an accepted endpoint asks of this cluster, worked out before anything is set up. */
interface Target {
  /** The endpoint's interface. */
  readonly ifname: string;
  /** Its peer slot (kept once reported). */
  readonly slot: number;
  /** The tunnel's link block. */
  readonly link: Cidr;
  /** This side's address on the link, with the link's prefix (the interface's address). */
  readonly interfaceAddress: string;
  /** This side's address on the link, bare: where the in-band relay listens. */
  readonly ownTunnelAddress: string;
  /** The remote side's address on the link, which the probe pings. */
  readonly remoteTunnelAddress: string;
  /** The ranges other endpoints already see their remotes under: none may be seen there again. */
  readonly others: readonly string[];
  /** What the applied state derives from (except the namespace's routes): a change means apply again. */
  readonly inputs: string;
}

/** The {@link Target} of an accepted endpoint, among `all` the cluster's endpoints. Pure. */
function targetOf(
  endpoint: TunnelEndpoint,
  all: readonly TunnelEndpoint[],
  identity: ClusterIdentity,
  claims: AcceptedClaims,
): Target {
  const { spec } = endpoint;
  const slot = endpoint.status?.slot ?? freeSlot(all, endpoint);
  const remoteRole = spec.role === "server" ? "client" : "server";
  const others = all
    .filter((e) => e.metadata.uid !== endpoint.metadata.uid)
    .flatMap((e) => [e.status?.remotePodCidrAsSeen, e.status?.remoteExternalCidrAsSeen])
    .filter((c): c is string => !!c);
  return {
    ifname: interfaceOf(endpoint, identity.clusterId),
    slot,
    link: claims.link,
    interfaceAddress: tunnelAddress(claims.link, spec.role),
    ownTunnelAddress: tunnelAddress(claims.link, spec.role).split("/")[0]!,
    remoteTunnelAddress: tunnelAddress(claims.link, remoteRole).split("/")[0]!,
    others,
    inputs: JSON.stringify({
      spec,
      slot,
      others,
      cidrs: [identity.podCidr, identity.externalCidr, identity.serviceCidr],
    }),
  };
}

/**
 * How this cluster will see the remote's ranges: remapped where they overlap anything local (its
 * pod, external and service CIDRs, what other remotes are seen under, the namespace's own routes).
 * A refusal when a server's port is already served, or the ranges cannot be placed.
 */
async function placeRemote(
  endpoint: TunnelEndpoint,
  all: readonly TunnelEndpoint[],
  identity: ClusterIdentity,
  claims: AcceptedClaims,
  others: readonly string[],
  routes: () => Promise<readonly Cidr[]>,
): Promise<{ readonly accepted: true; readonly view: RemoteView | undefined } | RefusedClaims> {
  const clash = servedPortClash(endpoint, all);
  if (clash) return clash;
  return decideRemoteView(claims, {
    podCidr: Cidr.parse(identity.podCidr!),
    ...(identity.externalCidr ? { externalCidr: Cidr.parse(identity.externalCidr) } : {}),
    taken: [
      ...(identity.serviceCidr ? [Cidr.parse(identity.serviceCidr)] : []),
      ...others.map((c) => Cidr.parse(c)),
      ...(await routes()),
    ],
  });
}

/** The gateway of one cluster. Call {@link TunnelGateway.pass} periodically. */
export class TunnelGateway {
  private readonly applied = new Map<string, Applied>();
  /** The backoff of each endpoint that failed lately, by uid and generation (a new spec is tried at once). */
  private readonly retries = new Map<string, Backoff>();
  private readonly now: () => number;
  private readonly relay: InBandRelay;

  constructor(private readonly options: GatewayOptions) {
    mkdirSync(options.workDir, { recursive: true, mode: 0o700 });
    this.now = options.now ?? Date.now;
    this.relay = new InBandRelay(options.kc, options.reporter);
  }

  /**
   * Calls `onExit` as soon as a wireguard-go process this gateway runs is found dead (checked every
   * {@link EXIT_CHECK_MS}), until `signal` aborts: the caller wakes its loop, whose pass restarts it.
   */
  watchProcesses(signal: AbortSignal, onExit: () => void): void {
    const reported = new Set<number>();
    const timer = setInterval(() => {
      for (const applied of this.applied.values()) {
        if (reported.has(applied.process.pid) || isRunning(applied.process)) continue;
        reported.add(applied.process.pid);
        this.options.reporter.warn(
          `${STEP}: wireguard-go of ${applied.ifname} (pid ${applied.process.pid}) for ${applied.remoteClusterName} exited; restarting it`,
        );
        onExit();
      }
    }, EXIT_CHECK_MS);
    timer.unref();
    signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  }

  /**
   * One reconciliation pass over every endpoint. A failing endpoint is reported in its status and
   * does not stop the others. Resolves how many tunnels are not Connected yet: they wait on the
   * remote gateway's handshake, which no watch here sees. Refused endpoints do not count: they
   * wait on a new spec, which the watch does see.
   */
  async pass(): Promise<number> {
    const { kc } = this.options;
    const identity = await getClusterIdentity(kc);
    if (!identity) return 0; // Not installed (yet): nothing can name a tunnel.
    const endpoints = await listTunnelEndpoints(kc, STEP);
    const origins = await readOrigins(kc, endpoints, STEP);
    // The namespace's own routes, read once a pass and only when an endpoint is (re)applied.
    let routes: Promise<Cidr[]> | undefined;
    const readRoutes = (): Promise<Cidr[]> => (routes ??= localRoutes(this.options.netns, WIREGUARD_IFNAME_PREFIX));
    const refused = new Set<string>();
    const retryKey = (e: TunnelEndpoint): string => `${e.metadata.uid}@${e.metadata.generation}`;
    for (const key of this.retries.keys()) if (!endpoints.some((e) => retryKey(e) === key)) this.retries.delete(key);
    for (const endpoint of endpoints) {
      const label = `TunnelEndpoint ${endpoint.metadata.namespace}/${endpoint.metadata.name}`;
      const uid = endpoint.metadata.uid!;
      const backoff = this.retries.get(retryKey(endpoint)) ?? new Backoff(`${STEP}: ${label}`);
      // Backing off: a pass woken by the endpoint's own status write (or anything else) leaves it
      // be; a delete is never held back.
      if (!endpoint.metadata.deletionTimestamp && this.now() < backoff.dueAt) continue;
      try {
        if (endpoint.metadata.deletionTimestamp) {
          // Without the finalizer the gateway never set anything up for it (or already took it down).
          if (endpoint.metadata.finalizers?.includes(GATEWAY_FINALIZER)) await this.takeDown(endpoint, identity);
          continue;
        }
        const verdict: ClaimsVerdict = checkEndpointClaims(
          endpoint,
          origins.get(endpoint.metadata.namespace ?? "")!,
          identity.clusterId,
        );
        const refusal = verdict.accepted
          ? await this.reconcile(endpoint, endpoints, identity, verdict, readRoutes)
          : verdict;
        if (refusal) {
          refused.add(uid);
          await answerRefusal(kc, endpoint, refusal, this.options.reporter, STEP);
          // What runs stays; but once a spec is accepted again, its status must be written and probed afresh.
          const applied = this.applied.get(uid);
          if (applied) this.applied.set(uid, { ...applied, status: "", observedAt: 0, connected: false });
        }
        const recovered = backoff.succeeded();
        if (recovered) this.options.reporter.info(recovered);
        this.retries.delete(retryKey(endpoint));
      } catch (error) {
        const message = (error as Error).message;
        const decision = backoff.failed(message, this.now());
        this.retries.set(retryKey(endpoint), backoff);
        if (decision.report) this.options.reporter.warn(decision.report);
        if (!endpoint.metadata.deletionTimestamp) {
          await writeTunnelEndpointStatus(
            kc,
            endpoint,
            { ...endpoint.status, phase: "Error", message, observedGeneration: endpoint.metadata.generation! },
            STEP,
          ).catch(() => undefined);
          // Applied again next pass; what runs stays known, so it can still be taken down. A port
          // kept from before may be what failed: the next start takes any free one.
          const applied = this.applied.get(uid);
          if (applied) this.applied.set(uid, { ...applied, inputs: "", ownPort: undefined });
        }
      }
    }
    await this.removeOrphans(endpoints);
    return endpoints.filter(
      (e) =>
        !e.metadata.deletionTimestamp && !refused.has(e.metadata.uid!) && !this.applied.get(e.metadata.uid!)?.connected,
    ).length;
  }

  /**
   * Brings the namespace to an endpoint whose claims were accepted: places the remote's ranges,
   * sets the finalizer, brings the tunnel up (again) when what it derives from changed or its
   * wireguard-go died, and reports. Resolves a refusal, having changed nothing, when the remote's
   * ranges cannot be placed; the finalizer is set only once everything is checked, right before
   * anything is set up.
   */
  private async reconcile(
    endpoint: TunnelEndpoint,
    all: readonly TunnelEndpoint[],
    identity: ClusterIdentity,
    claims: AcceptedClaims,
    routes: () => Promise<readonly Cidr[]>,
  ): Promise<RefusedClaims | undefined> {
    if (!identity.podCidr)
      throw new Error(`${STEP}: the cluster's pod CIDR is not recorded (reinstall the Cluster resource)`);
    const uid = endpoint.metadata.uid!;
    const target = targetOf(endpoint, all, identity, claims);
    let applied = this.applied.get(uid);
    const stale = !applied || applied.inputs !== target.inputs || !isRunning(applied.process);
    let view = applied?.view;
    if (stale) {
      const placed = await placeRemote(endpoint, all, identity, claims, target.others, routes);
      if (!placed.accepted) return placed;
      view = placed.view;
    }
    await this.ensureFinalizer(endpoint);
    if (!applied || stale) {
      applied = await this.bringUp(endpoint, target, view, applied);
      this.applied.set(uid, applied);
    }
    await this.ensureRelay(endpoint, target);
    await this.reportStatus(endpoint, target, applied, identity);
    return undefined;
  }

  /**
   * Whether this gateway relays in-band ports: not when it works in another process's namespace
   * (the host-process agent of local clusters), where the API server and the agent listen on every
   * address of the cluster's network and no socket of this process could listen.
   */
  private get relaysInBand(): boolean {
    return this.options.netns === undefined;
  }

  /** Serves the in-band ports the endpoint asks for on its tunnel address (relay.ts). */
  private async ensureRelay(endpoint: TunnelEndpoint, target: Target): Promise<void> {
    const uid = endpoint.metadata.uid!;
    const ports = relayPorts(endpoint.spec);
    if (!ports || !this.relaysInBand) return this.relay.stop(uid);
    await this.relay.ensure(uid, endpoint.spec.remoteClusterName, { address: target.ownTunnelAddress, ...ports });
  }

  /** Sets the gateway's finalizer, so that the endpoint's delete waits until the gateway took the tunnel down. */
  private async ensureFinalizer(endpoint: TunnelEndpoint): Promise<void> {
    if (endpoint.metadata.finalizers?.includes(GATEWAY_FINALIZER)) return;
    await setTunnelEndpointFinalizers(
      this.options.kc,
      endpoint,
      [...(endpoint.metadata.finalizers ?? []), GATEWAY_FINALIZER],
      STEP,
    );
  }

  /**
   * Sets the tunnel up from scratch or over what runs: the key pair, the wireguard-go interface
   * (restarted if it died), its one peer, and the translation and routes of the remote's view.
   * Resolves what is now applied, not yet probed.
   */
  private async bringUp(
    endpoint: TunnelEndpoint,
    target: Target,
    view: RemoteView | undefined,
    before: Applied | undefined,
  ): Promise<Applied> {
    const { netns, workDir } = this.options;
    const { spec } = endpoint;
    const { ifname, slot } = target;
    const keys = await this.ensureKeyPair(ifname, spec.remoteClusterId);
    // Before the interface can answer anything: a server's first answers, tracked, clash with the
    // Service's DNAT of the client's flow and leave from another port, to which the client roams;
    // that conntrack entry then outlives the gateway's move to another node, and holds the client
    // on the old node for as long as it sends (seen: a drained gateway never heard from it again).
    if (spec.role === "server") await applyServerReplyRule(netns, ifname, spec.listenPort, this.options.nodeAddress);
    const running = await ensureWireguardInterface({
      netns,
      ifname,
      privateKey: keys.privateKey,
      // Only the server must be found at a known port; a client dials from any free one, so
      // one gateway may dial many peers.
      listenPort: spec.role === "server" ? spec.listenPort : (before?.ownPort ?? 0),
      address: target.interfaceAddress,
      mtu: spec.mtu,
      logFile: join(workDir, `${ifname}.log`),
      keyDir: workDir,
      ...(this.options.wireguardGo ? { wireguardGo: this.options.wireguardGo } : {}),
    });
    if (running.started)
      this.options.reporter.info(
        `${STEP}: interface ${ifname} up for ${spec.remoteClusterName} (wireguard-go pid ${running.process.pid})`,
      );
    // The server of a restarted interface dials its client where it last saw it, so that the
    // probe that follows starts the new session at once; the client roams on as before.
    // (A gateway pod that takes over finds it in its node's conntrack: dialClientWhereItSends.)
    const seen = before?.peerSeenAt?.publicKey === spec.remote.publicKey ? before?.peerSeenAt : undefined;
    const dial = spec.remote.endpoint ?? (running.started ? seen?.endpoint : undefined);
    const own = await readWireguardStatus(netns, ifname);
    if (spec.remote.publicKey) await this.configureOnlyPeer(endpoint, target, view, own.peers, dial);
    if (view) await applyPeerFabric(netns, { peerId: ifname, tunnelInterface: ifname, view, slot });
    const relayed = relayPorts(spec);
    if (relayed && this.relaysInBand) {
      const ports = [...relayed.apiServer, ...(relayed.auth === undefined ? [] : [relayed.auth])];
      await applyRelayRule(netns, ifname, target.ownTunnelAddress, ports);
    }
    return {
      inputs: target.inputs,
      ifname,
      remoteClusterName: spec.remoteClusterName,
      process: running.process,
      publicKey: keys.publicKey,
      slot,
      view,
      status: "",
      statusWrittenAt: 0,
      observedAt: 0,
      connected: false,
      peerSeenAt: seen,
      ownPort: own.listenPort,
      dialedWhileDown: dial ? [dial] : [],
    };
  }

  /** Makes the endpoint's remote the interface's one peer: former peers (an old key) removed, this one (re)configured. */
  private async configureOnlyPeer(
    endpoint: TunnelEndpoint,
    target: Target,
    view: RemoteView | undefined,
    peers: readonly { readonly publicKey: string }[],
    dial: string | undefined,
  ): Promise<void> {
    const { netns } = this.options;
    const { remote, keepaliveSeconds } = endpoint.spec;
    const { ifname, link } = target;
    const formerPeers = peers.filter((p) => p.publicKey !== remote.publicKey);
    for (const peer of formerPeers) await runIn(netns, "wg", ["set", ifname, "peer", peer.publicKey, "remove"]);
    await configureWireguardPeer({
      netns,
      ifname,
      peerPublicKey: remote.publicKey!,
      ...(dial ? { endpoint: dial } : {}),
      allowedIps: [link.toString(), ...(view ? view.ranges.map((r) => r.real.toString()) : [])],
      ...(keepaliveSeconds > 0 ? { keepaliveSeconds } : {}),
    });
  }

  /**
   * Probes the tunnel and writes what it found into the endpoint's status: skipped while a
   * connected tunnel was probed lately; the status is written when it changed, or is old enough
   * that its handshake time and round trip need refreshing.
   */
  private async reportStatus(
    endpoint: TunnelEndpoint,
    target: Target,
    applied: Applied,
    identity: ClusterIdentity,
  ): Promise<void> {
    const uid = endpoint.metadata.uid!;
    const { ifname } = target;
    // A connected tunnel is looked at again only every CONNECTED_PROBE_MS, unless the endpoint this
    // side announces changed (its install read a new load-balancer address): the peer dials it.
    const announcing = endpoint.spec.role === "server" ? identity.gatewayEndpoint : undefined;
    const announcedMoved = announcing !== undefined && announcing !== endpoint.status?.endpoint;
    if (applied.connected && !announcedMoved && Date.now() - applied.observedAt < CONNECTED_PROBE_MS) return;
    // Before the probe, which then starts the handshake at once.
    if (endpoint.spec.role === "server" && !applied.connected) {
      const dialed = await this.dialClientWhereItSends(endpoint, target, applied);
      if (dialed) applied = { ...applied, dialedWhileDown: dialed };
    }
    if (endpoint.spec.role === "client" && !applied.connected) await this.dialServerWhereSpecSays(endpoint, ifname);
    const { status, peerSeenAt } = await this.observe(endpoint, ifname, applied, identity, target.remoteTunnelAddress);
    const comparable = JSON.stringify({ ...status, latestHandshake: undefined, rttMs: undefined });
    const observed = {
      ...applied,
      observedAt: Date.now(),
      connected: status.phase === "Connected",
      peerSeenAt: peerSeenAt ?? applied.peerSeenAt,
      dialedWhileDown: status.phase === "Connected" ? [] : applied.dialedWhileDown,
    };
    this.applied.set(uid, observed);
    if (comparable === applied.status && Date.now() - applied.statusWrittenAt <= STATUS_REFRESH_MS) return;
    await writeTunnelEndpointStatus(this.options.kc, endpoint, status, STEP);
    this.applied.set(uid, { ...observed, status: comparable, statusWrittenAt: Date.now() });
    if (status.phase !== endpoint.status?.phase)
      this.options.reporter.info(
        `${STEP}: tunnel to ${endpoint.spec.remoteClusterName} (${ifname}): ${status.phase}${status.message ? `: ${status.message}` : ""}`,
      );
  }

  /**
   * The status to report: keys and views, plus the handshake and a probe when the peer is
   * configured; and where the peer was seen.
   */
  private async observe(
    endpoint: TunnelEndpoint,
    ifname: string,
    applied: Applied,
    identity: ClusterIdentity,
    remoteTunnelAddress: string,
  ): Promise<{ status: TunnelEndpointStatus; peerSeenAt?: Applied["peerSeenAt"] }> {
    const { spec } = endpoint;
    const { publicKey, slot, view } = applied;
    const base: TunnelEndpointStatus = {
      observedGeneration: endpoint.metadata.generation!,
      publicKey,
      // Where the client dials when its Tunnel gives no address: the endpoint this cluster's install read back.
      ...(spec.role === "server" && identity.gatewayEndpoint ? { endpoint: identity.gatewayEndpoint } : {}),
      podCidr: identity.podCidr!,
      ...(identity.externalCidr ? { externalCidr: identity.externalCidr } : {}),
      interfaceName: ifname,
      slot,
      ...(view ? { remotePodCidrAsSeen: view.remotePodCidrAsSeen.toString() } : {}),
      ...(view?.remoteExternalCidrAsSeen ? { remoteExternalCidrAsSeen: view.remoteExternalCidrAsSeen.toString() } : {}),
      remoteTunnelAddress,
    };
    if (!spec.remote.publicKey || !view)
      return {
        status: {
          ...base,
          phase: "Pending",
          message: `waiting for ${spec.remoteClusterName}'s public key and pod CIDR`,
        },
      };
    // The probe first: the handshake it waits for (or starts) shows in the status read after it.
    const rttMs = await probeAcross(this.options.netns, ifname, remoteTunnelAddress);
    const peer = (await readWireguardStatus(this.options.netns, ifname)).peers.find(
      (p) => p.publicKey === spec.remote.publicKey,
    );
    const handshake = peer?.latestHandshake ? { latestHandshake: peer.latestHandshake.toISOString() } : {};
    const peerSeenAt = peer?.endpoint ? { publicKey: peer.publicKey, endpoint: peer.endpoint } : undefined;
    if (rttMs === undefined) {
      const where =
        spec.role === "client"
          ? `dialing ${spec.remote.endpoint ?? "(no endpoint)"}`
          : `listening on UDP ${spec.listenPort}`;
      const message =
        `no answer from ${spec.remoteClusterName}'s tunnel address ${remoteTunnelAddress} yet (${where}; ` +
        `${peer?.latestHandshake ? "handshake done" : "no handshake yet"})`;
      return { status: { ...base, ...handshake, phase: "Pending", message }, peerSeenAt };
    }
    return {
      status: { ...base, ...handshake, phase: "Connected", rttMs: Math.round(rttMs * 1000) / 1000 },
      peerSeenAt,
    };
  }

  /**
   * A server whose tunnel is not connected dials its client where the client's packets come from
   * now, as this node's conntrack shows (see udpSendersTo), each sender in turn (nextSenderToDial);
   * resolves whom it dialed since the tunnel went down. A gateway pod that took over has no session,
   * and the client keeps sending on its old one, which the new wireguard-go drops, until the
   * client's own rehandshake 15 s later; every flow across the tunnel would wait as long. Best
   * effort: without conntrack's listing (a kernel that does not offer it) the client's rehandshake
   * still comes. A forged packet can only make the gateway send a handshake initiation, which
   * grants nothing, and takes one turn of the client's.
   */
  private async dialClientWhereItSends(
    endpoint: TunnelEndpoint,
    target: Target,
    applied: Applied,
  ): Promise<readonly string[] | undefined> {
    const { netns, reporter, nodeAddress } = this.options;
    const { remote, listenPort, remoteClusterName } = endpoint.spec;
    const { ifname } = target;
    if (!remote.publicKey) return undefined;
    const senders = udpSendersTo(await readConntrack(netns), listenPort, nodeAddress ? [nodeAddress] : []);
    const next = nextSenderToDial(senders, applied.dialedWhileDown);
    if (!next) return undefined;
    reporter.info(`${STEP}: ${remoteClusterName} not connected; packets come from ${next.sender}: dialing it there`);
    const peer = (await readWireguardStatus(netns, ifname)).peers.find((p) => p.publicKey === remote.publicKey);
    // A peer that never had a session is made anew: wireguard-go waits 5 s (REKEY_TIMEOUT) after
    // any handshake it tried, even one sent nowhere (no endpoint yet, or a sender that was not the
    // client), before it sends the next; a new peer sends at once, and has no session to lose.
    if (peer && !peer.latestHandshake) {
      await runIn(netns, "wg", ["set", ifname, "peer", remote.publicKey, "remove"]);
      await this.configureOnlyPeer(endpoint, target, applied.view, [], next.sender);
    } else await this.setPeerEndpoint(ifname, remote.publicKey, next.sender);
    return next.dialed;
  }

  /** A client whose tunnel is down and whose peer roamed away from its spec's endpoint dials that endpoint again (client-redial.ts). */
  private async dialServerWhereSpecSays(endpoint: TunnelEndpoint, ifname: string): Promise<void> {
    const { netns, reporter } = this.options;
    const { remote, remoteClusterName } = endpoint.spec;
    if (!remote.publicKey) return;
    const peer = (await readWireguardStatus(netns, ifname)).peers.find((p) => p.publicKey === remote.publicKey);
    const target = endpointToRedial(remote.endpoint, peer?.endpoint);
    if (!target) return;
    reporter.info(
      `${STEP}: ${remoteClusterName} not connected; its peer is at ${peer?.endpoint ?? "no endpoint"}: dialing ${target} again`,
    );
    await this.setPeerEndpoint(ifname, remote.publicKey, target);
  }

  /** Points WireGuard's peer `publicKey` on `ifname` at `endpoint` (the peer's other settings stay). */
  private async setPeerEndpoint(ifname: string, publicKey: string, endpoint: string): Promise<void> {
    await runIn(this.options.netns, "wg", ["set", ifname, "peer", publicKey, "endpoint", endpoint]);
  }

  /** The endpoint's key pair from its Secret, made and stored on first use. */
  private async ensureKeyPair(ifname: string, remoteClusterId: string): Promise<WireguardKeyPair> {
    const { kc } = this.options;
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const name = keySecretName(ifname);
    const endpoint = serverOf(kc);
    const secret = await readOptional(() => core.readNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE })).catch(
      describeFailure(`${STEP}: reading Secret ${SYSTEM_NAMESPACE}/${name}`, endpoint),
    );
    const stored = Buffer.from(secret?.data?.["privateKey"] ?? "", "base64").toString("utf8");
    if (stored) return { privateKey: stored, publicKey: wireguardPublicKeyOf(stored) };
    const fresh = forgeWireguardKeyPair();
    await ensureObject(kc, {
      apiVersion: "v1",
      kind: "Secret",
      type: "Opaque",
      metadata: {
        name,
        namespace: SYSTEM_NAMESPACE,
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: remoteClusterId },
      },
      data: { privateKey: Buffer.from(fresh.privateKey, "utf8").toString("base64") },
    } as k8s.V1Secret).catch(describeFailure(`${STEP}: applying Secret ${SYSTEM_NAMESPACE}/${name}`, endpoint));
    return fresh;
  }

  /** Removes everything of an endpoint being deleted, then lets it go. */
  private async takeDown(endpoint: TunnelEndpoint, identity: ClusterIdentity): Promise<void> {
    const { kc } = this.options;
    const ifname = interfaceOf(endpoint, identity.clusterId);
    await this.relay.stop(endpoint.metadata.uid!);
    const removed = await this.removeTunnel(ifname, this.applied.get(endpoint.metadata.uid!)?.process);
    this.applied.delete(endpoint.metadata.uid!);
    if (endpoint.metadata.finalizers?.includes(GATEWAY_FINALIZER)) {
      await setTunnelEndpointFinalizers(
        kc,
        endpoint,
        endpoint.metadata.finalizers.filter((f) => f !== GATEWAY_FINALIZER),
        STEP,
      );
    }
    this.options.reporter.info(
      `${STEP}: tunnel to ${endpoint.spec.remoteClusterName} removed (${removed.join(", ") || "nothing left"})`,
    );
  }

  /**
   * Takes down tunnels this gateway runs whose endpoint is gone without passing through
   * {@link takeDown}: a tenant may patch its endpoint's finalizers away and delete it, and what it
   * had started must not run on without an object that stands for it.
   */
  private async removeOrphans(endpoints: readonly TunnelEndpoint[]): Promise<void> {
    const live = new Set(endpoints.map((e) => e.metadata.uid));
    for (const [uid, applied] of this.applied) {
      if (live.has(uid)) continue;
      await this.relay.stop(uid);
      const removed = await this.removeTunnel(applied.ifname, applied.process);
      this.applied.delete(uid);
      this.options.reporter.warn(
        `${STEP}: tunnel to ${applied.remoteClusterName} removed, its TunnelEndpoint having gone without the gateway (${removed.join(", ") || "nothing left"})`,
      );
    }
  }

  /**
   * Takes down every tunnel this gateway runs (its translation, rules, routes and interface)
   * and keeps the rest: the key Secrets, so that the gateway taking over has the same keys and the
   * peers need nothing new, and the endpoints' finalizers, which stand for tunnels that should run.
   * What a gateway pod does on SIGTERM, after its loop stopped: a drained node is left clean.
   * Resolves what was removed.
   */
  async shutdown(): Promise<string[]> {
    const { netns } = this.options;
    const removed: string[] = [];
    const stopped = new Set(this.applied.keys());
    await this.relay.stopAll();
    for (const [uid, applied] of this.applied) {
      // The interface first: its wireguard-go must send nothing once the server's reply rule is gone
      // (removePeerFabric). An answer sent then is tracked, clashes with the Service's DNAT of the
      // client's flow and leaves from another port; the client roams to that port, and the entry
      // conntrack keeps for it on this node (refreshed by the client's every packet) holds it here,
      // where no one listens any more: the gateway that takes over on another node never hears
      // from it (seen under load, the drain of test/integration/pods-across).
      removed.push(...(await deleteWireguardInterface({ netns, ifname: applied.ifname, process: applied.process })));
      await removePeerFabric(netns, applied.ifname);
      this.applied.delete(uid);
    }
    await this.reportStopped(stopped);
    return removed;
  }

  /**
   * Says in each stopped tunnel's status that it is down until a gateway takes over, so that no one
   * reads the last `Connected` of a gateway that is gone. Best effort: the API may be out of reach
   * on a node being drained, and the cleanup above is what matters.
   */
  private async reportStopped(uids: ReadonlySet<string>): Promise<void> {
    if (uids.size === 0) return;
    const { kc, reporter } = this.options;
    try {
      for (const endpoint of await listTunnelEndpoints(kc, STEP)) {
        if (!uids.has(endpoint.metadata.uid!) || endpoint.metadata.deletionTimestamp) continue;
        const { rttMs: _rtt, ...status } = endpoint.status ?? {};
        await writeTunnelEndpointStatus(
          kc,
          endpoint,
          {
            ...status,
            observedGeneration: endpoint.metadata.generation!,
            phase: "Pending",
            message: "the gateway stopped (its tunnels are down until a gateway takes over)",
          },
          STEP,
        );
      }
    } catch (error) {
      reporter.warn(`${STEP}: stopped tunnels not reported in their status: ${(error as Error).message}`);
    }
  }

  /** Removes one tunnel's fabric, interface and key Secret; resolves what was removed. */
  private async removeTunnel(ifname: string, process: ProcessRecord | undefined): Promise<string[]> {
    const { kc, netns } = this.options;
    // The interface first, for the reason shutdown() gives.
    const removed = await deleteWireguardInterface({ netns, ifname, ...(process ? { process } : {}) });
    await removePeerFabric(netns, ifname);
    const name = keySecretName(ifname);
    await deleteOptional(() =>
      kc.makeApiClient(k8s.CoreV1Api).deleteNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE }),
    ).catch(describeFailure(`${STEP}: deleting Secret ${SYSTEM_NAMESPACE}/${name}`, serverOf(kc)));
    return [...removed, `Secret ${name}`];
  }
}
