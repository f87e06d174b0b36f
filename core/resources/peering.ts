/**
 * The `Peering` resource's dynamic provider: translates inputs into the peering steps of
 * ../peering/peering.ts (out-of-band) or ../peering/in-band.ts (in-band) and their record into
 * outputs. A changed resource request is renegotiated in place; a rotated token changes nothing
 * (the identity is already issued); in-band, changed tunnel settings re-converge in place.
 */
import { PEERING } from "../../declarations/peering.js";
import type * as pulumi from "@pulumi/pulumi";
import type * as k8s from "@kubernetes/client-node";
import type { OfferedResources, ResourceAsk } from "../api/index.js";
import type { TunnelRecord } from "../network-fabric/tunnel.js";
import type { TunnelSettingsInput } from "../network-fabric/tunnel-plan.js";
import { emptyOfferReason } from "../negotiation/offer.js";
import type { PeerRequest, Peered } from "../peering/lifecycle.js";
import type { PeeringRecord } from "../peering/peering.js";
import {
  authPortOf,
  defaultVirtualNodeName,
  isInBand,
  isReady,
  peeringUpdateOf,
  readyStatus,
  recordOf,
  statusAfterRead,
} from "../peering/peering-plan.js";
import type { Progress } from "../operation/progress.js";
import type { ProviderHandover } from "../peering/handover.js";
import { DEFAULT_TIMEOUT_SECONDS } from "../wait/deadline.js";
import { forcedDeleteReport } from "../operation/unreachable.js";
import { ownUrnOf, takenFromOf } from "./hidden-inputs.js";
import { changesOf, inputChanged, labelOf, urnOf, type FoundChanges, declaredRules, isDrift } from "./diff-rules.js";
import { onFirstNeed } from "./steps.js";
import { explainedDiff, logToEngine, showingSteps } from "./engine-log.js";
import { deleteFailure, readOrFail } from "./read-failure.js";
import {
  checkKubeconfig,
  checkResourceAsk,
  checkSeconds,
  checkTunnelSettings,
  Failures,
  isUnknown,
  trimmedSecret,
} from "./inputs.js";
import { isIncomplete, partialFailure } from "./partial.js";

/** The peering's steps, loaded on first need: they bring the Kubernetes client, which check and diff do without. */
const lifecycle = onFirstNeed((): typeof import("../peering/lifecycle.js") =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it with this module
  require("../peering/lifecycle.js"),
);

/** Inputs, as the SDK's `Peering` sends them. */
export interface PeeringInputs {
  readonly consumerKubeconfig: string;
  readonly consumerClusterId: string;
  /** `out-of-band` (the default) or `in-band`. */
  readonly approach?: "out-of-band" | "in-band";
  /** Out-of-band: what the provider handed over. */
  readonly provider: ProviderHandover;
  /** In-band: the provider's kubeconfig. */
  readonly providerKubeconfig?: string;
  /** In-band: the provider's cluster id (a replacement when it changes). */
  readonly providerClusterId?: string;
  /** In-band: the provider's auth service URL (its port is used inside the tunnel). */
  readonly providerAuthUrl?: string;
  /** In-band: the tunnel. */
  readonly tunnel?: TunnelSettingsInput;
  readonly resources: ResourceAsk;
  readonly virtualNodeName?: string;
  readonly labels?: Record<string, string>;
  readonly taints?: k8s.V1Taint[];
  readonly timeoutSeconds?: number;
  readonly force?: boolean;
}

/** Outputs: the inputs (without the token) and the peering's record, plus its live status. */
export interface PeeringOutputs
  extends Omit<PeeringInputs, "provider">, Partial<Omit<PeeringRecord, "consumerClusterId">> {
  readonly provider: Omit<ProviderHandover, "token">;
  /** `Ready` (`Ready, with an empty offer: …` when the node can run no pod), or what `pulumi refresh` found wrong. */
  readonly status?: string;
  /** When the consumer's identity on the provider expires (RFC 3339), as last read. */
  readonly identityExpiresAt?: string;
  readonly offer?: OfferedResources;
  /** In-band: both gateways' reports. */
  readonly tunnelStatus?: TunnelRecord;
}

function withoutToken(inputs: PeeringInputs): Omit<PeeringOutputs, keyof PeeringRecord | "status"> {
  if (!inputs.provider) return inputs as Omit<PeeringOutputs, keyof PeeringRecord | "status">;
  const { token: _token, ...provider } = inputs.provider;
  return { ...inputs, provider };
}

function idOf(inputs: Pick<PeeringInputs, "consumerClusterId" | "provider" | "providerClusterId">): string {
  return `${inputs.consumerClusterId}-to-${inputs.provider?.clusterId ?? inputs.providerClusterId}`;
}

const timeoutMsOf = (inputs: Pick<PeeringInputs, "timeoutSeconds">): number =>
  (inputs.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;

/** What both approaches ask the same way: resources, the node's name, labels and taints, the deadline, the owner. */
function askOf(inputs: PeeringInputs) {
  const owner = ownUrnOf(inputs);
  return {
    ...(owner ? { owner } : {}),
    resources: inputs.resources,
    ...(inputs.virtualNodeName ? { virtualNodeName: inputs.virtualNodeName } : {}),
    ...(inputs.labels ? { labels: inputs.labels } : {}),
    ...(inputs.taints ? { taints: inputs.taints } : {}),
    timeoutMs: timeoutMsOf(inputs),
  };
}

/** The peering `inputs` ask for, as its steps take it. */
function requestOf(inputs: PeeringInputs): PeerRequest {
  return isInBand(inputs)
    ? {
        approach: "in-band",
        consumerKubeconfig: inputs.consumerKubeconfig,
        providerKubeconfig: inputs.providerKubeconfig!,
        authPort: authPortOf(inputs.providerAuthUrl),
        tunnel: inputs.tunnel ?? {},
        ...askOf(inputs),
      }
    : {
        approach: "out-of-band",
        consumerKubeconfig: inputs.consumerKubeconfig,
        provider: inputs.provider,
        ...askOf(inputs),
      };
}

/** The outputs of a peering that stands as `peered`, asked for by `inputs`. */
function outputsOf(inputs: PeeringInputs, peered: Peered): PeeringOutputs {
  return {
    ...withoutToken(inputs),
    ...peered.record,
    ...(peered.tunnel ? { tunnelStatus: peered.tunnel } : {}),
    ...(peered.identityExpiresAt ? { identityExpiresAt: peered.identityExpiresAt } : {}),
    status: readyStatus(peered.record.offer),
  };
}

async function peer(inputs: PeeringInputs, progress: Progress): Promise<PeeringOutputs> {
  const tasks = lifecycle();
  try {
    return outputsOf(inputs, await tasks.peer(requestOf(inputs), progress));
  } catch (error) {
    // A refusal changed nothing, so there is nothing to keep (a duplicate must not be recorded).
    if (tasks.isRefusedBeforeChange(error)) throw error;
    // Whatever was done is kept in state; the next `pulumi up` updates it, which runs create again.
    throw partialFailure(error, idOf(inputs), { ...withoutToken(inputs), status: "incomplete" });
  }
}

/** Tells `pulumi up` (as a warning on the resource) when the peering stands with an empty offer; hands `outs` back. */
async function warnIfEmpty(inputs: PeeringInputs, outs: PeeringOutputs): Promise<PeeringOutputs> {
  const empty = outs.offer && emptyOfferReason(outs.offer);
  if (empty)
    await logToEngine(`Peering ${labelOf(inputs, outs.virtualNodeName ?? "")}: ${empty}`, urnOf(inputs), {
      severity: "warning",
    });
  return outs;
}

/** In-band needs the provider's kubeconfig and a tunnel that can be built. */
function checkInBand(failures: Failures, news: PeeringInputs): void {
  checkKubeconfig(failures, "providerKubeconfig", news.providerKubeconfig);
  if (news.provider !== undefined)
    failures.add(
      "provider",
      "in-band, the provider is reached with its own kubeconfig (providerCluster): leave the token handover out",
    );
  if (news.tunnel !== undefined && !isUnknown(news.tunnel)) checkTunnelSettings(failures, "tunnel.", news.tunnel);
}

/**
 * Checks what the provider handed over (a secret as a whole: no reason quotes any of it) and
 * returns it with its token trimmed, or undefined when there is none to check yet.
 */
function checkHandover(failures: Failures, news: PeeringInputs): ProviderHandover | undefined {
  const handover = news.provider;
  if (handover === undefined || handover === null || typeof handover !== "object") return undefined;
  const consumerId = news.consumerClusterId;
  if (
    !isUnknown(consumerId) &&
    !isUnknown(handover.clusterId) &&
    consumerId !== undefined &&
    consumerId === handover.clusterId
  ) {
    failures.add(
      "provider.clusterId",
      `a cluster cannot peer with itself (consumer and provider are both cluster ${consumerId})`,
    );
  }
  const authUrl = handover.authUrl;
  if (authUrl !== undefined && !isUnknown(authUrl) && !String(authUrl).startsWith("https://"))
    failures.add("provider.authUrl", "is not an https URL");
  const token: unknown = handover.token;
  return typeof token === "string"
    ? { ...handover, token: trimmedSecret(failures, "provider.token", token) }
    : handover;
}

/**
 * What each input's change does to a peering, and why: the parties, the approach and the node's
 * name replace it (delete first: the new one would take the same names); the rest is converged in
 * place. The token is left out on purpose: a rotated token must not touch a peering that exists.
 */
export const PEERING_DIFF = declaredRules<PeeringOutputs, PeeringInputs>(PEERING, {
  // Unknown in preview whenever the consumer's Cluster updates (its id is an output the engine does not
  // carry over): an update keeps the id, which lives in the cluster; the real run re-diffs with the value.
  consumerClusterId: inputChanged("consumerClusterId", { unknownIsUnchanged: true }),
  // State written before the approach existed holds none: that was out-of-band.
  approach: (olds, news) => (olds.approach ?? "out-of-band") !== (news.approach ?? "out-of-band"),
  providerClusterId: (olds, news) =>
    isInBand(news) && inputChanged("providerClusterId", { unknownIsUnchanged: true })(olds, news),
  // Unknown in preview when the token is being replaced: the real run re-diffs with values.
  "provider.clusterId": (olds, news) =>
    !isInBand(news) &&
    !isUnknown(news.provider) &&
    !isUnknown(news.provider?.clusterId) &&
    olds.provider?.clusterId !== news.provider?.clusterId,
  // Outputs hold the resolved node name: a default that resolves to the same name is no change.
  // A create that failed half-way resolved none: its outputs hold the name as it was given.
  virtualNodeName: (olds, news) =>
    isIncomplete(olds)
      ? news.virtualNodeName !== olds.virtualNodeName
      : (news.virtualNodeName ?? defaultVirtualNodeName(olds.providerClusterName ?? "")) !== olds.virtualNodeName,
  "provider.authUrl": (olds, news) => olds.provider?.authUrl !== news.provider?.authUrl,
  "provider.authCaCert": (olds, news) => olds.provider?.authCaCert !== news.provider?.authCaCert,
  status: isDrift(isReady),
});

/** What changed between a peering's state and its new inputs. */
export function peeringChanges(olds: PeeringOutputs, news: PeeringInputs): FoundChanges<string> {
  // In-band, the clusters' outputs are unknown in preview whenever a Cluster updates: not a change here.
  return changesOf(PEERING_DIFF, olds, news, { unknownIsUnchanged: isInBand(news) });
}

/** How what a forced delete left on the provider goes. */
const PEERING_LEFT_REMEDY =
  "When the provider is back, its admin removes them by deleting that namespace and those CSRs";

/** The `Peering` dynamic provider's operations. */
export const pulumiProvider: pulumi.dynamic.ResourceProvider<PeeringInputs, PeeringOutputs> = {
  async check(_olds, news) {
    const failures = new Failures();
    checkKubeconfig(failures, "consumerKubeconfig", news.consumerKubeconfig);
    checkResourceAsk(failures, "resources", news.resources);
    checkSeconds(failures, "timeoutSeconds", news.timeoutSeconds);
    const handover = checkHandover(failures, news);
    if (isInBand(news)) checkInBand(failures, news);
    else if (news.approach !== undefined && news.approach !== "out-of-band" && !isUnknown(news.approach))
      failures.add("approach", `${JSON.stringify(news.approach)} is neither "out-of-band" nor "in-band"`);
    else if (news.provider === undefined)
      failures.add(
        "provider",
        `out-of-band, give what the provider handed over (its PeeringToken's clusterId, authUrl, authCaCert and token), or ` +
          `peer in-band with providerCluster and tunnel`,
      );
    return { inputs: handover ? { ...news, provider: handover } : news, failures: failures.list };
  },
  async diff(id, olds, news) {
    return explainedDiff("Peering", PEERING_DIFF, id, news, peeringChanges(olds, news), true);
  },
  async create(inputs) {
    return { id: idOf(inputs), outs: await warnIfEmpty(inputs, await showingSteps(inputs, (p) => peer(inputs, p))) };
  },
  async update(_id, olds, news) {
    // Imported from another resource: this one's first update makes the pair's claim its own.
    const takenFrom = takenFromOf(olds);
    if (takenFrom && !isInBand(news))
      await lifecycle().takeOverPeering(news.consumerKubeconfig, news.provider.clusterId, ownUrnOf(news), takenFrom);
    const plan = peeringUpdateOf(olds as PeeringOutputs, news);
    if (plan.kind === "record force") return { outs: { ...(olds as PeeringOutputs), force: true } };
    if (plan.kind === "peer again")
      return { outs: await warnIfEmpty(news, await showingSteps(news, (p) => peer(news, p))) };
    const resources = plan.resize ? news.resources : undefined;
    const peered = await showingSteps(news, (progress) =>
      lifecycle().renegotiate(news.consumerKubeconfig, plan.record, resources, timeoutMsOf(news), progress),
    );
    return { outs: await warnIfEmpty(news, outputsOf(news, peered)) };
  },
  async read(id, props) {
    const record = recordOf(props!);
    if (!record) return { id, props: props! };
    const found = await readOrFail("Peering", labelOf(props!, id), () => lifecycle().readPeeringState(props!, record));
    // Nothing of it left on the consumer (clusters rebuilt, or unpeered by hand): it is gone.
    if (found.gone) return { id: "", props: {} as PeeringOutputs };
    // The expiry is reported as it is now: the agent's renewals move it (none once the identity is gone).
    const { identityExpiresAt: _recorded, ...rest } = props!;
    return {
      id,
      props: {
        ...rest,
        ...(found.offer ? { offer: found.offer } : {}),
        ...(found.identityExpiresAt ? { identityExpiresAt: found.identityExpiresAt } : {}),
        status: statusAfterRead(found.problems, found.offer ?? props!.offer),
      },
    };
  },
  async delete(id, props) {
    const label = labelOf(props, id);
    const owner = ownUrnOf(props);
    const record = recordOf(props);
    const unpeering = {
      ...props,
      ...(props.provider ? { handover: props.provider } : {}),
      ...(owner ? { owner } : {}),
      force: props.force ?? false,
      timeoutMs: timeoutMsOf(props),
    };
    const left = await showingSteps(props, (progress) => lifecycle().unpeer(unpeering, record, progress)).catch(
      (error: unknown) => {
        throw deleteFailure("Peering", label, error);
      },
    );
    if (left.length > 0)
      await logToEngine(
        forcedDeleteReport("Peering", label, record!.providerClusterName, left, PEERING_LEFT_REMEDY),
        urnOf(props),
      );
  },
};

/**
 * {@link pulumiProvider} under the name that stacks made before it was renamed serialized into their
 * state (`require(...).provider`): their refresh and destroy still find it.
 */
export const provider = pulumiProvider;
