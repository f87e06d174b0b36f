/**
 * A tunnel between the two clusters of a peering, as the steps read. Each side's gateway is told
 * what to do through a `TunnelEndpoint` and answers in its status; only public keys and CIDRs
 * travel, through the API servers: the provider's endpoint is written with the identity the
 * peering issued (out-of-band, in the consumer's tenant namespace) or with the provider's own
 * kubeconfig (in-band, in its system namespace).
 *
 *   1. consumer endpoint   the consumer's gateway makes its key pair and announces its pod CIDR
 *   2. provider endpoint   the provider's gateway learns the consumer's key and CIDR, remaps it if
 *                          it overlaps, and announces its own
 *   3. consumer endpoint   the consumer's gateway learns the provider's, remaps, and dials (or waits)
 *   4. connected           both gateways report a handshake and a probe across the tunnel
 *
 * Every step is idempotent; running it again with changed settings (port, endpoint, MTU)
 * re-converges both gateways in place. Delete is in ./tunnel-delete.ts.
 */
import type * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE, type InBandPorts, type TunnelEndpoint, type TunnelRemote } from "../api/index.js";
import { serverOf } from "../kube/client.js";
import type { Progress } from "../operation/progress.js";
import { describeRevokedIdentity } from "../authentication/revoked.js";
import { startDeadline, type Deadline } from "../wait/deadline.js";
import { poll } from "../wait/poll.js";
import { applyTunnelEndpoint, getTunnelEndpoint, type EndpointRef } from "./endpoints.js";
import type { TunnelEnd } from "./tunnel-end.js";
import {
  dialedEndpoint,
  endpointReadiness,
  forgeTunnelEndpointSpec,
  otherSide,
  tunnelEndpointName,
  type PeeringSide,
  type TunnelParty,
  type TunnelSettings,
} from "./tunnel-plan.js";

/** The step every tunnel operation reports under. */
export const STEP = "network fabric";

/** One side as the steps reach it. */
export interface TunnelSideAccess {
  /** Client for the side's API server: the admin's on the consumer; the identity or admin on the provider. */
  readonly kc: k8s.KubeConfig;
  /** Namespace of the side's `TunnelEndpoint`. */
  readonly namespace: string;
  readonly party: TunnelParty;
  /** The ports this side's gateway serves its control plane at inside the tunnel (in-band peering's provider). */
  readonly inBandPorts?: InBandPorts;
}

/** Both sides of a tunnel. */
export type TunnelSides = Readonly<Record<PeeringSide, TunnelSideAccess>>;

/** Both sides as named (party and namespace), whether or not a side can be reached. */
export type TunnelParties = Readonly<Record<PeeringSide, Omit<TunnelSideAccess, "kc">>>;

/** A tunnel as both gateways report it. */
export type TunnelRecord = Readonly<Record<PeeringSide, TunnelEnd>>;

/** Where a side's `TunnelEndpoint` is. */
export function endpointRefOf(sides: TunnelParties, side: PeeringSide): EndpointRef {
  return { namespace: sides[side].namespace, name: tunnelEndpointName(sides[otherSide(side)].party.clusterId) };
}

/** The namespace of the provider's endpoint: the tenant namespace out-of-band, the system namespace in-band. */
export function providerEndpointNamespace(approach: "out-of-band" | "in-band", tenantNamespace: string): string {
  return approach === "in-band" ? SYSTEM_NAMESPACE : tenantNamespace;
}

/** `consumer b`: a side as messages name it. */
export const describeSide = (sides: TunnelParties, side: PeeringSide): string =>
  `${side} ${sides[side].party.clusterName}`;

/**
 * What a side's gateway last announced, for the other side's spec (possibly of an older
 * generation). Its endpoint is dialed only once dialedEndpoint has read it.
 */
function announced(endpoint: TunnelEndpoint | undefined): TunnelRemote {
  const status = endpoint?.status;
  return {
    ...(status?.endpoint !== undefined ? { endpoint: status.endpoint } : {}),
    ...(status?.publicKey ? { publicKey: status.publicKey } : {}),
    ...(status?.podCidr ? { podCidr: status.podCidr } : {}),
    ...(status?.externalCidr ? { externalCidr: status.externalCidr } : {}),
  };
}

/** Waits until `side`'s gateway has answered its current spec (and, with `connected`, reports the tunnel up). */
function waitForGateway(
  sides: TunnelSides,
  side: PeeringSide,
  connected: boolean,
  deadline: Deadline,
): Promise<TunnelEndpoint> {
  const ref = endpointRefOf(sides, side);
  const { kc } = sides[side];
  return poll(
    {
      step: STEP,
      object: `${connected ? "tunnel up at" : "gateway answer in"} TunnelEndpoint ${ref.namespace}/${ref.name} (${describeSide(sides, side)})`,
      endpoint: serverOf(kc),
    },
    { timeoutMs: deadline.left(), intervalMs: 500, signal: deadline.signal },
    async () => {
      const endpoint = await getTunnelEndpoint(kc, ref, STEP);
      const readiness = endpointReadiness(endpoint);
      if (readiness.refused) return { failed: true, reason: `the gateway refused the spec: ${readiness.refused}` };
      return (connected ? readiness.connected : readiness.answered)
        ? { done: true, value: endpoint! }
        : { done: false, state: readiness.state };
    },
  );
}

async function applySide(
  sides: TunnelSides,
  side: PeeringSide,
  settings: TunnelSettings,
  remote: TunnelRemote,
): Promise<void> {
  const parties = { consumer: sides.consumer.party, provider: sides.provider.party };
  await applyTunnelEndpoint(
    sides[side].kc,
    endpointRefOf(sides, side),
    forgeTunnelEndpointSpec(side, parties, settings, remote, sides[side].inBandPorts),
    STEP,
  );
}

/**
 * Where the client dials the server, once the server's gateway has answered: the address given, or
 * the endpoint the server announced. Fails, naming the server and what to set, when there is none
 * or the one announced is refused (it comes from the other cluster, and is dialed from this one).
 */
function dialedFrom(sides: TunnelSides, settings: TunnelSettings, server: TunnelEndpoint): string {
  const dial = dialedEndpoint(settings, server.status?.endpoint);
  if ("endpoint" in dial) return dial.endpoint;
  const ref = endpointRefOf(sides, settings.server);
  throw new Error(
    `${STEP}: the Tunnel's serverAddress is not set, and the ${describeSide(sides, settings.server)} cannot be dialed where ` +
      `it says: ${dial.missing} (TunnelEndpoint ${ref.namespace}/${ref.name} at ${serverOf(sides[settings.server].kc)}). ` +
      `Its cluster's install records where its gateway is reached (the Cluster's gatewayEndpoint, read back from its ` +
      `load balancer); a cluster installed by an earlier release records none until its Cluster is updated. Set serverAddress to dial an address of your own`,
  );
}

/** `side`'s gateway as its status shows it; the server's endpoint is where the client dials it (`dialed`). */
function viewOf(
  endpoint: TunnelEndpoint,
  settings: TunnelSettings,
  side: PeeringSide,
  dialed: string | undefined,
): TunnelEnd {
  const status = endpoint.status!;
  return {
    publicKey: status.publicKey!,
    ...(settings.server === side && dialed ? { endpoint: dialed } : {}),
    podCidr: status.podCidr!,
    remotePodCidrAsSeen: status.remotePodCidrAsSeen ?? "",
    ...(status.externalCidr ? { externalCidr: status.externalCidr } : {}),
    ...(status.remoteExternalCidrAsSeen ? { remoteExternalCidrAsSeen: status.remoteExternalCidrAsSeen } : {}),
    interfaceName: status.interfaceName ?? "",
    ...(status.latestHandshake ? { latestHandshake: status.latestHandshake } : {}),
    ...(status.rttMs !== undefined ? { rttMs: status.rttMs } : {}),
  };
}

/** Creates the tunnel, or brings an existing one to `settings`; resolves when traffic crosses it both ways. */
export async function ensureTunnel(
  sides: TunnelSides,
  settings: TunnelSettings,
  timeoutMs: number,
  progress: Progress,
): Promise<TunnelRecord> {
  const deadline = startDeadline(timeoutMs);
  const existing = {
    consumer: await getTunnelEndpoint(sides.consumer.kc, endpointRefOf(sides, "consumer"), STEP),
    provider: await getTunnelEndpoint(sides.provider.kc, endpointRefOf(sides, "provider"), STEP),
  };
  // A server that already announces an endpoint the client must not dial stops the converge before
  // anything is written: the client keeps dialing where it did.
  if (settings.serverAddress === undefined && existing[settings.server]?.status?.endpoint !== undefined)
    dialedFrom(sides, settings, existing[settings.server]!);

  progress.step(1, 4, `${STEP}: asking the gateway of ${describeSide(sides, "consumer")} for its key and pod CIDR`);
  await applySide(sides, "consumer", settings, announced(existing.provider));
  const consumer = await waitForGateway(sides, "consumer", false, deadline);
  // A consumer that serves has announced where it is reached by now; the provider dials there.
  const dialedConsumer = settings.server === "consumer" ? dialedFrom(sides, settings, consumer) : undefined;

  progress.step(
    2,
    4,
    `${STEP}: telling the gateway of ${describeSide(sides, "provider")} at ${serverOf(sides.provider.kc)}`,
  );
  await applySide(sides, "provider", settings, announced(consumer));
  const provider = await waitForGateway(sides, "provider", false, deadline);
  const dialed = dialedConsumer ?? dialedFrom(sides, settings, provider);

  progress.step(
    3,
    4,
    `${STEP}: telling the gateway of ${describeSide(sides, "consumer")} the provider's key and pod CIDR`,
  );
  await applySide(sides, "consumer", settings, announced(provider));

  progress.step(
    4,
    4,
    `${STEP}: waiting for the handshake and a probe across the tunnel (${settings.server} serves at ${dialed})`,
  );
  const [consumerUp, providerUp] = await Promise.all([
    waitForGateway(sides, "consumer", true, deadline),
    waitForGateway(sides, "provider", true, deadline),
  ]);
  return {
    consumer: viewOf(consumerUp, settings, "consumer", dialed),
    provider: viewOf(providerUp, settings, "provider", dialed),
  };
}

/** What `readTunnel` finds. */
export interface TunnelDrift {
  /** Problems found; empty when both gateways report the tunnel up. */
  readonly problems: string[];
  /** Both endpoints are gone: the tunnel no longer exists. */
  readonly gone: boolean;
  /** The gateways' current reports, when both answered. */
  readonly record?: TunnelRecord;
}

/**
 * How long a gateway's `Connected` may go without a handshake before it counts as stale: a gateway
 * probes a connected tunnel every 30 s, so WireGuard renews its session every 2 minutes and drops
 * one older than 3 (REJECT_AFTER_TIME); a report beyond this is from a gateway no longer looking.
 */
export const HANDSHAKE_STALE_MS = 5 * 60_000;

/** What is wrong with `side`'s report, judged against the other side's endpoint too, or undefined when it is real. */
function sideProblem(
  sides: TunnelParties,
  endpoints: Readonly<Record<PeeringSide, TunnelEndpoint | undefined>>,
  side: PeeringSide,
  nowMs: number,
): string | undefined {
  const endpoint = endpoints[side];
  const other = endpoints[otherSide(side)];
  const ref = endpointRefOf(sides, side);
  if (!endpoint) return `its TunnelEndpoint ${ref.namespace}/${ref.name} is gone (that side of the tunnel was removed)`;
  if (endpoint.metadata.deletionTimestamp)
    return `its TunnelEndpoint ${ref.namespace}/${ref.name} is being deleted (waiting for its gateway's finalizer)`;
  const readiness = endpointReadiness(endpoint);
  if (!readiness.connected) return readiness.state;
  // Connected as its gateway last wrote: true only if the other side still exists, has the key this
  // side dials, and the handshake (when the gateway read one) is recent.
  if (!other) return `reports Connected, but the other side's TunnelEndpoint is gone: the report is stale`;
  const otherKey = other.status?.publicKey;
  if (otherKey && endpoint.spec.remote.publicKey !== otherKey)
    return `reports Connected to a key the other side's gateway no longer has (it announced a new one): the report is stale`;
  // A gateway that read no handshake time still proved the tunnel by its probe: only a time read can be old.
  const handshake = Date.parse(endpoint.status?.latestHandshake ?? "");
  if (Number.isFinite(handshake) && nowMs - handshake > HANDSHAKE_STALE_MS)
    return `reports Connected, but its last handshake was ${Math.round((nowMs - handshake) / 1000)} s ago: the report is stale (is its gateway running?)`;
  return undefined;
}

/**
 * The problems of a tunnel, one per side that is not really up: an endpoint gone or being
 * deleted, a gateway that has not answered or refused, and a `Connected` that is no longer true
 * (the other side gone, a key it no longer has, a handshake minutes old). Empty when both sides
 * are up. Pure: `nowMs` is the reading's time.
 */
export function tunnelProblems(
  sides: TunnelParties,
  endpoints: Readonly<Record<PeeringSide, TunnelEndpoint | undefined>>,
  nowMs: number,
): string[] {
  return (["consumer", "provider"] as const).flatMap((side) => {
    const problem = sideProblem(sides, endpoints, side, nowMs);
    return problem ? [`${describeSide(sides, side)}: ${problem}`] : [];
  });
}

/**
 * Reads both gateways' reports. A provider that refuses the identity its endpoint is read with
 * (revoked there) is reported as the first problem, not thrown: the peering's next `pulumi up`
 * authenticates again, and the tunnel's then converges.
 */
export async function readTunnel(sides: TunnelSides, settings: TunnelSettings): Promise<TunnelDrift> {
  const consumer = await getTunnelEndpoint(sides.consumer.kc, endpointRefOf(sides, "consumer"), STEP);
  const ref = endpointRefOf(sides, "provider");
  const providerRead = await getTunnelEndpoint(sides.provider.kc, ref, STEP).then(
    (provider) => ({ provider, revoked: undefined }),
    (error: unknown) => {
      const call = `reading TunnelEndpoint ${ref.namespace}/${ref.name}`;
      const revoked = describeRevokedIdentity(error, {
        providerName: sides.provider.party.clusterName,
        endpoint: serverOf(sides.provider.kc),
        call,
      });
      if (!revoked) throw error;
      return { provider: undefined, revoked };
    },
  );
  if (providerRead.revoked) return { problems: [providerRead.revoked], gone: false };
  return driftOf(sides, { consumer, provider: providerRead.provider }, settings);
}

/** The tunnel as both sides' `TunnelEndpoint`s, read at this moment, show it under `settings`. */
export function driftOf(
  sides: TunnelParties,
  endpoints: Readonly<Record<PeeringSide, TunnelEndpoint | undefined>>,
  settings: TunnelSettings,
): TunnelDrift {
  if (!endpoints.consumer && !endpoints.provider) return { problems: ["both TunnelEndpoints are gone"], gone: true };
  const problems = tunnelProblems(sides, endpoints, Date.now());
  const both = endpoints.consumer?.status?.publicKey && endpoints.provider?.status?.publicKey;
  const dialed = endpoints[otherSide(settings.server)]?.spec.remote.endpoint;
  return {
    problems,
    gone: false,
    ...(both
      ? {
          record: {
            consumer: viewOf(endpoints.consumer!, settings, "consumer", dialed),
            provider: viewOf(endpoints.provider!, settings, "provider", dialed),
          },
        }
      : {}),
  };
}

/**
 * Reads a tunnel whose consumer no longer holds an identity for the provider (its peering was
 * deleted or unpeered): the provider's side cannot be read, and without an identity the tunnel
 * cannot be kept up, so whatever the consumer's gateway last wrote, this is never `Connected`.
 */
export async function readTunnelWithoutIdentity(
  sides: TunnelParties,
  consumerKc: k8s.KubeConfig,
): Promise<TunnelDrift> {
  const ref = endpointRefOf(sides, "consumer");
  const endpoint = await getTunnelEndpoint(consumerKc, ref, STEP);
  const consumerState = endpoint
    ? `its TunnelEndpoint ${ref.namespace}/${ref.name} remains (${endpointReadiness(endpoint).state})`
    : `its TunnelEndpoint ${ref.namespace}/${ref.name} is gone`;
  return {
    problems: [
      `${describeSide(sides, "provider")}: cannot be read: ${describeSide(sides, "consumer")} holds no identity for it any ` +
        `more (its Peering was deleted or unpeered)`,
      `${describeSide(sides, "consumer")}: ${consumerState}`,
    ],
    gone: false,
  };
}
