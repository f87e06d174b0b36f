/**
 * A `Cluster`'s install as steps in order: what its resource's create, read and delete run. Every
 * step is idempotent, so an install that stopped half-way is finished by running it again.
 */
import type * as k8s from "@kubernetes/client-node";
import { API_GROUP, describeOwner, MANAGED_BY, MANAGED_BY_LABEL, SYSTEM_NAMESPACE } from "../api/names.js";
import { lookBeforeDelete } from "../operation/cluster-look.js";
import { describeFailure, loadKubeconfig, probeApiServer, serverOf } from "../kube/client.js";
import { readServerVersion } from "../kube/server-version.js";
import {
  placementMechanismFor,
  releaseOf,
  releaseRefusal,
  type KubernetesRelease,
  type PlacementMechanism,
} from "./kubernetes-release.js";
import { getPeeringsUsing } from "./peerings-using.js";
import { waitForProjectKindsCounted } from "../authentication/tenant-quota.js";
import { reconcileTenants } from "../authentication/tenant.js";
import { readRunningAgent, waitForAgent } from "./agent.js";
import {
  decideClusterCidrs,
  describeUndetected,
  needsDetection,
  nodesOutside,
  nodesOutsideWarning,
  podCidrWarning,
  type ClusterCidrs,
  type GivenCidrs,
  type NetworkFacts,
} from "./cidr-detection.js";
import { getNetworkFacts, getNodeRanges } from "./cidr-facts.js";
import { NOTHING_DECLARED } from "./declared-networks.js";
import { deleteAgentClusterObjects, ensureAgentDeployment, readAgentDeployment } from "./agent-deployment.js";
import { ensureRemoteNamespaceGuard } from "./remote-namespace-guard.js";
import type { Progress } from "../operation/progress.js";
import { startDeadline } from "../wait/deadline.js";
import { rolledOutAgentPods, waitForAgentRollout } from "./agent-rollout.js";
import { servicesToReadBack } from "./exposure-plan.js";
import { waitForExposedHosts } from "./load-balancer.js";
import {
  checkInstallOwner,
  ensureAuthServiceTls,
  ensureClusterIdentity,
  ensureCustomResourceDefinitions,
  ensurePlacementWebhook,
  ensureSystemNamespace,
  getAuthServiceCa,
  getClusterIdentity,
  getInstallOwner,
  type ClusterIdentity,
  uninstallCluster,
} from "./install.js";
import {
  agentDeploymentOf,
  clusterEndpointsOf,
  removalOf,
  type ClusterEndpoints,
  type ClusterInstallRequest,
  type DeployedAgent,
} from "./install-plan.js";

/** What an install made. */
export interface InstalledCluster extends ClusterEndpoints, ClusterCidrs {
  readonly clusterId: string;
  /** PEM of the CA of the auth service's serving certificate. */
  readonly authCaCert: string;
  /** The nodes, as `name range`, whose pod range is outside the pod CIDR (their pods are not routed across peerings). */
  readonly nodesOutsidePodCidr: readonly string[];
  /** The Kubernetes version the API server reports, e.g. `v1.37.2`. */
  readonly kubernetesVersion: string;
  /** How the API server places the pods of offloaded namespaces (by its release). */
  readonly podPlacement: PlacementMechanism;
  /** The build the cluster's agent says it runs, `<version>-<build>` (`unknown` from an agent that says none). */
  readonly agentVersion: string;
  /** The digest of the image the agent's pod runs, as its node's runtime reports it (`unknown` when it gives none). */
  readonly agentImageDigest: string;
}

/** An install that stopped after the cluster's identity was made: `made` is what stands (no auth CA yet). */
export interface InstallStopped extends Error {
  readonly made: Omit<
    InstalledCluster,
    "authCaCert" | "nodesOutsidePodCidr" | "kubernetesVersion" | "podPlacement" | "agentVersion" | "agentImageDigest"
  >;
}

/** What an install that stopped half-way made, or undefined when `error` is not such a stop. */
export function madeBefore(error: unknown): InstallStopped["made"] | undefined {
  return (error as Partial<InstallStopped> | undefined)?.made;
}

/**
 * The pod and service CIDRs the cluster of `kc` announces: those `given`, the others read from the
 * cluster. Throws naming each input to set when one cannot be detected; reads nothing when both are given.
 */
export async function resolveClusterCidrs(
  kc: k8s.KubeConfig,
  cluster: string,
  given: GivenCidrs,
): Promise<ClusterCidrs> {
  const facts = needsDetection(given) ? await getNetworkFacts(kc) : NO_FACTS;
  const decision = decideClusterCidrs(given, facts);
  if (!decision.ok) throw new Error(describeUndetected(`${cluster} (${serverOf(kc)})`, decision.undetected));
  return decision.cidrs;
}
const NO_FACTS: NetworkFacts = {
  controllerManagers: [],
  apiServers: [],
  serviceCidrs: [],
  nodes: [],
  declared: NOTHING_DECLARED,
};

/** An input `check` fails at preview, and why. */
export interface PreviewRefusal {
  /** The input's name, e.g. `kubeconfig` or `podCidr`. */
  readonly input: string;
  readonly reason: string;
}

/**
 * At preview: what the cluster already shows would stop the install, for `check` to report against
 * the input it concerns: a Kubernetes release outside the supported window (`kubeconfig`), and the
 * CIDRs left out that the cluster cannot show. A cluster that cannot be read now (not up yet, out of
 * reach) says nothing here; create reads it again.
 */
export async function previewRefusals(
  kubeconfig: string,
  kubeconfigInput: string,
  given: GivenCidrs,
): Promise<readonly PreviewRefusal[]> {
  const kc = loadKubeconfig(kubeconfig, kubeconfigInput);
  // One short look first: a preview does not wait out a connection timeout for a cluster not up yet.
  if ((await probeApiServer(kc)) !== undefined) return [];
  const release = await readServerVersion(kc).then(releaseRefusal, () => undefined);
  if (release) return [{ input: "kubeconfig", reason: `the cluster at ${serverOf(kc)}: ${release}` }];
  if (!needsDetection(given)) return [];
  let facts: NetworkFacts;
  try {
    facts = await getNetworkFacts(kc);
  } catch {
    return [];
  }
  const decision = decideClusterCidrs(given, facts);
  return decision.ok ? [] : decision.undetected;
}

/**
 * The cluster's Kubernetes release; stops an install, before it writes anything, on a cluster whose
 * release is outside the window.
 */
async function checkKubernetesRelease(kc: k8s.KubeConfig, kubeconfigInput: string): Promise<KubernetesRelease> {
  const endpoint = serverOf(kc);
  const version = await readServerVersion(kc).catch(
    describeFailure("cluster: reading the Kubernetes version", endpoint),
  );
  const refusal = releaseRefusal(version);
  if (refusal) throw new Error(`cluster: ${kubeconfigInput} at ${endpoint}: ${refusal}`);
  return releaseOf(version)!;
}

/** Installs (or converges) the cluster `request` names; throws an {@link InstallStopped} once its identity stands. */
export async function installCluster(
  request: ClusterInstallRequest,
  progress: Progress = { step: () => undefined },
): Promise<InstalledCluster> {
  const kc = loadKubeconfig(request.kubeconfig, request.kubeconfigInput);
  const endpoints = clusterEndpointsOf(request, serverOf(kc));
  const caPem = Buffer.from(kc.getCurrentCluster()!.caData ?? "", "base64").toString("utf8");
  const timeoutMs = request.timeoutMs;
  // Before anything is written: another Cluster resource's install is not this one's to adopt, and
  // a CIDR that can be neither given nor detected stops the install with nothing made.
  const readBack = servicesToReadBack(request);
  const release = await checkKubernetesRelease(kc, request.kubeconfigInput);
  await checkInstallOwner(kc, request.owner, request.takenFrom);
  const cidrs = await resolveClusterCidrs(kc, request.name, request);
  await ensureSystemNamespace(kc);
  const podPlacement = placementMechanismFor(release);
  if (podPlacement === "MutatingWebhook") await ensurePlacementWebhook(kc);
  await ensureCustomResourceDefinitions(kc, { timeoutMs });
  await ensureRemoteNamespaceGuard(kc, "cluster install");
  // The consumers this cluster provides for get this release's rights, as a new tenant would.
  await reconcileTenants(kc, "cluster install");
  const gatewayReadBack = readBack.some((service) => service.endpoint === "gateway");
  const identity = {
    clusterName: request.name,
    apiServerUrl: endpoints.apiServerUrl,
    apiServerCaPem: caPem,
    podCidr: cidrs.podCidr,
    serviceCidr: cidrs.serviceCidr,
    ...(request.externalCidr ? { externalCidr: request.externalCidr } : {}),
    ...(request.owner ? { owner: request.owner } : {}),
    ...(request.takenFrom ? { takenFrom: request.takenFrom } : {}),
  };
  // The gateway announces the endpoint recorded here when it serves a tunnel: one only guessed
  // before its load balancer answered is not recorded (nor announced) until it is read back.
  const { clusterId } = await ensureClusterIdentity(kc, {
    ...identity,
    ...(gatewayReadBack ? {} : { gatewayEndpoint: endpoints.gatewayEndpoint }),
  });
  // A create stopped before the load balancers answered records no endpoint it only guessed.
  const unread = {
    ...(readBack.some((service) => service.endpoint === "auth") ? { authUrl: "" } : {}),
    ...(gatewayReadBack ? { gatewayEndpoint: "" } : {}),
  };
  const made = { ...endpoints, ...unread, ...cidrs, clusterId };
  try {
    // With an image, the agent is deployed here and rolled out; without one, an agent must already run
    // (`--host-agent` labs), and the wait stops within seconds when the cluster shows none. Under
    // `LoadBalancer` exposure the endpoints are where the load balancers put the agent's Services
    // (under `NodePort` with no port fixed, on the ports the cluster picked), read back before the
    // auth service's certificate is made for that address (the agent reads its certificate from
    // the API, and waits for it).
    const image = request.agent?.image;
    const balanced = readBack.filter((service) => service.reads === "address");
    if (image && readBack.length > 0) await ensureAgentDeployment(kc, agentDeploymentOf(request, image));
    if (balanced.length > 0) {
      const services = balanced.map((service) => `${SYSTEM_NAMESPACE}/${service.name}`).join(" and ");
      // The row shows the waits on the cluster's load balancers, which answer or not outside the
      // project's control; an install on addresses it was given runs quietly, as it always has.
      progress.step(1, 2, `cluster: waiting for the load balancer's address of Service ${services}`);
    }
    const reached =
      readBack.length > 0
        ? clusterEndpointsOf(request, serverOf(kc), await waitForExposedHosts(kc, readBack, startDeadline(timeoutMs)))
        : endpoints;
    if (gatewayReadBack) await ensureClusterIdentity(kc, { ...identity, gatewayEndpoint: reached.gatewayEndpoint });
    const { caPem: authCaCert, certPem } = await ensureAuthServiceTls(kc, { hosts: [reached.authHost] });
    if (image && readBack.length === 0) await ensureAgentDeployment(kc, agentDeploymentOf(request, image));
    if (balanced.length > 0) progress.step(2, 2, `cluster: waiting for the agent to serve in ${serverOf(kc)}`);
    if (image) await waitForAgentRollout(kc, timeoutMs);
    const holders = image ? await rolledOutAgentPods(kc) : [];
    const agentVersion = await waitForAgent(kc, certPem, { timeoutMs, mustAlreadyRun: !request.agent?.image, holders });
    const { imageDigest: agentImageDigest } = await readRunningAgent(kc);
    // Once this quota is counted the quota controller knows the project's kinds, so each tenant's
    // quota is counted as soon as the auth service makes it (see tenant-quota.ts).
    await waitForProjectKindsCounted(kc, "cluster install", timeoutMs);
    const nodesOutsidePodCidr = nodesOutside(cidrs.podCidr, await getNodeRanges(kc));
    return {
      ...made,
      ...reached,
      authCaCert,
      nodesOutsidePodCidr,
      kubernetesVersion: release.text,
      podPlacement,
      agentVersion,
      agentImageDigest,
    };
  } catch (error) {
    throw Object.assign(error instanceof Error ? error : new Error(String(error)), { made });
  }
}

/**
 * What a `Cluster`'s row warns of after an install or a refresh: a pod CIDR guessed from the nodes,
 * and nodes whose pod range it does not hold.
 */
export function cidrWarnings(
  cluster: string,
  found: Pick<InstalledCluster, "podCidr" | "nodesOutsidePodCidr"> & Partial<Pick<InstalledCluster, "detectedFrom">>,
): string[] {
  return [
    podCidrWarning(cluster, found.detectedFrom),
    nodesOutsideWarning(cluster, found.podCidr, found.nodesOutsidePodCidr),
  ].filter((warning): warning is string => warning !== undefined);
}

/** The install's identity as the cluster holds it, or undefined when it is not installed. */
export async function readInstall(
  kubeconfig: string,
  kubeconfigInput: string,
): Promise<
  | {
      clusterId: string;
      apiServerUrl: string;
      nodesOutsidePodCidr: string[];
      agentVersion: string;
      agentImageDigest: string;
    }
  | undefined
> {
  const kc = loadKubeconfig(kubeconfig, kubeconfigInput);
  const identity = await getClusterIdentity(kc);
  if (!identity) return undefined;
  // A node added since the install whose range the recorded pod CIDR does not hold: drift a refresh shows.
  const nodesOutsidePodCidr = identity.podCidr ? nodesOutside(identity.podCidr, await getNodeRanges(kc)) : [];
  // What runs now: an agent rolled since the last up (by hand, or by another stack) shows here.
  const agent = await readRunningAgent(kc);
  return {
    clusterId: identity.clusterId,
    apiServerUrl: identity.apiServerUrl,
    nodesOutsidePodCidr,
    agentVersion: agent.build,
    agentImageDigest: agent.imageDigest,
  };
}

/** What an import finds of an install: everything its `Cluster` resource's inputs and outputs come from. */
export interface InstallFound {
  /** The API server the kubeconfig reaches (the endpoint of every read). */
  readonly server: string;
  readonly identity: ClusterIdentity;
  /** The URN of the `Cluster` resource that installed it, when recorded. */
  readonly owner?: string;
  /** The auth service's CA certificate (public). */
  readonly authCaCert?: string;
  readonly deployed: DeployedAgent;
}

/** Everything an import reads of the install (nothing is written), or undefined when the cluster has none. */
export async function readInstallForImport(
  kubeconfig: string,
  kubeconfigInput: string,
): Promise<InstallFound | undefined> {
  const kc = loadKubeconfig(kubeconfig, kubeconfigInput);
  const identity = await getClusterIdentity(kc);
  if (!identity) return undefined;
  const [owner, authCaCert, deployed] = await Promise.all([
    getInstallOwner(kc),
    getAuthServiceCa(kc),
    readAgentDeployment(kc),
  ]);
  return {
    server: serverOf(kc),
    identity,
    deployed,
    ...(owner ? { owner } : {}),
    ...(authCaCert ? { authCaCert } : {}),
  };
}

/** What {@link removeCluster} is asked. */
export interface ClusterRemoval {
  /** The resource's name, for errors. */
  readonly name: string;
  readonly kubeconfig: string;
  readonly kubeconfigInput: string;
  /** The URN of the resource being deleted, when known. */
  readonly owner?: string;
  /** The URN of the resource whose install `owner` took over by an import, if it did. */
  readonly takenFrom?: string;
  /** Uninstall even while peerings use the cluster. */
  readonly force: boolean;
  readonly timeoutMs: number;
  /** Keep the CRDs, for a cluster installed again at once (see `UninstallOptions`). */
  readonly keepDefinitions?: boolean;
}

/** What {@link removeCluster} did besides uninstalling. */
export interface ClusterRemovalOutcome {
  /** Set when the install is another Cluster resource's: whose, for the user. Nothing was touched. */
  readonly forgotten?: string;
  /** Set when the cluster was out of reach and `force` let the resource go: where, and what stays there. */
  readonly left?: { readonly endpoint: string; readonly items: readonly string[] };
}

/** What an install leaves in a cluster that a forced delete could not reach. Pure. */
export function installLeftOnCluster(): string[] {
  return [
    `namespace ${SYSTEM_NAMESPACE}: the agent, the gateway, the route agents, the auth service and their Secrets ` +
      "(the cluster's identity, its CA, the gateway's WireGuard keys, the peering tokens' records)",
    `the namespaces labelled ${MANAGED_BY_LABEL}=${MANAGED_BY} (each peered consumer's tenant, with its identity's Role)`,
    `the CustomResourceDefinitions of ${API_GROUP} with their objects, and the cluster-wide RBAC, webhooks and CertificateSigningRequests of the install`,
  ];
}

/** How what {@link installLeftOnCluster} lists goes, should the cluster come back. */
export const INSTALL_LEFT_REMEDY =
  "If the cluster comes back, import its Cluster into a stack (pulumi import, with the cluster ID as the ID) and destroy it there to uninstall";

/**
 * Uninstalls the cluster, unless peerings still use it (an error that lists them) or the install
 * is another Cluster resource's: then nothing is touched, and what is returned says whose it is.
 * One short look at the cluster comes first: out of reach, it fails at once changing nothing,
 * unless `force`: then nothing is tried there and what stays is returned.
 */
export async function removeCluster(request: ClusterRemoval): Promise<ClusterRemovalOutcome> {
  const kc = loadKubeconfig(request.kubeconfig, request.kubeconfigInput);
  const gone = await lookBeforeDelete(kc, `uninstall of cluster ${request.name}`, "Cluster", request.force);
  if (gone) return { left: { endpoint: gone, items: installLeftOnCluster() } };
  const removal = removalOf({
    holder: await getInstallOwner(kc),
    owner: request.owner,
    ...(request.takenFrom ? { takenFrom: request.takenFrom } : {}),
    users: await getPeeringsUsing(kc),
    force: request.force,
  });
  if (removal.kind === "forget")
    return {
      forgotten: `the install at ${serverOf(kc)} belongs to Cluster ${describeOwner(removal.holder)}`,
    };
  if (removal.kind === "refuse")
    throw new Error(
      `uninstall: the cluster at ${serverOf(kc)} is still used by: ${removal.users.join("; ")}. ` +
        "Delete those peerings first, or set force: true to uninstall anyway.",
    );
  await uninstallCluster(kc, { timeoutMs: request.timeoutMs, keepDefinitions: request.keepDefinitions });
  await deleteAgentClusterObjects(kc);
  return {};
}
