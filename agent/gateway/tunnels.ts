/**
 * The gateway's reconciliation: each pass relists the cluster's `TunnelEndpoint`s and brings the
 * namespace to them, one peer at a time, then answers in each status.
 *
 *   key pair     made here, once per endpoint, kept in a Secret of the system namespace: the
 *                private key never leaves the cluster; only the public key goes into the status
 *   interface    a wireguard-go interface named for the endpoint; restarted when it died (the
 *                key is the same, so the peer needs nothing new)
 *   peer         the remote's public key, its endpoint (the client only dials), allowed ranges
 *   remapping    the remote's ranges as this cluster sees them (remapped where they overlap a
 *                local range), with the NAT rules and routes that need
 *   probe        one ping across the tunnel to the remote's tunnel address: Connected when it answers
 *
 * Before any of that, the endpoint's claims are checked (claims.ts): one written by a consumer
 * (in its tenant namespace) gets only its peering's own tunnel, on the link block both sides
 * derive; a refused endpoint is answered in its status and gets no finalizer, key, interface or
 * listener. An endpoint being deleted is taken down (interface, rules, routes, key) before the
 * gateway's finalizer is removed, so a delete that returns has left nothing behind.
 */
import * as k8s from "@kubernetes/client-node";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { MANAGED_BY, MANAGED_BY_LABEL, REMOTE_CLUSTER_LABEL, SYSTEM_NAMESPACE, type TunnelEndpoint, type TunnelEndpointStatus } from "../../provider/api/index.js";
import { getClusterIdentity, type ClusterIdentity } from "../../provider/cluster/install.js";
import { deleteOptional, describeFailure, ensureObject, readOptional, serverOf } from "../../provider/kube/client.js";
import { Cidr } from "../../provider/net/cidr.js";
import { GATEWAY_FINALIZER, gatewayKeySecretName, listTunnelEndpoints, setTunnelEndpointFinalizers, writeTunnelEndpointStatus } from "../../provider/network-fabric/endpoints.js";
import { checkEndpointClaims, decideRemoteView, type AcceptedClaims, type ClaimsVerdict, type RefusedClaims } from "../../provider/network-fabric/claims.js";
import type { RemoteView } from "../../provider/network-fabric/remap.js";
import { tunnelAddress } from "../../provider/network-fabric/tunnel-plan.js";
import { isRunning, type ProcessRecord } from "../../provider/host/processes.js";
import { runIn } from "../../provider/host/exec.js";
import type { Reporter } from "../reporter.js";
import { answerRefusal, readOrigins } from "./admission.js";
import { applyPeerFabric, probeAcross, removePeerFabric } from "./fabric.js";
import { WIREGUARD_IFNAME_PREFIX } from "./commands.js";
import { configureWireguardPeer, deleteWireguardInterface, ensureWireguardInterface, readWireguardStatus, wireguardInterfaceName } from "./interface.js";
import { forgeWireguardKeyPair, wireguardPublicKeyOf, type WireguardKeyPair } from "./keys.js";

const STEP = "gateway";

/** Where and how the gateway works. */
export interface GatewayOptions {
  /** The cluster's API. */
  readonly kc: k8s.KubeConfig;
  /** Network namespace whose network is the cluster's (local clusters: the cluster's namespace). */
  readonly netns: string;
  /** Directory for wireguard-go's logs and the short-lived key files `wg` reads. */
  readonly workDir: string;
  readonly reporter: Reporter;
  /** The wireguard-go executable. @default "wireguard-go" */
  readonly wireguardGo?: string;
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

/**
 * Each tunnel this gateway serves needs a UDP port of its own (one wireguard-go interface per
 * tunnel): refuses a port another served tunnel already holds, naming it.
 */
function checkServerPort(endpoint: TunnelEndpoint, all: readonly TunnelEndpoint[]): void {
  const holder = all.find(
    (e) => e.metadata.uid !== endpoint.metadata.uid && !e.metadata.deletionTimestamp && e.spec.role === "server" && e.spec.listenPort === endpoint.spec.listenPort && e.status?.interfaceName,
  );
  if (holder) {
    throw new Error(
      `${STEP}: UDP port ${endpoint.spec.listenPort} is already served on this gateway by the tunnel to ${holder.spec.remoteClusterName}; give each tunnel this cluster serves a port of its own`,
    );
  }
}

/** Destinations of the namespace's own routes (its bridges, links, host networks): no remote may be seen under them. */
async function localRoutes(netns: string, exceptPrefix: string): Promise<Cidr[]> {
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

/** The gateway of one cluster. Call {@link TunnelGateway.pass} periodically. */
export class TunnelGateway {
  private readonly applied = new Map<string, Applied>();

  constructor(private readonly options: GatewayOptions) {
    mkdirSync(options.workDir, { recursive: true, mode: 0o700 });
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
    for (const endpoint of endpoints) {
      const label = `TunnelEndpoint ${endpoint.metadata.namespace}/${endpoint.metadata.name}`;
      try {
        if (endpoint.metadata.deletionTimestamp) {
          // Without the finalizer the gateway never set anything up for it (or already took it down).
          if (endpoint.metadata.finalizers?.includes(GATEWAY_FINALIZER)) await this.takeDown(endpoint, identity);
          continue;
        }
        const verdict: ClaimsVerdict = checkEndpointClaims(endpoint, origins.get(endpoint.metadata.namespace ?? "")!, identity.clusterId);
        const refusal = verdict.accepted ? await this.reconcile(endpoint, endpoints, identity, verdict, readRoutes) : verdict;
        if (refusal) {
          const uid = endpoint.metadata.uid!;
          refused.add(uid);
          await answerRefusal(kc, endpoint, refusal, this.options.reporter, STEP);
          // What runs stays; but once a spec is accepted again, its status must be written and probed afresh.
          const applied = this.applied.get(uid);
          if (applied) this.applied.set(uid, { ...applied, status: "", observedAt: 0, connected: false });
        }
      } catch (error) {
        const message = (error as Error).message;
        this.options.reporter.warn(`${STEP}: ${label}: ${message}`);
        if (!endpoint.metadata.deletionTimestamp) {
          await writeTunnelEndpointStatus(kc, endpoint, { ...endpoint.status, phase: "Error", message, observedGeneration: endpoint.metadata.generation! }, STEP).catch(() => undefined);
          // Applied again next pass; what runs stays known, so it can still be taken down.
          const applied = this.applied.get(endpoint.metadata.uid!);
          if (applied) this.applied.set(endpoint.metadata.uid!, { ...applied, inputs: "" });
        }
      }
    }
    await this.removeOrphans(endpoints);
    return endpoints.filter((e) => !e.metadata.deletionTimestamp && !refused.has(e.metadata.uid!) && !this.applied.get(e.metadata.uid!)?.connected).length;
  }

  /**
   * Brings the namespace to an endpoint whose claims were accepted. Resolves a refusal, having
   * changed nothing, when the remote's ranges cannot be placed; the finalizer is set only once
   * everything is checked, right before anything is set up.
   */
  private async reconcile(endpoint: TunnelEndpoint, all: readonly TunnelEndpoint[], identity: ClusterIdentity, claims: AcceptedClaims, routes: () => Promise<readonly Cidr[]>): Promise<RefusedClaims | undefined> {
    const { kc, netns, workDir } = this.options;
    const { spec } = endpoint;
    const uid = endpoint.metadata.uid!;
    if (!identity.podCidr) throw new Error(`${STEP}: the cluster's pod CIDR is not recorded (reinstall the Cluster resource)`);
    const ifname = interfaceOf(endpoint, identity.clusterId);
    const slot = endpoint.status?.slot ?? freeSlot(all, endpoint);
    const link = claims.link;
    const remoteRole = spec.role === "server" ? "client" : "server";
    const remoteTunnelAddress = tunnelAddress(link, remoteRole).split("/")[0]!;
    const others = all.filter((e) => e.metadata.uid !== uid).flatMap((e) => [e.status?.remotePodCidrAsSeen, e.status?.remoteExternalCidrAsSeen]).filter((c): c is string => !!c);
    const inputs = JSON.stringify({ spec, slot, others, cidrs: [identity.podCidr, identity.externalCidr, identity.serviceCidr] });

    let applied = this.applied.get(uid);
    const stale = !applied || applied.inputs !== inputs || !isRunning(applied.process);
    let view = applied?.view;
    if (stale) {
      if (spec.role === "server") checkServerPort(endpoint, all);
      // How this cluster sees the remote: remapped where it overlaps anything local.
      const decided = decideRemoteView(claims, {
        podCidr: Cidr.parse(identity.podCidr),
        ...(identity.externalCidr ? { externalCidr: Cidr.parse(identity.externalCidr) } : {}),
        taken: [...(identity.serviceCidr ? [Cidr.parse(identity.serviceCidr)] : []), ...others.map((c) => Cidr.parse(c)), ...(await routes())],
      });
      if (!decided.accepted) return decided;
      view = decided.view;
    }
    if (!endpoint.metadata.finalizers?.includes(GATEWAY_FINALIZER)) {
      await setTunnelEndpointFinalizers(kc, endpoint, [...(endpoint.metadata.finalizers ?? []), GATEWAY_FINALIZER], STEP);
    }
    if (!applied || stale) {
      const keys = await this.ensureKeyPair(ifname, spec.remoteClusterId);
      const running = await ensureWireguardInterface({
        netns,
        ifname,
        privateKey: keys.privateKey,
        // Only the server must be found at a known port; a client dials from any free one, so
        // one gateway may dial many peers.
        listenPort: spec.role === "server" ? spec.listenPort : 0,
        address: tunnelAddress(link, spec.role),
        mtu: spec.mtu,
        logFile: join(workDir, `${ifname}.log`),
        keyDir: workDir,
        ...(this.options.wireguardGo ? { wireguardGo: this.options.wireguardGo } : {}),
      });
      if (running.started) this.options.reporter.info(`${STEP}: interface ${ifname} up for ${spec.remoteClusterName} (wireguard-go pid ${running.process.pid})`);
      if (spec.remote.publicKey) {
        const formerPeers = (await readWireguardStatus(netns, ifname)).peers.filter((p) => p.publicKey !== spec.remote.publicKey);
        for (const peer of formerPeers) await runIn(netns, "wg", ["set", ifname, "peer", peer.publicKey, "remove"]);
        await configureWireguardPeer({
          netns,
          ifname,
          peerPublicKey: spec.remote.publicKey,
          ...(spec.remote.endpoint ? { endpoint: spec.remote.endpoint } : {}),
          allowedIps: [link.toString(), ...(view ? view.ranges.map((r) => r.real.toString()) : [])],
          ...(spec.keepaliveSeconds > 0 ? { keepaliveSeconds: spec.keepaliveSeconds } : {}),
        });
      }
      if (view) await applyPeerFabric(netns, { peerId: ifname, tunnelInterface: ifname, view, slot });
      applied = { inputs, ifname, remoteClusterName: spec.remoteClusterName, process: running.process, publicKey: keys.publicKey, slot, view, status: "", statusWrittenAt: 0, observedAt: 0, connected: false };
      this.applied.set(uid, applied);
    }

    if (applied.connected && Date.now() - applied.observedAt < CONNECTED_PROBE_MS) return undefined;
    const status = await this.observe(endpoint, ifname, applied, identity, remoteTunnelAddress);
    const comparable = JSON.stringify({ ...status, latestHandshake: undefined, rttMs: undefined });
    const observed = { ...applied, observedAt: Date.now(), connected: status.phase === "Connected" };
    this.applied.set(uid, observed);
    if (comparable !== applied.status || Date.now() - applied.statusWrittenAt > STATUS_REFRESH_MS) {
      await writeTunnelEndpointStatus(kc, endpoint, status, STEP);
      this.applied.set(uid, { ...observed, status: comparable, statusWrittenAt: Date.now() });
      if (status.phase !== endpoint.status?.phase) this.options.reporter.info(`${STEP}: tunnel to ${spec.remoteClusterName} (${ifname}): ${status.phase}${status.message ? `: ${status.message}` : ""}`);
    }
    return undefined;
  }

  /** The status to report: keys and views, plus the handshake and a probe when the peer is configured. */
  private async observe(endpoint: TunnelEndpoint, ifname: string, applied: Applied, identity: ClusterIdentity, remoteTunnelAddress: string): Promise<TunnelEndpointStatus> {
    const { spec } = endpoint;
    const { publicKey, slot, view } = applied;
    const base: TunnelEndpointStatus = {
      observedGeneration: endpoint.metadata.generation!,
      publicKey,
      podCidr: identity.podCidr!,
      ...(identity.externalCidr ? { externalCidr: identity.externalCidr } : {}),
      interfaceName: ifname,
      slot,
      ...(view ? { remotePodCidrAsSeen: view.remotePodCidrAsSeen.toString() } : {}),
      ...(view?.remoteExternalCidrAsSeen ? { remoteExternalCidrAsSeen: view.remoteExternalCidrAsSeen.toString() } : {}),
    };
    if (!spec.remote.publicKey || !view) return { ...base, phase: "Pending", message: `waiting for ${spec.remoteClusterName}'s public key and pod CIDR` };
    const peer = (await readWireguardStatus(this.options.netns, ifname)).peers.find((p) => p.publicKey === spec.remote.publicKey);
    const rttMs = await probeAcross(this.options.netns, ifname, remoteTunnelAddress);
    const handshake = peer?.latestHandshake ? { latestHandshake: peer.latestHandshake.toISOString() } : {};
    if (rttMs === undefined) {
      const where = spec.role === "client" ? `dialing ${spec.remote.endpoint ?? "(no endpoint)"}` : `listening on UDP ${spec.listenPort}`;
      return { ...base, ...handshake, phase: "Pending", message: `no answer from ${spec.remoteClusterName}'s tunnel address ${remoteTunnelAddress} yet (${where}; ${peer?.latestHandshake ? "handshake done" : "no handshake yet"})` };
    }
    return { ...base, ...handshake, phase: "Connected", rttMs: Math.round(rttMs * 1000) / 1000 };
  }

  /** The endpoint's key pair from its Secret, made and stored on first use. */
  private async ensureKeyPair(ifname: string, remoteClusterId: string): Promise<WireguardKeyPair> {
    const { kc } = this.options;
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const name = keySecretName(ifname);
    const endpoint = serverOf(kc);
    const secret = await readOptional(() => core.readNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE })).catch(describeFailure(`${STEP}: reading Secret ${SYSTEM_NAMESPACE}/${name}`, endpoint));
    const stored = Buffer.from(secret?.data?.["privateKey"] ?? "", "base64").toString("utf8");
    if (stored) return { privateKey: stored, publicKey: wireguardPublicKeyOf(stored) };
    const fresh = forgeWireguardKeyPair();
    await ensureObject(kc, {
      apiVersion: "v1",
      kind: "Secret",
      type: "Opaque",
      metadata: { name, namespace: SYSTEM_NAMESPACE, labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: remoteClusterId } },
      data: { privateKey: Buffer.from(fresh.privateKey, "utf8").toString("base64") },
    } as k8s.V1Secret).catch(describeFailure(`${STEP}: applying Secret ${SYSTEM_NAMESPACE}/${name}`, endpoint));
    return fresh;
  }

  /** Removes everything of an endpoint being deleted, then lets it go. */
  private async takeDown(endpoint: TunnelEndpoint, identity: ClusterIdentity): Promise<void> {
    const { kc } = this.options;
    const ifname = interfaceOf(endpoint, identity.clusterId);
    const removed = await this.removeTunnel(ifname, endpoint.status?.slot, this.applied.get(endpoint.metadata.uid!)?.process);
    this.applied.delete(endpoint.metadata.uid!);
    if (endpoint.metadata.finalizers?.includes(GATEWAY_FINALIZER)) {
      await setTunnelEndpointFinalizers(kc, endpoint, endpoint.metadata.finalizers.filter((f) => f !== GATEWAY_FINALIZER), STEP);
    }
    this.options.reporter.info(`${STEP}: tunnel to ${endpoint.spec.remoteClusterName} removed (${removed.join(", ") || "nothing left"})`);
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
      const removed = await this.removeTunnel(applied.ifname, applied.slot, applied.process);
      this.applied.delete(uid);
      this.options.reporter.warn(`${STEP}: tunnel to ${applied.remoteClusterName} removed, its TunnelEndpoint having gone without the gateway (${removed.join(", ") || "nothing left"})`);
    }
  }

  /** Removes one tunnel's fabric, interface and key Secret; resolves what was removed. */
  private async removeTunnel(ifname: string, slot: number | undefined, process: ProcessRecord | undefined): Promise<string[]> {
    const { kc, netns } = this.options;
    await removePeerFabric(netns, ifname, slot);
    const removed = await deleteWireguardInterface({ netns, ifname, ...(process ? { process } : {}) });
    const name = keySecretName(ifname);
    await deleteOptional(() => kc.makeApiClient(k8s.CoreV1Api).deleteNamespacedSecret({ name, namespace: SYSTEM_NAMESPACE })).catch(
      describeFailure(`${STEP}: deleting Secret ${SYSTEM_NAMESPACE}/${name}`, serverOf(kc)),
    );
    return [...removed, `Secret ${name}`];
  }
}
