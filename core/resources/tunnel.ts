/**
 * The `Tunnel` resource's dynamic provider (out-of-band peerings; an in-band peering builds its
 * tunnel itself): translates inputs into the tunnel steps of
 * ../network-fabric/tunnel.ts and the gateways' reports into outputs. Settings (port, server
 * address, MTU, keepalive) change in place; another pair of clusters is another tunnel.
 * No key is ever an input or an output but the gateways' public keys.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { TunnelEnd } from "../network-fabric/tunnel-end.js";
import type { TunnelSettingsInput } from "../network-fabric/tunnel-plan.js";
import { forcedDeleteReport } from "../peering/unreachable.js";
import {
  changesOf,
  driftRepair,
  inPlace,
  labelOf,
  replaces,
  urnOf,
  type DiffRules,
  type FoundChanges,
} from "./diff-rules.js";
import { onFirstNeed } from "./steps.js";
import { explainedDiff, logToEngine, showingSteps } from "./engine-log.js";
import { DEFAULT_TIMEOUT_SECONDS } from "../wait/deadline.js";
import { deleteFailure, readOrFail } from "./read-failure.js";
import { checkKubeconfig, checkSeconds, checkTunnelSettings, Failures } from "./inputs.js";
import { partialFailure } from "./partial.js";

/** The tunnel's steps, loaded on first need: they bring the Kubernetes client, which check and diff do without. */
const lifecycle = onFirstNeed((): typeof import("../network-fabric/tunnel-lifecycle.js") =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it with this module
  require("../network-fabric/tunnel-lifecycle.js"),
);

/** Inputs, as the SDK's `Tunnel` sends them: the peering's identifiers, and the tunnel settings as given. */
export interface TunnelInputs extends TunnelSettingsInput {
  /** The consumer's kubeconfig (from the peering). */
  readonly consumerKubeconfig: string;
  readonly consumerClusterId: string;
  readonly providerClusterId: string;
  readonly providerClusterName: string;
  /** The consumer's tenant namespace on the provider (from the peering). */
  readonly tenantNamespace: string;
  readonly timeoutSeconds?: number;
  /** On delete with the provider unreachable, remove the consumer's side anyway and list what stays on the provider. */
  readonly force?: boolean;
}

/** Outputs: the inputs and both gateways' reports. */
export interface TunnelOutputs extends TunnelInputs {
  /** The consumer's gateway: public key, CIDRs, interface, handshake and round trip when last created or updated. */
  readonly consumer?: TunnelEnd;
  /** The provider's gateway, likewise. */
  readonly provider?: TunnelEnd;
  /** `Connected`, or what the last refresh found wrong. */
  readonly status?: string;
}

const idOf = (inputs: TunnelInputs): string => `${inputs.consumerClusterId}-to-${inputs.providerClusterId}`;
const timeoutOf = (inputs: TunnelInputs): number => (inputs.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;

async function converge(inputs: TunnelInputs): Promise<TunnelOutputs> {
  try {
    const record = await showingSteps(inputs, (progress) =>
      lifecycle().convergeTunnel(inputs, inputs, timeoutOf(inputs), progress),
    );
    return { ...inputs, consumer: record.consumer, provider: record.provider, status: "Connected" };
  } catch (error) {
    // What the gateways set up stays recorded; the next `pulumi up` converges it, or destroy removes it.
    throw partialFailure(error, idOf(inputs), { ...inputs, status: "incomplete" });
  }
}

/** Why the clusters a tunnel joins cannot change under it. */
const ANOTHER_PAIR =
  "a tunnel joins one pair of clusters: each side's TunnelEndpoint is named after the other's cluster ID, and the tunnel's link addresses derive from both IDs";

/**
 * What each input's change does to a tunnel, and why: another pair of clusters is another tunnel;
 * everything else converges in place (update is create again, every step idempotent), the
 * gateways keeping their keys.
 */
export const TUNNEL_DIFF = {
  consumerClusterId: replaces(ANOTHER_PAIR),
  providerClusterId: replaces(ANOTHER_PAIR),
  server: inPlace(
    "the other gateway listens and this one dials; both TunnelEndpoints are rewritten and the gateways keep their keys",
  ),
  serverAddress: inPlace("the dialing gateway is told the new address; both gateways keep their keys"),
  port: inPlace(
    "the serving gateway listens on the new port and the other dials it there; both gateways keep their keys",
  ),
  mtu: inPlace("both tunnel interfaces take the new MTU; the gateways keep their keys"),
  keepaliveSeconds: inPlace("the dialing gateway's keepalive interval changes; the gateways keep their keys"),
  behindNat: inPlace(
    "it only decides which side may serve (checked at preview); the gateways' settings do not depend on it, so update checks the tunnel again as it is",
  ),
  timeoutSeconds: inPlace(
    "only the deadline of later operations; update checks the tunnel again (handshake and probe) as it is",
  ),
  consumerKubeconfig: inPlace(
    "only how pulumi reaches the consumer cluster, which its cluster ID identifies; update checks the tunnel again through it",
  ),
  tenantNamespace: inPlace("the provider's TunnelEndpoint is written in the peering's tenant namespace, which moved"),
  force: inPlace(
    "only what a later delete does when the provider cannot be reached; update records it and contacts neither cluster",
  ),
  status: driftRepair(
    "Connected",
    "the last create stopped half-way, or pulumi refresh found the tunnel broken: update converges both gateways again, which finishes or repairs it",
  ),
} as const satisfies DiffRules<TunnelOutputs, TunnelInputs>;

/** What changed between a tunnel's state and its new inputs. */
export function tunnelChanges(olds: TunnelOutputs, news: TunnelInputs): FoundChanges<keyof typeof TUNNEL_DIFF> {
  // The peering's outputs are unknown in preview whenever the peering updates: not a change here.
  return changesOf(TUNNEL_DIFF, olds, news, { unknownIsUnchanged: true });
}

/** Inputs that only change what a later delete does: an update that changes nothing else contacts no cluster. */
const RECORD_ONLY: readonly string[] = ["force"];

/** The gateways' reports and status as last recorded, kept by an update that converges nothing. */
const reportsOf = (olds: TunnelOutputs): Pick<TunnelOutputs, "consumer" | "provider" | "status"> => ({
  ...(olds.consumer ? { consumer: olds.consumer } : {}),
  ...(olds.provider ? { provider: olds.provider } : {}),
  ...(olds.status ? { status: olds.status } : {}),
});

/** How what a forced delete left on the provider goes. */
const LEFT_REMEDY =
  "When the provider is back, deleting that TunnelEndpoint there (or the consumer's tenant namespace, which holds it) makes its gateway take the rest down";

/** The `Tunnel` dynamic provider's operations. */
export const provider: pulumi.dynamic.ResourceProvider<TunnelInputs, TunnelOutputs> = {
  async check(_olds, news) {
    const failures = new Failures();
    checkKubeconfig(failures, "consumerKubeconfig", news.consumerKubeconfig);
    checkSeconds(failures, "timeoutSeconds", news.timeoutSeconds);
    checkTunnelSettings(failures, "", news);
    return { inputs: news, failures: failures.list };
  },
  async diff(id, olds, news) {
    return explainedDiff("Tunnel", TUNNEL_DIFF, id, news, tunnelChanges(olds, news), true);
  },
  async create(inputs) {
    return { id: idOf(inputs), outs: await converge(inputs) };
  },
  async update(_id, olds, news) {
    // Setting force is how a user gets out when the provider is gone: it must not need the provider.
    if (tunnelChanges(olds, news).changed.every((key) => RECORD_ONLY.includes(key)))
      return { outs: { ...olds, ...news, ...reportsOf(olds) } };
    return { outs: await converge(news) };
  },
  async read(id, props) {
    if (!props?.consumer) return { id, props: props! };
    const drift = await readOrFail("Tunnel", labelOf(props, id), () => lifecycle().readTunnelState(props, props));
    // Both gateways' endpoints gone (clusters rebuilt, or unpeered by hand): the tunnel is gone.
    if (drift.gone) return { id: "", props: {} as TunnelOutputs };
    // Handshake times and round trips move all the time: refresh reports the state, not the timings.
    return { id, props: { ...props, status: drift.problems.length ? drift.problems.join("; ") : "Connected" } };
  },
  async delete(id, props) {
    try {
      const options = {
        force: props.force ?? false,
        timeoutMs: timeoutOf(props),
        ...(props.provider?.interfaceName ? { providerInterface: props.provider.interfaceName } : {}),
      };
      const left = await showingSteps(props, (progress) => lifecycle().removeTunnel(props, options, progress));
      if (left.length > 0)
        await logToEngine(
          forcedDeleteReport("Tunnel", labelOf(props, id), props.providerClusterName, left, LEFT_REMEDY),
          urnOf(props),
        );
    } catch (error) {
      throw deleteFailure("Tunnel", labelOf(props, id), error);
    }
  },
};
