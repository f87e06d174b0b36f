/**
 * The `Cluster` resource's dynamic provider: translates inputs into the install steps and their
 * results into outputs. No protocol logic and no Kubernetes call of its own.
 */
import type * as pulumi from "@pulumi/pulumi";
import { describeOwner } from "../api/names.js";
import {
  checkInstallOwner,
  ensureAuthServiceTls,
  ensureClusterIdentity,
  ensureCustomResourceDefinitions,
  ensureSystemNamespace,
  getClusterIdentity,
  getInstallOwner,
  uninstallCluster,
} from "../cluster/install.js";
import { waitForAgent } from "../cluster/agent.js";
import { deleteAgentClusterRbac, ensureAgentDeployment } from "../cluster/agent-deployment.js";
import { loadKubeconfig, serverOf } from "../kube/client.js";
import { getPeeringsUsing } from "../peering/outgoing.js";
import { changesOf, inPlace, type DiffRules, type FoundChanges } from "./diff-rules.js";
import { explainedDiff } from "./engine-log.js";
import { checkCidr, checkKubeconfig, checkPort, checkSeconds, Failures, isUnknown } from "./inputs.js";
import { ownUrnOf } from "./hidden-inputs.js";
import { orPartial } from "./partial.js";
import { DEFAULT_TIMEOUT_SECONDS } from "../wait/deadline.js";

/** Inputs, as the SDK's `ClusterArgs` sends them. */
export interface ClusterInputs {
  readonly name: string;
  readonly kubeconfig: string;
  readonly podCidr: string;
  readonly serviceCidr: string;
  readonly externalCidr?: string;
  readonly apiServerUrl?: string;
  readonly authService?: { readonly address?: string; readonly port?: number };
  readonly gateway?: { readonly address?: string; readonly port?: number };
  readonly agent?: { readonly image?: string; readonly exposure?: "LoadBalancer" | "NodePort" };
  readonly timeoutSeconds?: number;
  readonly force?: boolean;
}

/** Outputs: the inputs, resolved, plus what the cluster's install produced. */
export interface ClusterOutputs extends ClusterInputs {
  readonly clusterId: string;
  readonly apiServerUrl: string;
  readonly authUrl: string;
  readonly authCaCert: string;
  readonly gatewayEndpoint: string;
}

/** Default port of the auth service. */
export const DEFAULT_AUTH_PORT = 8443;
/** Default UDP port of the WireGuard gateway. */
export const DEFAULT_GATEWAY_PORT = 51820;

function check(_olds: ClusterInputs, inputs: ClusterInputs): Promise<pulumi.dynamic.CheckResult<ClusterInputs>> {
  const news = inputs as unknown as Record<string, unknown>;
  const failures = new Failures();
  if (!isUnknown(news["name"]) && !/^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/.test(String(news["name"] ?? "")))
    failures.add("name", `${JSON.stringify(news["name"])} is not a DNS label of at most 32 characters`);
  checkKubeconfig(failures, "kubeconfig", news["kubeconfig"]);
  checkCidr(failures, "podCidr", news["podCidr"]);
  checkCidr(failures, "serviceCidr", news["serviceCidr"]);
  if (news["externalCidr"] !== undefined) checkCidr(failures, "externalCidr", news["externalCidr"]);
  checkPort(failures, "authService.port", (news["authService"] as ClusterInputs["authService"])?.port);
  checkPort(failures, "gateway.port", (news["gateway"] as ClusterInputs["gateway"])?.port);
  checkSeconds(failures, "timeoutSeconds", news["timeoutSeconds"]);
  const exposure = inputs.agent?.exposure;
  if (exposure !== undefined && !isUnknown(exposure) && exposure !== "LoadBalancer" && exposure !== "NodePort")
    failures.add("agent.exposure", `${JSON.stringify(exposure)} is not LoadBalancer or NodePort`);
  if (news["apiServerUrl"] !== undefined && !isUnknown(news["apiServerUrl"])) {
    try {
      new URL(String(news["apiServerUrl"]));
    } catch {
      failures.add("apiServerUrl", `${JSON.stringify(news["apiServerUrl"])} is not a URL`);
    }
  }
  return Promise.resolve({ inputs, failures: failures.list });
}

/** The API server URL inputs resolve to (the override, or the kubeconfig's server); undefined if unknown yet. */
function resolvedApiServerUrl(inputs: ClusterInputs): string | undefined {
  if (inputs.apiServerUrl !== undefined) return isUnknown(inputs.apiServerUrl) ? undefined : inputs.apiServerUrl;
  if (isUnknown(inputs.kubeconfig)) return undefined;
  try {
    return serverOf(loadKubeconfig(inputs.kubeconfig, "kubeconfig"));
  } catch {
    return undefined;
  }
}

/** Creates or converges the install; every step is idempotent, so update is the same as create. */
async function install(inputs: ClusterInputs): Promise<{ id: string; outs: ClusterOutputs }> {
  const kc = loadKubeconfig(inputs.kubeconfig, `Cluster "${inputs.name}": kubeconfig`);
  const apiServerUrl = inputs.apiServerUrl ?? serverOf(kc);
  const host = new URL(apiServerUrl).hostname;
  const authUrl = `https://${inputs.authService?.address ?? host}:${inputs.authService?.port ?? DEFAULT_AUTH_PORT}`;
  const gatewayEndpoint = `${inputs.gateway?.address ?? host}:${inputs.gateway?.port ?? DEFAULT_GATEWAY_PORT}`;
  const timeoutMs = (inputs.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
  const caPem = Buffer.from(kc.getCurrentCluster()!.caData ?? "", "base64").toString("utf8");
  const owner = ownUrnOf(inputs);

  // Before anything is written: another Cluster resource's install is not this one's to adopt.
  await checkInstallOwner(kc, owner);
  await ensureSystemNamespace(kc);
  await ensureCustomResourceDefinitions(kc, { timeoutMs });
  const { clusterId } = await ensureClusterIdentity(kc, {
    clusterName: inputs.name,
    apiServerUrl,
    apiServerCaPem: caPem,
    podCidr: inputs.podCidr,
    serviceCidr: inputs.serviceCidr,
    ...(inputs.externalCidr ? { externalCidr: inputs.externalCidr } : {}),
    ...(owner ? { owner } : {}),
  });
  const partialOuts = { ...inputs, clusterId, apiServerUrl, authUrl, authCaCert: "", gatewayEndpoint };
  return orPartial(clusterId, partialOuts, async () => {
    const { caPem: authCaCert, certPem } = await ensureAuthServiceTls(kc, {
      hosts: [inputs.authService?.address ?? host],
    });
    // With an image, the agent is deployed here; without one, an agent already runs (local clusters).
    if (inputs.agent?.image) {
      await ensureAgentDeployment(kc, {
        image: inputs.agent.image,
        authPort: inputs.authService?.port ?? DEFAULT_AUTH_PORT,
        exposure: inputs.agent.exposure ?? "LoadBalancer",
      });
    }
    await waitForAgent(kc, certPem, timeoutMs);
    return { id: clusterId, outs: { ...partialOuts, authCaCert } };
  });
}

/**
 * What each input's change does to a cluster's install, and why: nothing replaces it (the cluster
 * ID is made once and peerings are named after it); update runs the idempotent install again.
 */
export const CLUSTER_DIFF = {
  name: inPlace(
    "the cluster's identity record takes the new name; its cluster ID stays, so its peerings and their virtual nodes stay",
  ),
  kubeconfig: inPlace(
    "only how pulumi reaches the cluster; install runs again through it and keeps the cluster ID it finds",
  ),
  podCidr: inPlace(
    "the cluster's identity records it and its gateway announces it; a peer routes to it once that peer's tunnel converges again",
  ),
  serviceCidr: inPlace("the cluster's identity records it; its gateway never lets a peer's range be seen under it"),
  externalCidr: inPlace(
    "the cluster's identity records it and its gateway announces it; a peer routes to it once that peer's tunnel converges again",
  ),
  authService: inPlace(
    "authUrl follows; the auth service's certificate is made anew (with a new CA) only if it does not cover the new address, and a deployed agent listens on the new port",
  ),
  gateway: inPlace("only the gatewayEndpoint output follows: a tunnel's own inputs say where its gateway serves"),
  agent: inPlace(
    "the agent's Deployment and Service are applied again with the new image or exposure (without an image, the agent running is only checked)",
  ),
  timeoutSeconds: inPlace("only the deadline of later operations; install runs again as it is"),
  force: inPlace("only whether a later delete uninstalls while peerings use the cluster; install runs again as it is"),
  apiServerUrl: {
    ...inPlace(
      "the cluster's identity records the new URL; identities its auth service issues from then on point at it",
    ),
    // Outputs hold the resolved URL: compare what the inputs resolve to, not the inputs as given.
    changed: (olds, news) => resolvedApiServerUrl(news) !== olds.apiServerUrl,
  },
} as const satisfies DiffRules<ClusterOutputs, ClusterInputs>;

/** What changed between a cluster's state and its new inputs. */
export function clusterChanges(olds: ClusterOutputs, news: ClusterInputs): FoundChanges<keyof typeof CLUSTER_DIFF> {
  return changesOf(CLUSTER_DIFF, olds, news);
}

/** The `Cluster` dynamic provider's operations. */
export const provider: pulumi.dynamic.ResourceProvider<ClusterInputs, ClusterOutputs> = {
  check,
  async diff(id, olds, news) {
    return explainedDiff("Cluster", CLUSTER_DIFF, id, news, clusterChanges(olds, news), false);
  },
  create: install,
  async update(_id, _olds, news) {
    return { outs: (await install(news)).outs };
  },
  async read(_id, props) {
    const kc = loadKubeconfig(props!.kubeconfig, `Cluster "${props!.name}": kubeconfig`);
    const identity = await getClusterIdentity(kc);
    if (!identity) return { id: "", props: {} as ClusterOutputs };
    return {
      id: identity.clusterId,
      props: { ...props!, clusterId: identity.clusterId, apiServerUrl: identity.apiServerUrl },
    };
  },
  async delete(_id, props) {
    const kc = loadKubeconfig(props.kubeconfig, `Cluster "${props.name}": kubeconfig`);
    const holder = await getInstallOwner(kc);
    const owner = ownUrnOf(props);
    if (holder && owner && holder !== owner) {
      // Recorded before a second Cluster on one cluster was refused: uninstalling would take the other's install.
      process.stderr.write(
        `cluster: Cluster "${props.name}" forgotten without uninstalling: the install at ${serverOf(kc)} belongs to Cluster ${describeOwner(holder)}\n`,
      );
      return;
    }
    const users = await getPeeringsUsing(kc);
    if (users.length > 0 && !props.force) {
      throw new Error(
        `Cluster "${props.name}" (${serverOf(kc)}) is still used by: ${users.join("; ")}. Delete those peerings first, or set force: true to uninstall anyway.`,
      );
    }
    await uninstallCluster(kc, { timeoutMs: (props.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000 });
    await deleteAgentClusterRbac(kc);
  },
};
