/**
 * The `Cluster` resource's dynamic provider: translates inputs into the install steps and their
 * results into outputs. No protocol logic and no Kubernetes call of its own.
 */
import { exposedHostsOf, servicesToReadBack } from "../cluster/exposure-plan.js";
import { CLUSTER } from "../../declarations/cluster.js";
import type * as pulumi from "@pulumi/pulumi";
import type { InstallFound } from "../cluster/lifecycle.js";
import {
  askedOfDeployment,
  clusterEndpointsOf,
  type AgentAsked,
  type ClusterInstallRequest,
  type GatewayAsked,
} from "../cluster/install-plan.js";
import { isClusterId } from "../api/names.js";
import { serverOfText } from "../kube/kubeconfig-text.js";
import { changesOf, urnOf, type FoundChanges, declaredRules, recordsOnly } from "./diff-rules.js";
import { onFirstNeed } from "./steps.js";
import { explainedDiff, logToEngine, showingSteps } from "./engine-log.js";
import {
  checkAgentDeployment,
  checkCidr,
  checkKubeconfig,
  checkPort,
  checkSeconds,
  Failures,
  isUnknown,
} from "./inputs.js";
import { ownUrnOf, takenFromOf } from "./hidden-inputs.js";
import type { Imported } from "./imported.js";
import { partialFailure } from "./partial.js";
import { deleteFailure } from "./read-failure.js";
import { forgottenReport } from "../operation/unreachable.js";
import { DEFAULT_TIMEOUT_SECONDS } from "../wait/deadline.js";

/** The install's steps, loaded on first need: they bring the Kubernetes client, which check and diff do without. */
const lifecycle = onFirstNeed((): typeof import("../cluster/lifecycle.js") =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it with this module
  require("../cluster/lifecycle.js"),
);

/** Inputs, as the SDK's `ClusterArgs` sends them. */
export interface ClusterInputs {
  readonly name: string;
  readonly kubeconfig: string;
  /** Detected from the cluster when left out. */
  readonly podCidr?: string;
  /** Detected from the cluster when left out. */
  readonly serviceCidr?: string;
  readonly externalCidr?: string;
  readonly apiServerUrl?: string;
  readonly authService?: { readonly address?: string; readonly port?: number };
  readonly gateway?: GatewayAsked;
  readonly agent?: AgentAsked;
  readonly timeoutSeconds?: number;
  readonly force?: boolean;
}

/** Outputs: the inputs, resolved, plus what the cluster's install produced. */
export interface ClusterOutputs extends ClusterInputs {
  readonly clusterId: string;
  readonly podCidr: string;
  readonly serviceCidr: string;
  /** Where each CIDR the inputs left out was read (absent for one given; state written before detection has none). */
  readonly detectedFrom?: { readonly podCidr?: string; readonly serviceCidr?: string };
  /** Nodes (`name range`) whose pod range is outside podCidr, as of the last install or refresh (state written before has none). */
  readonly nodesOutsidePodCidr?: readonly string[];
  /** The version the API server reported at the last install (state written before has none). */
  readonly kubernetesVersion?: string;
  /** How the cluster places offloaded pods, by its release (state written before has none). */
  readonly podPlacement?: string;
  /** The build the cluster's agent runs, as of the last install or refresh (state written before has none). */
  readonly agentVersion?: string;
  /** The digest of the image the cluster's agent pod runs, as of the last install or refresh (state written before has none). */
  readonly agentImageDigest?: string;
  readonly apiServerUrl: string;
  readonly authUrl: string;
  readonly authCaCert: string;
  readonly gatewayEndpoint: string;
}

async function check(olds: ClusterInputs, inputs: ClusterInputs): Promise<pulumi.dynamic.CheckResult<ClusterInputs>> {
  const news = inputs as unknown as Record<string, unknown>;
  const failures = new Failures();
  if (!isUnknown(news["name"]) && !/^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/.test(String(news["name"] ?? "")))
    failures.add("name", `${JSON.stringify(news["name"])} is not a DNS label of at most 32 characters`);
  checkKubeconfig(failures, "kubeconfig", news["kubeconfig"]);
  if (news["podCidr"] !== undefined) checkCidr(failures, "podCidr", news["podCidr"]);
  if (news["serviceCidr"] !== undefined) checkCidr(failures, "serviceCidr", news["serviceCidr"]);
  if (news["externalCidr"] !== undefined) checkCidr(failures, "externalCidr", news["externalCidr"]);
  checkPort(failures, "authService.port", (news["authService"] as ClusterInputs["authService"])?.port);
  checkPort(failures, "gateway.port", (news["gateway"] as ClusterInputs["gateway"])?.port);
  checkSeconds(failures, "timeoutSeconds", news["timeoutSeconds"]);
  checkAgentDeployment(failures, news["agent"], news["gateway"]);
  if (news["apiServerUrl"] !== undefined && !isUnknown(news["apiServerUrl"])) {
    try {
      new URL(String(news["apiServerUrl"]));
    } catch {
      failures.add("apiServerUrl", `${JSON.stringify(news["apiServerUrl"])} is not a URL`);
    }
  }
  if (failures.list.length === 0 && isCreate(olds) && !isUnknown(news["kubeconfig"])) {
    // At preview of a create: a CIDR left out that the cluster cannot show is said now, naming the
    // input. This reads the cluster (and loads the client) only then; an update's install reads it again.
    for (const { input, reason } of await lifecycle().previewRefusals(inputs.kubeconfig, kubeconfigInput(inputs), {
      ...(inputs.podCidr !== undefined ? { podCidr: inputs.podCidr } : {}),
      ...(inputs.serviceCidr !== undefined ? { serviceCidr: inputs.serviceCidr } : {}),
    }))
      failures.add(input, reason);
  }
  return { inputs, failures: failures.list };
}

/** Whether `check` sees a resource being created: it has no old inputs. */
const isCreate = (olds: ClusterInputs | undefined): boolean => olds === undefined || Object.keys(olds).length === 0;

/** The API server URL inputs resolve to (the override, or the kubeconfig's server); undefined if unknown yet. */
function resolvedApiServerUrl(inputs: ClusterInputs): string | undefined {
  if (inputs.apiServerUrl !== undefined) return isUnknown(inputs.apiServerUrl) ? undefined : inputs.apiServerUrl;
  return isUnknown(inputs.kubeconfig) ? undefined : serverOfText(inputs.kubeconfig);
}

const kubeconfigInput = (inputs: Pick<ClusterInputs, "name">): string => `Cluster "${inputs.name}": kubeconfig`;
const timeoutMsOf = (inputs: Pick<ClusterInputs, "timeoutSeconds">): number =>
  (inputs.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;

/**
 * Creates or converges the install; every step is idempotent, so update is the same as create.
 * An imported resource's first update takes over the install of `takenFrom` (see TAKEN_FROM).
 */
async function install(inputs: ClusterInputs, takenFrom?: string): Promise<{ id: string; outs: ClusterOutputs }> {
  const owner = ownUrnOf(inputs);
  const { timeoutSeconds: _timeout, force: _force, ...asked } = inputs;
  const request: ClusterInstallRequest = {
    ...asked,
    kubeconfigInput: kubeconfigInput(inputs),
    timeoutMs: timeoutMsOf(inputs),
    ...(owner ? { owner } : {}),
    ...(takenFrom ? { takenFrom } : {}),
  };
  const tasks = lifecycle();
  try {
    const {
      authHost: _host,
      clusterId,
      ...outs
    } = await showingSteps(inputs, (progress) => tasks.installCluster(request, progress));
    await warnOnRow(inputs, tasks.cidrWarnings(inputs.name, outs));
    return { id: clusterId, outs: { ...inputs, ...outs, clusterId } };
  } catch (error) {
    const made = tasks.madeBefore(error);
    if (!made) throw error;
    // The identity stands: recorded, the next `pulumi up` finishes the install from it.
    const { authHost: _host, ...outs } = made;
    throw partialFailure(error, made.clusterId, { ...inputs, ...outs, authCaCert: "" });
  }
}

/** Each of `warnings` on the resource's row (a provider plugin's stderr is hidden from users). */
async function warnOnRow(resource: object, warnings: readonly string[]): Promise<void> {
  for (const warning of warnings) await logToEngine(warning, urnOf(resource), { severity: "warning" });
}

/**
 * What each input's change does to a cluster's install, and why: nothing replaces it (the cluster
 * ID is made once and peerings are named after it); update runs the idempotent install again.
 */
export const CLUSTER_DIFF = declaredRules<ClusterOutputs, ClusterInputs>(CLUSTER, {
  // Left out, it is detected at install: the outputs hold what was detected, which is no change.
  podCidr: (olds, news) => news.podCidr !== undefined && news.podCidr !== olds.podCidr,
  serviceCidr: (olds, news) => news.serviceCidr !== undefined && news.serviceCidr !== olds.serviceCidr,
  // Outputs hold the resolved URL: compare what the inputs resolve to, not the inputs as given.
  apiServerUrl: (olds, news) => resolvedApiServerUrl(news) !== olds.apiServerUrl,
});

/** What changed between a cluster's state and its new inputs. */
export function clusterChanges(olds: ClusterOutputs, news: ClusterInputs): FoundChanges<string> {
  return changesOf(CLUSTER_DIFF, olds, news);
}

/** What an import of a Cluster is asked: the cluster ID its ID names, the kubeconfig it reaches it with, its URN. */
export interface ClusterImport {
  readonly clusterId: string;
  readonly kubeconfig: string;
  /** The resource's URN: an install another resource made is taken over from it. */
  readonly urn: string;
  /** How errors name the import, e.g. `Cluster import of ID "…"`. */
  readonly label: string;
}

/** The optional inputs a cluster's install leaves no trace of: an import leaves them out. */
const CLUSTER_UNTRACED = ["authService.address", "gateway.address", "timeoutSeconds", "force"] as const;

/**
 * The Cluster an import finds as `found` (undefined: nothing installed), or an error naming the
 * step and the endpoint when it is not this import's to take: another cluster than the ID names
 * (a forged or mistaken ID), an install that stopped half-way. Another resource's install is taken
 * over (`takenFrom`): an import is the user's explicit word to move it. Pure.
 */
export function importedCluster(
  asked: ClusterImport,
  found: InstallFound | undefined,
): Imported<ClusterInputs, ClusterOutputs> {
  const server = found?.server ?? serverOfText(asked.kubeconfig) ?? "the kubeconfig's server";
  const refuse = (step: string, why: string) => new Error(`${asked.label}: ${step} at ${server}: ${why}`);
  if (!isClusterId(asked.clusterId))
    throw new Error(
      `${asked.label}: ${JSON.stringify(asked.clusterId)} is not a cluster ID (16 lowercase hex characters)`,
    );
  if (!found) throw refuse("reading the cluster's identity", "pulumi-liqo is not installed there: nothing to import");
  const { identity } = found;
  if (identity.clusterId !== asked.clusterId)
    throw refuse(
      "reading the cluster's identity",
      `the kubeconfig reaches cluster ${identity.clusterId}, not ${asked.clusterId}: refused, an import ID names the cluster its kubeconfig reaches`,
    );
  if (!found.authCaCert)
    throw refuse(
      "reading the auth service's TLS Secret",
      "there is none (the install stopped half-way): finish it with pulumi up rather than import it",
    );
  const kubeconfigServer = serverOfText(asked.kubeconfig) ?? identity.apiServerUrl;
  const inputs = {
    name: identity.clusterName,
    ...(identity.podCidr ? { podCidr: identity.podCidr } : {}),
    ...(identity.serviceCidr ? { serviceCidr: identity.serviceCidr } : {}),
    ...(identity.externalCidr ? { externalCidr: identity.externalCidr } : {}),
    ...(identity.apiServerUrl !== kubeconfigServer ? { apiServerUrl: identity.apiServerUrl } : {}),
    ...askedOfDeployment(found.deployed),
  };
  // Under LoadBalancer exposure the endpoints are where the load balancers put the agent's Services.
  const exposed = exposedHostsOf(servicesToReadBack(inputs), found.deployed);
  const { authHost: _host, ...endpoints } = clusterEndpointsOf(inputs, kubeconfigServer, exposed);
  return {
    id: identity.clusterId,
    inputs,
    outputs: {
      ...inputs,
      ...endpoints,
      kubeconfig: asked.kubeconfig,
      clusterId: identity.clusterId,
      podCidr: identity.podCidr ?? "",
      serviceCidr: identity.serviceCidr ?? "",
      authCaCert: found.authCaCert,
    },
    unrecovered: [
      {
        input: "kubeconfig",
        why: "a secret the cluster never shows: the state keeps the file's text the ID names only to reach the cluster, the program must give it",
      },
    ],
    untraced: CLUSTER_UNTRACED,
    ...(found.owner && found.owner !== asked.urn ? { takenFrom: found.owner } : {}),
  };
}

/** Imports the Cluster of `asked`: reads its install (writing nothing) and hands back what it found. */
export async function importCluster(asked: ClusterImport): Promise<Imported<ClusterInputs, ClusterOutputs>> {
  return importedCluster(asked, await lifecycle().readInstallForImport(asked.kubeconfig, `${asked.label}: kubeconfig`));
}

/** The `Cluster` dynamic provider's operations. */
export const pulumiProvider: pulumi.dynamic.ResourceProvider<ClusterInputs, ClusterOutputs> = {
  check,
  async diff(id, olds, news) {
    return explainedDiff("Cluster", CLUSTER_DIFF, id, news, clusterChanges(olds, news), false);
  },
  create: (inputs) => install(inputs),
  async update(_id, olds, news) {
    // Setting force is the way out when the cluster is gone: it must not need the cluster.
    if (recordsOnly(clusterChanges(olds, news))) return { outs: { ...olds, force: news.force ?? false } };
    return { outs: (await install(news, takenFromOf(olds))).outs };
  },
  async read(_id, props) {
    const tasks = lifecycle();
    const found = await tasks.readInstall(props!.kubeconfig, kubeconfigInput(props!));
    if (!found) return { id: "", props: {} as ClusterOutputs };
    await warnOnRow(props!, tasks.cidrWarnings(props!.name, { podCidr: props!.podCidr, ...found }));
    return { id: found.clusterId, props: { ...props!, ...found } };
  },
  async delete(_id, props) {
    const owner = ownUrnOf(props);
    const takenFrom = takenFromOf(props);
    const { forgotten, left } = await lifecycle()
      .removeCluster({
        name: props.name,
        kubeconfig: props.kubeconfig,
        kubeconfigInput: kubeconfigInput(props),
        ...(owner ? { owner } : {}),
        ...(takenFrom ? { takenFrom } : {}),
        force: props.force ?? false,
        timeoutMs: timeoutMsOf(props),
      })
      .catch((error: unknown) => {
        throw deleteFailure("Cluster", props.name, error);
      });
    if (forgotten) await warnOnRow(props, [`Cluster "${props.name}" forgotten without uninstalling: ${forgotten}`]);
    if (left)
      await logToEngine(
        forgottenReport("Cluster", props.name, left.endpoint, left.items, lifecycle().INSTALL_LEFT_REMEDY),
        urnOf(props),
      );
  },
};

/**
 * {@link pulumiProvider} under the name that stacks made before it was renamed serialized into their
 * state (`require(...).provider`): their refresh and destroy still find it.
 */
export const provider = pulumiProvider;
