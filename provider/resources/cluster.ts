/**
 * The `Cluster` resource's dynamic provider: translates inputs into the install steps and their
 * results into outputs. No protocol logic and no Kubernetes call of its own.
 */
import type * as pulumi from "@pulumi/pulumi";
import { ensureAuthServiceTls, ensureClusterIdentity, ensureCustomResourceDefinitions, ensureSystemNamespace, getClusterIdentity, uninstallCluster } from "../cluster/install.js";
import { waitForAgent } from "../cluster/agent.js";
import { deleteAgentClusterRbac, ensureAgentDeployment } from "../cluster/agent-deployment.js";
import { loadKubeconfig, serverOf } from "../kube/client.js";
import { getPeeringsUsing } from "../peering/outgoing.js";
import { changedProperties, checkCidr, checkKubeconfig, checkPort, checkSeconds, Failures, isUnknown } from "./inputs.js";
import { orPartial } from "./partial.js";

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
const DEFAULT_TIMEOUT_SECONDS = 300;

function check(_olds: ClusterInputs, inputs: ClusterInputs): Promise<pulumi.dynamic.CheckResult<ClusterInputs>> {
  const news = inputs as unknown as Record<string, unknown>;
  const failures = new Failures();
  const owner = `Cluster "${isUnknown(news["name"]) ? "?" : String(news["name"])}"`;
  if (!isUnknown(news["name"]) && !/^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/.test(String(news["name"] ?? ""))) failures.add("name", `${JSON.stringify(news["name"])} is not a DNS label of at most 32 characters`);
  checkKubeconfig(failures, "kubeconfig", news["kubeconfig"], owner);
  checkCidr(failures, "podCidr", news["podCidr"]);
  checkCidr(failures, "serviceCidr", news["serviceCidr"]);
  if (news["externalCidr"] !== undefined) checkCidr(failures, "externalCidr", news["externalCidr"]);
  checkPort(failures, "authService.port", (news["authService"] as ClusterInputs["authService"])?.port);
  checkPort(failures, "gateway.port", (news["gateway"] as ClusterInputs["gateway"])?.port);
  checkSeconds(failures, "timeoutSeconds", news["timeoutSeconds"]);
  const exposure = inputs.agent?.exposure;
  if (exposure !== undefined && !isUnknown(exposure) && exposure !== "LoadBalancer" && exposure !== "NodePort") failures.add("agent.exposure", `${JSON.stringify(exposure)} is not LoadBalancer or NodePort`);
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

  await ensureSystemNamespace(kc);
  await ensureCustomResourceDefinitions(kc, { timeoutMs });
  const { clusterId } = await ensureClusterIdentity(kc, {
    clusterName: inputs.name,
    apiServerUrl,
    apiServerCaPem: caPem,
    podCidr: inputs.podCidr,
    serviceCidr: inputs.serviceCidr,
    ...(inputs.externalCidr ? { externalCidr: inputs.externalCidr } : {}),
  });
  const partialOuts = { ...inputs, clusterId, apiServerUrl, authUrl, authCaCert: "", gatewayEndpoint };
  return orPartial(clusterId, partialOuts, async () => {
    const { caPem: authCaCert, certPem } = await ensureAuthServiceTls(kc, { hosts: [inputs.authService?.address ?? host] });
    // With an image, the agent is deployed here; without one, an agent already runs (local clusters).
    if (inputs.agent?.image) {
      await ensureAgentDeployment(kc, { image: inputs.agent.image, authPort: inputs.authService?.port ?? DEFAULT_AUTH_PORT, exposure: inputs.agent.exposure ?? "LoadBalancer" });
    }
    await waitForAgent(kc, certPem, timeoutMs);
    return { id: clusterId, outs: { ...partialOuts, authCaCert } };
  });
}

/** The `Cluster` dynamic provider's operations. */
export const provider: pulumi.dynamic.ResourceProvider<ClusterInputs, ClusterOutputs> = {
  check,
  async diff(_id, olds, news) {
    const changed = changedProperties(olds, news, ["name", "kubeconfig", "podCidr", "serviceCidr", "externalCidr", "authService", "gateway", "agent", "timeoutSeconds", "force"]);
    // Outputs hold the resolved URL: compare what the inputs resolve to, not the inputs as given.
    if (resolvedApiServerUrl(news) !== olds.apiServerUrl) changed.push("apiServerUrl");
    return { changes: changed.length > 0, replaces: [], deleteBeforeReplace: false };
  },
  create: install,
  async update(_id, _olds, news) {
    return { outs: (await install(news)).outs };
  },
  async read(_id, props) {
    const kc = loadKubeconfig(props!.kubeconfig, `Cluster "${props!.name}": kubeconfig`);
    const identity = await getClusterIdentity(kc);
    if (!identity) return { id: "", props: {} as ClusterOutputs };
    return { id: identity.clusterId, props: { ...props!, clusterId: identity.clusterId, apiServerUrl: identity.apiServerUrl } };
  },
  async delete(_id, props) {
    const kc = loadKubeconfig(props.kubeconfig, `Cluster "${props.name}": kubeconfig`);
    const users = await getPeeringsUsing(kc);
    if (users.length > 0 && !props.force) {
      throw new Error(`Cluster "${props.name}" (${serverOf(kc)}) is still used by: ${users.join("; ")}. Delete those peerings first, or set force: true to uninstall anyway.`);
    }
    await uninstallCluster(kc, { timeoutMs: (props.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000 });
    await deleteAgentClusterRbac(kc);
  },
};
