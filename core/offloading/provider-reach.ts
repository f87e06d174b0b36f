/**
 * The providers a namespace offloading needs, and one short look at each before an operation that
 * would otherwise wait out its deadline on one that is gone (as a peering's delete looks first:
 * ../operation/unreachable.ts). Out-of-band, the look is one TLS handshake with the provider's API
 * server at the address the peering's identity names; in-band that address lies inside the tunnel,
 * out of pulumi's reach, so the consumer's agent's last report of it is the look.
 */
import type * as k8s from "@kubernetes/client-node";
import type { OutgoingPeering } from "../api/crds.js";
import type { RemoteNamespaceReport } from "../api/offloading.js";
import { loadKubeconfig, probeApiServer, serverOf } from "../kube/client.js";
import { getIdentityKubeconfig } from "../authentication/stored-identity.js";
import { listOutgoingPeerings } from "../virtual-node/outgoing-peering.js";
import type { UnreachableProvider } from "../operation/unreachable.js";
import { REFLECTED_LABEL } from "./reflection.js";

/** A provider of an offloading that could not be reached, and where the offloading stands on it. */
export interface UnreachableOffloadingProvider extends UnreachableProvider {
  /** The virtual node of its peering. */
  readonly virtualNode: string;
  /** The consumer's tenant namespace on it, where its RemoteNamespace and OffloadedPods are. */
  readonly tenantNamespace: string;
}

/** Why one peering's provider cannot be reached, or undefined when it answers. */
async function lookAt(
  consumer: k8s.KubeConfig,
  peering: OutgoingPeering,
  report: RemoteNamespaceReport | undefined,
): Promise<Pick<UnreachableProvider, "endpoint" | "cause"> | undefined> {
  if (peering.spec.inBand) {
    return report?.phase === "Unreachable"
      ? { endpoint: "through the tunnel, as the consumer's agent last found", cause: report.message ?? "no answer" }
      : undefined;
  }
  const identity = await getIdentityKubeconfig(consumer, peering.spec.providerClusterId);
  if (!identity)
    return {
      endpoint: "through the peering's identity",
      cause: "the consumer holds no identity for it any more (its Peering was deleted or unpeered)",
    };
  const provider = loadKubeconfig(identity, "stored identity");
  const cause = await probeApiServer(provider);
  return cause ? { endpoint: `API server ${serverOf(provider)}`, cause } : undefined;
}

/**
 * Takes one short look, all at once, at the provider of each of `virtualNodes` (a virtual node
 * that no peering has any more needs none: its tenant went with the peering); resolves those that
 * cannot be reached, for step `step`. `reports` are the consumer's agent's last reports.
 */
export async function findUnreachableProviders(
  consumer: k8s.KubeConfig,
  virtualNodes: readonly string[],
  reports: readonly RemoteNamespaceReport[],
  step: string,
): Promise<UnreachableOffloadingProvider[]> {
  const wanted = new Set(virtualNodes);
  const peerings = (await listOutgoingPeerings(consumer)).filter(
    (p) => wanted.has(p.spec.virtualNodeName) && !p.metadata.deletionTimestamp,
  );
  const found = await Promise.all(
    peerings.map(async (peering): Promise<UnreachableOffloadingProvider | undefined> => {
      const virtualNode = peering.spec.virtualNodeName;
      const look = await lookAt(
        consumer,
        peering,
        reports.find((r) => r.virtualNode === virtualNode),
      );
      return look
        ? {
            step,
            providerName: peering.spec.providerClusterName,
            virtualNode,
            tenantNamespace: peering.spec.tenantNamespace,
            ...look,
          }
        : undefined;
    }),
  );
  return found.filter((f): f is UnreachableOffloadingProvider => f !== undefined);
}

/**
 * The virtual nodes of `virtualNodes` whose provider is not among `unreachable`: the ones a further
 * look (at the rights it grants) may be taken at without waiting on a provider that answers nothing. Pure.
 */
export function answeringNodes(
  virtualNodes: readonly string[],
  unreachable: readonly Pick<UnreachableOffloadingProvider, "virtualNode">[],
): string[] {
  return virtualNodes.filter((node) => !unreachable.some((u) => u.virtualNode === node));
}

/**
 * What a forced delete leaves on a provider it could not reach: the remote namespace with the
 * request for it, the ConfigMaps and Secrets reflected into it, and the pods offloaded there
 * (`pods`: the consumer's pods that were on its virtual node) with their requests. Pure.
 */
export function offloadingLeftOnProvider(
  gone: Pick<UnreachableOffloadingProvider, "tenantNamespace">,
  remoteNamespace: string,
  pods: readonly string[],
): string[] {
  return [
    `namespace ${remoteNamespace} and the RemoteNamespace ${gone.tenantNamespace}/${remoteNamespace} that asked for it`,
    `the ConfigMaps and Secrets reflected into ${remoteNamespace} (labelled ${REFLECTED_LABEL}=true)`,
    pods.length > 0
      ? `the pods offloaded there (${pods.join(", ")}) and their OffloadedPods in ${gone.tenantNamespace}`
      : `any pod offloaded there (none was on the virtual node here) and its OffloadedPod in ${gone.tenantNamespace}`,
  ];
}

/** How what a forced delete left on a provider goes, for remote namespace `remoteNamespace`. */
export function offloadingLeftRemedy(
  gone: Pick<UnreachableOffloadingProvider, "tenantNamespace">,
  remoteNamespace: string,
): string {
  return (
    `When the provider is back, deleting RemoteNamespace ${gone.tenantNamespace}/${remoteNamespace} there makes its agent ` +
    `remove the namespace and all in it (as does deleting the consumer's tenant namespace ${gone.tenantNamespace})`
  );
}
