/**
 * The `NamespaceOffloading` resource's dynamic provider: translates inputs into the steps of
 * ../offloading/namespace-offloading.ts, or, for namespaces selected by label,
 * ../offloading/offloading-selector.ts (on the consumer cluster; its agent talks to the providers),
 * and the agent's reports into outputs. Which peerings the namespaces use, and which labels select
 * them, change in place; another namespace, naming or consumer is another offloading.
 */
import { NAMESPACE_OFFLOADING } from "../../declarations/namespace-offloading.js";
import type * as pulumi from "@pulumi/pulumi";
import {
  DEFAULT_POD_OFFLOADING,
  POD_OFFLOADING_POLICIES,
  SERVICE_ACCOUNT_TOKENS,
  type NamespaceLabelSelector,
  type PodOffloading,
  type ServiceAccountTokens,
  type RemoteNamespaceReport,
  type SelectedNamespaceReport,
} from "../api/offloading.js";
import { selectorFaults } from "../offloading/namespace-selector.js";
import { remoteNamespaceName } from "../offloading/reflection.js";
import { DEFAULT_TIMEOUT_SECONDS } from "../wait/deadline.js";
import { changesOf, labelOf, urnOf, type FoundChanges, declaredRules, isDrift, recordsOnly } from "./diff-rules.js";
import { forcedDeleteReport } from "../operation/unreachable.js";
import { explainedDiff, logToEngine, showingSteps } from "./engine-log.js";
import { checkKubeconfig, checkOneOf, checkSeconds, Failures, isUnknown } from "./inputs.js";
import { partialFailure } from "./partial.js";
import { deleteFailure, readOrFail } from "./read-failure.js";
import { onFirstNeed } from "./steps.js";

/** The steps and the Kubernetes client, loaded on first need: check and diff do without them. */
const steps = onFirstNeed((): typeof import("../offloading/namespace-offloading.js") =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it with this module
  require("../offloading/namespace-offloading.js"),
);
const selecting = onFirstNeed((): typeof import("../offloading/offloading-selector.js") =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it with this module
  require("../offloading/offloading-selector.js"),
);
const kube = onFirstNeed((): typeof import("../kube/client.js") =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it with this module
  require("../kube/client.js"),
);

/** How the remote namespace is named: suffixed with the consumer's cluster id (no two consumers collide), or the same. */
export type RemoteNaming = "suffixed" | "same";

/** Inputs, as the SDK's `NamespaceOffloading` sends them. */
export interface NamespaceOffloadingInputs {
  /** The consumer's kubeconfig (from its `Cluster`). */
  readonly consumerKubeconfig: string;
  readonly consumerClusterId: string;
  /** The consumer namespace to offload; it must exist. Exactly one of it and `namespaceSelector`. */
  readonly namespace?: string;
  /** Offloads every namespace whose labels match, those made later included. */
  readonly namespaceSelector?: NamespaceLabelSelector;
  /** The virtual nodes of the peerings its pods may use. */
  readonly virtualNodes: string[];
  /** @default "suffixed" */
  readonly naming?: RemoteNaming;
  readonly timeoutSeconds?: number;
  /** On delete with a provider unreachable, remove the consumer's side anyway and list what stays on the provider. */
  readonly force?: boolean;
  /** Where the namespace's pods may run. @default "local-and-remote" */
  readonly podOffloading?: PodOffloading;
  /** The token offloaded pods that mount one get: their consumer's, or none. @default "consumer" */
  readonly serviceAccountTokens?: ServiceAccountTokens;
}

/** Outputs: the inputs, the remote namespace's name and each provider's report. */
export interface NamespaceOffloadingOutputs extends NamespaceOffloadingInputs {
  /** The namespace's name on every provider; empty with `namespaceSelector` (see `selectedNamespaces`). */
  readonly remoteNamespace: string;
  /** One report per virtual node (with `namespace`). */
  readonly remotes: RemoteNamespaceReport[];
  /** With `namespaceSelector`: the OffloadingSelector's name, and one report per namespace it offloads. */
  readonly selectorName?: string;
  readonly selectedNamespaces?: SelectedNamespaceReport[];
  /** `Ready`, or what the last create or refresh found wrong. */
  readonly status: string;
}

const owner = "NamespaceOffloading";
/** The policy an offloading's pods are placed by: the input, or the default. */
const appliedPolicy = (inputs: NamespaceOffloadingInputs): PodOffloading =>
  inputs.podOffloading ?? DEFAULT_POD_OFFLOADING;
const timeoutOf = (inputs: NamespaceOffloadingInputs): number =>
  (inputs.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
const remoteOf = (inputs: NamespaceOffloadingInputs): string =>
  remoteNamespaceName(inputs.namespace!, inputs.consumerClusterId, inputs.naming ?? "suffixed");
/** The OffloadingSelector of a resource that selects by label; undefined for one namespace. */
const selectorOf = (inputs: NamespaceOffloadingInputs): string | undefined =>
  inputs.namespaceSelector ? selecting().selectorObjectName(urnOf(inputs)) : undefined;
const kubeconfigOf = (inputs: NamespaceOffloadingInputs) =>
  kube().loadKubeconfig(inputs.consumerKubeconfig, `${owner}: consumerKubeconfig`);

/**
 * What each input's change does, and why: the remote namespace's name follows from the consumer,
 * the namespace and the naming, so a change of any of them is another offloading (its pods are
 * drained first); the set of peerings and the rest change in place.
 */
export const NAMESPACE_OFFLOADING_DIFF = declaredRules<NamespaceOffloadingOutputs, NamespaceOffloadingInputs>(
  NAMESPACE_OFFLOADING,
  {
    status: isDrift("Ready"),
    // The outputs hold the policy applied, the default included: a state without one was made by a
    // release that recorded none, and gets today's default applied (and previewed).
    podOffloading: (olds, news) => appliedPolicy(news) !== olds.podOffloading,
  },
);

/** What changed between an offloading's state and its new inputs. */
export function namespaceOffloadingChanges(
  olds: NamespaceOffloadingOutputs,
  news: NamespaceOffloadingInputs,
): FoundChanges<string> {
  // The peerings' virtual node names are unknown in preview while they update: not a change here.
  return changesOf(NAMESPACE_OFFLOADING_DIFF, olds, news, { unknownIsUnchanged: true });
}

async function converge(inputs: NamespaceOffloadingInputs): Promise<NamespaceOffloadingOutputs> {
  const selectorName = selectorOf(inputs);
  if (selectorName) return convergeSelector(inputs, selectorName);
  const remoteNamespace = remoteOf(inputs);
  try {
    const remotes = await showingSteps(inputs, (progress) =>
      steps().offloadNamespace(
        kubeconfigOf(inputs),
        {
          namespace: inputs.namespace!,
          remoteNamespace,
          virtualNodes: inputs.virtualNodes,
          owner: urnOf(inputs),
          ...(inputs.podOffloading ? { podOffloading: inputs.podOffloading } : {}),
          ...(inputs.serviceAccountTokens ? { serviceAccountTokens: inputs.serviceAccountTokens } : {}),
        },
        timeoutOf(inputs),
        progress,
      ),
    );
    return { ...inputs, podOffloading: appliedPolicy(inputs), remoteNamespace, remotes, status: "Ready" };
  } catch (error) {
    // The object stays written: the next `pulumi up` waits for it again, or destroy withdraws it.
    throw partialFailure(error, inputs.namespace!, { ...inputs, remoteNamespace, remotes: [], status: "incomplete" });
  }
}

async function convergeSelector(
  inputs: NamespaceOffloadingInputs,
  selectorName: string,
): Promise<NamespaceOffloadingOutputs> {
  const outputs = { ...inputs, remoteNamespace: "", remotes: [], selectorName };
  const applied = { ...outputs, podOffloading: appliedPolicy(inputs) };
  try {
    const selectedNamespaces = await showingSteps(inputs, (progress) =>
      selecting().offloadSelectedNamespaces(
        kubeconfigOf(inputs),
        {
          name: selectorName,
          namespaceSelector: inputs.namespaceSelector!,
          virtualNodes: inputs.virtualNodes,
          naming: inputs.naming ?? "suffixed",
          consumerClusterId: inputs.consumerClusterId,
          ...(inputs.podOffloading ? { podOffloading: inputs.podOffloading } : {}),
          ...(inputs.serviceAccountTokens ? { serviceAccountTokens: inputs.serviceAccountTokens } : {}),
        },
        timeoutOf(inputs),
        progress,
      ),
    );
    return { ...applied, selectedNamespaces, status: "Ready" };
  } catch (error) {
    // The selector stays written: its agent goes on offloading; the next `pulumi up` waits for it again.
    throw partialFailure(error, `selector/${selectorName}`, {
      ...outputs,
      selectedNamespaces: [],
      status: "incomplete",
    });
  }
}

/** The resource's id: the namespace, or `selector/<OffloadingSelector name>`. */
const idOf = (outputs: NamespaceOffloadingOutputs): string =>
  outputs.selectorName ? `selector/${outputs.selectorName}` : outputs.namespace!;

/** The `NamespaceOffloading` dynamic provider's operations. */
export const pulumiProvider: pulumi.dynamic.ResourceProvider<NamespaceOffloadingInputs, NamespaceOffloadingOutputs> = {
  async check(_olds, news) {
    const failures = new Failures();
    checkKubeconfig(failures, "consumerKubeconfig", news.consumerKubeconfig);
    checkSeconds(failures, "timeoutSeconds", news.timeoutSeconds);
    if (news.naming !== undefined && !isUnknown(news.naming) && news.naming !== "suffixed" && news.naming !== "same") {
      failures.add("naming", `must be "suffixed" or "same", not "${String(news.naming)}"`);
    }
    if (news.force !== undefined && !isUnknown(news.force) && typeof news.force !== "boolean") {
      failures.add("force", `must be true or false, not ${JSON.stringify(news.force)}`);
    }
    checkOneOf(failures, "podOffloading", news.podOffloading, POD_OFFLOADING_POLICIES);
    checkOneOf(failures, "serviceAccountTokens", news.serviceAccountTokens, SERVICE_ACCOUNT_TOKENS);
    if (!isUnknown(news.virtualNodes) && (!Array.isArray(news.virtualNodes) || news.virtualNodes.length === 0)) {
      failures.add("virtualNodes", "the peerings' virtual nodes: name at least one Peering of this consumer");
    }
    if (news.namespaceSelector !== undefined) {
      if (news.namespace !== undefined)
        failures.add(
          "namespaceSelector",
          "give either namespace (one namespace) or namespaceSelector (by label), not both",
        );
      else if (!isUnknown(news.namespaceSelector))
        for (const fault of selectorFaults(news.namespaceSelector)) failures.add("namespaceSelector", fault);
    } else if (!isUnknown(news.namespace) && (typeof news.namespace !== "string" || news.namespace === "")) {
      failures.add("namespace", "must name the consumer namespace to offload, or give namespaceSelector instead");
    } else if (![news.namespace, news.consumerClusterId, news.naming].some(isUnknown)) {
      try {
        remoteOf(news);
      } catch (error) {
        failures.add("namespace", (error as Error).message);
      }
    }
    return { inputs: news, failures: failures.list };
  },
  async diff(id, olds, news) {
    return explainedDiff(owner, NAMESPACE_OFFLOADING_DIFF, id, news, namespaceOffloadingChanges(olds, news), true);
  },
  async create(inputs) {
    const outs = await converge(inputs);
    return { id: idOf(outs), outs };
  },
  async update(_id, olds, news) {
    if (recordsOnly(namespaceOffloadingChanges(olds, news), ["status"])) {
      const { remoteNamespace, remotes, status, selectorName, selectedNamespaces, podOffloading } = olds;
      return {
        outs: {
          ...news,
          // The policy applied stays as recorded: nothing was applied.
          ...(podOffloading ? { podOffloading } : {}),
          remoteNamespace,
          remotes,
          status,
          ...(selectorName ? { selectorName, selectedNamespaces: selectedNamespaces ?? [] } : {}),
        },
      };
    }
    return { outs: await converge(news) };
  },
  async read(id, props) {
    if (!props) return { id, props: props! };
    // A provider out of reach is found by one short look and recorded as the status, never thrown.
    if (props.selectorName) {
      const selector = props.selectorName;
      const state = await readOrFail(owner, labelOf(props, id), () =>
        selecting().readSelectorState(kubeconfigOf(props), selector),
      );
      if (!state) return { id: "", props: {} as NamespaceOffloadingOutputs };
      return { id, props: { ...props, selectedNamespaces: state.namespaces, status: state.status } };
    }
    const found = await readOrFail(owner, labelOf(props, id), () =>
      steps().readOffloadingState(kubeconfigOf(props), props.namespace!),
    );
    if (!found) return { id: "", props: {} as NamespaceOffloadingOutputs };
    return { id, props: { ...props, remotes: found.remotes, status: found.status } };
  },
  async delete(id, props) {
    const label = labelOf(props, id);
    const options = { force: props.force ?? false, timeoutMs: timeoutOf(props) };
    const abandoned = await showingSteps(props, (progress) =>
      props.selectorName
        ? selecting().withdrawSelectedNamespaces(kubeconfigOf(props), props.selectorName, options, progress)
        : steps().withdrawNamespace(kubeconfigOf(props), props.namespace!, options, progress),
    ).catch((error: unknown) => {
      throw deleteFailure(owner, label, error);
    });
    for (const { provider, left, remedy } of abandoned)
      await logToEngine(forcedDeleteReport(owner, label, provider.providerName, left, remedy), urnOf(props));
  },
};

/**
 * {@link pulumiProvider} under the name that stacks made before it was renamed serialized into their
 * state (`require(...).provider`): their refresh and destroy still find it.
 */
export const provider = pulumiProvider;
