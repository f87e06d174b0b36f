/**
 * The `Tunnel` resource's dynamic provider (out-of-band peerings; an in-band peering builds its
 * tunnel itself): translates inputs into the tunnel steps of
 * ../network-fabric/tunnel.ts and the gateways' reports into outputs. Settings (port, server
 * address, MTU, keepalive) change in place; another pair of clusters is another tunnel.
 * No key is ever an input or an output but the gateways' public keys.
 */
import { TUNNEL } from "../../declarations/tunnel.js";
import type * as pulumi from "@pulumi/pulumi";
import type { TunnelEnd } from "../network-fabric/tunnel-end.js";
import type { TunnelSettingsInput } from "../network-fabric/tunnel-plan.js";
import { forcedDeleteReport } from "../operation/unreachable.js";
import { changesOf, labelOf, urnOf, type FoundChanges, declaredRules, isDrift, recordsOnly } from "./diff-rules.js";
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

/**
 * What each input's change does to a tunnel, and why: another pair of clusters is another tunnel;
 * everything else converges in place (update is create again, every step idempotent), the
 * gateways keeping their keys.
 */
export const TUNNEL_DIFF = declaredRules<TunnelOutputs, TunnelInputs>(TUNNEL, {
  status: isDrift("Connected"),
});

/** What changed between a tunnel's state and its new inputs. */
export function tunnelChanges(olds: TunnelOutputs, news: TunnelInputs): FoundChanges<string> {
  // The peering's outputs are unknown in preview whenever the peering updates: not a change here.
  return changesOf(TUNNEL_DIFF, olds, news, { unknownIsUnchanged: true });
}

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
export const pulumiProvider: pulumi.dynamic.ResourceProvider<TunnelInputs, TunnelOutputs> = {
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
    if (recordsOnly(tunnelChanges(olds, news))) return { outs: { ...olds, ...news, ...reportsOf(olds) } };
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

/**
 * {@link pulumiProvider} under the name that stacks made before it was renamed serialized into their
 * state (`require(...).provider`): their refresh and destroy still find it.
 */
export const provider = pulumiProvider;
