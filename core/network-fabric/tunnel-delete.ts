/**
 * A tunnel's delete: both gateways take their side down, or, with the provider out of reach (one
 * short probe, or no identity left to reach it with) and `force`, the consumer's alone, listing
 * what stays on the provider.
 */
import type * as k8s from "@kubernetes/client-node";
import { SYSTEM_NAMESPACE } from "../api/index.js";
import { probeApiServer, serverOf } from "../kube/client.js";
import type { Progress } from "../operation/progress.js";
import { describeUnreachable, providerUnreachableError, type UnreachableProvider } from "../operation/unreachable.js";
import { startDeadline, type Deadline } from "../wait/deadline.js";
import { poll } from "../wait/poll.js";
import { deleteTunnelEndpoint, gatewayKeySecretName, getTunnelEndpoint } from "./endpoints.js";
import { describeSide, endpointRefOf, STEP, type TunnelParties, type TunnelSides } from "./tunnel.js";
import { endpointReadiness, type PeeringSide } from "./tunnel-plan.js";

/** How delete treats a provider that cannot be reached. */
export interface TunnelDeleteOptions {
  /** Remove the consumer's side even when the provider cannot be reached, and list what stays there. */
  readonly force: boolean;
  readonly timeoutMs: number;
  /** The provider gateway's interface as last reported, to name what stays; unknown if the tunnel never came up. */
  readonly providerInterface?: string;
}

/**
 * What a tunnel leaves on a provider that could not be reached: its endpoint, and what the
 * provider's gateway set up for it. Deleting the endpoint there (or the consumer's tenant
 * namespace, which holds it) makes that gateway take the rest down.
 */
export function tunnelLeftOnProvider(sides: TunnelParties, providerInterface: string | undefined): string[] {
  const ref = endpointRefOf(sides, "provider");
  const gateway = `the gateway of ${describeSide(sides, "provider")}`;
  const ifname = providerInterface || undefined;
  return [
    `TunnelEndpoint ${ref.namespace}/${ref.name}`,
    ifname
      ? `WireGuard interface ${ifname} with its routes and NAT rules, in ${gateway}`
      : `the WireGuard interface (never reported) with its routes and NAT rules, in ${gateway}`,
    `the wireguard-go process serving ${ifname ?? "it"}`,
    `key Secret ${SYSTEM_NAMESPACE}/${ifname ? gatewayKeySecretName(ifname) : "wireguard-<interface>"}`,
  ];
}

/** Deletes `side`'s endpoint and waits until its gateway has taken down what it set up (its finalizer guarantees it). */
async function removeSide(
  sides: TunnelParties,
  side: PeeringSide,
  kc: k8s.KubeConfig,
  deadline: Deadline,
): Promise<void> {
  const ref = endpointRefOf(sides, side);
  await deleteTunnelEndpoint(kc, ref, STEP);
  await poll(
    {
      step: STEP,
      object: `TunnelEndpoint ${ref.namespace}/${ref.name} taken down by the gateway of ${describeSide(sides, side)}`,
      endpoint: serverOf(kc),
    },
    { timeoutMs: deadline.left(), intervalMs: 500, signal: deadline.signal },
    async () => {
      const endpoint = await getTunnelEndpoint(kc, ref, STEP);
      return endpoint
        ? {
            done: false,
            state: `still there (finalizers: ${endpoint.metadata.finalizers?.join(", ") || "none"}; ${endpointReadiness(endpoint).state})`,
          }
        : { done: true, value: undefined };
    },
  );
}

/**
 * Deletes both endpoints and waits until both gateways have taken down what they set up
 * (interface, routes, rules, key). One short probe of the provider's API server comes first: a
 * provider out of reach fails the delete at once, changing nothing, unless `force`; then only the
 * consumer's side is removed. Resolves what stays on the provider (nothing when both sides went).
 */
export async function deleteTunnel(
  sides: TunnelSides,
  options: TunnelDeleteOptions,
  progress: Progress,
): Promise<string[]> {
  const deadline = startDeadline(options.timeoutMs);
  const cause = await probeApiServer(sides.provider.kc);
  if (!cause) {
    progress.step(1, 1, `${STEP}: removing the tunnel on both gateways`);
    await Promise.all(
      (["provider", "consumer"] as const).map((side) => removeSide(sides, side, sides[side].kc, deadline)),
    );
    return [];
  }
  const unreachable = {
    step: STEP,
    providerName: sides.provider.party.clusterName,
    endpoint: `API server ${serverOf(sides.provider.kc)}`,
    cause,
  };
  return removeConsumerSideOnly(sides, sides.consumer.kc, unreachable, options, progress);
}

/**
 * Deletes a tunnel whose consumer no longer holds an identity for the provider (its peering was
 * deleted or unpeered first): the provider's side cannot be reached at all, so this is the
 * unreachable case of {@link deleteTunnel}: it fails changing nothing, or with `force` removes the
 * consumer's side and lists what may stay on the provider.
 */
export async function deleteTunnelWithoutIdentity(
  sides: TunnelParties,
  consumerKc: k8s.KubeConfig,
  options: TunnelDeleteOptions,
  progress: Progress,
): Promise<string[]> {
  const unreachable = {
    step: STEP,
    providerName: sides.provider.party.clusterName,
    endpoint: "through the peering's identity",
    cause: `consumer ${sides.consumer.party.clusterName} holds no identity for it any more (its Peering was deleted or unpeered)`,
  };
  return removeConsumerSideOnly(sides, consumerKc, unreachable, options, progress);
}

/** The unreachable provider's case: fails without `force`; with it, removes the consumer's side alone and lists what stays. */
async function removeConsumerSideOnly(
  sides: TunnelParties,
  consumerKc: k8s.KubeConfig,
  unreachable: UnreachableProvider,
  options: TunnelDeleteOptions,
  progress: Progress,
): Promise<string[]> {
  if (!options.force) throw providerUnreachableError(unreachable, "Tunnel");
  progress.step(
    1,
    1,
    `${STEP}: ${describeUnreachable(unreachable)}; removing the tunnel on the gateway of ${describeSide(sides, "consumer")} only (force)`,
  );
  await removeSide(sides, "consumer", consumerKc, startDeadline(options.timeoutMs));
  return tunnelLeftOnProvider(sides, options.providerInterface);
}
