/**
 * The consumer's side of offloaded namespaces: for each NamespaceOffloading, the consumer's agent
 * asks every provider it names (through the virtual node of the peering) for the remote namespace,
 * with the identity that peering issued, and reports each provider's answer in the
 * NamespaceOffloading's status. A NamespaceOffloading being deleted is drained first: its pods on
 * the virtual nodes are removed (consumer-pods.ts removes them on the provider), then its remote
 * namespaces, and only then does its finalizer go.
 */
import * as k8s from "@kubernetes/client-node";
import { isDeepStrictEqual } from "node:util";
import {
  abandonedVirtualNodes,
  API_GROUP,
  API_GROUP_VERSION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  type NamespaceOffloading,
  type OutgoingPeering,
  type RemoteNamespace,
  type RemoteNamespaceReport,
} from "../../core/api/index.js";
import { describeFailure, ensureObject, serverOf } from "../../core/kube/client.js";
import { statusOf } from "../../core/kube/errors.js";
import {
  deleteOffloading,
  readOffloading,
  setOffloadingFinalizer,
  writeOffloadingStatus,
} from "../../core/offloading/objects.js";
import { stopPlacingPods } from "../../core/offloading/pod-placement.js";
import type { Reporter } from "../reporter.js";

const STEP = "offloading (consumer)";

/** Offloadings being deleted whose pod placement this agent has removed (by uid). */
const placementStopped = new Set<string>();

/** Finalizer the consumer's agent keeps on a NamespaceOffloading until its remote namespaces are gone. */
export const OFFLOADING_FINALIZER = `${API_GROUP}/offloading`;

/** What the consumer side works from: its peerings, by virtual node, and a client for each provider. */
export interface ConsumerPeerings {
  /** The peering behind each virtual node. */
  readonly byVirtualNode: ReadonlyMap<string, OutgoingPeering>;
  /** The peering's identity on its provider (read lately, or afresh). */
  readonly identityOf: (peering: OutgoingPeering) => Promise<k8s.KubeConfig>;
  /**
   * While the peering's provider fails (the agent backs off from it), the report of a namespace
   * offloaded there; undefined when it may be called. Its namespaces are then left be.
   */
  readonly failing: (
    peering: OutgoingPeering,
    remoteNamespace: string,
  ) => Pick<RemoteNamespaceReport, "phase" | "message"> | undefined;
}

/**
 * Whether the peering's identity may still list pods in the remote namespace. The rights come with
 * the namespace (a RoleBinding in it), so a refusal means the namespace, or those rights, are gone
 * on the provider, even while the request still reads as accepted (say, its agent is not running).
 */
async function remoteNamespaceUsable(provider: k8s.KubeConfig, remoteNamespace: string): Promise<boolean> {
  try {
    await provider.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: remoteNamespace, limit: 1 });
    return true;
  } catch (error) {
    const code = statusOf(error);
    if (code === 403 || code === 404) return false;
    return describeFailure(`${STEP}: listing pods of namespace ${remoteNamespace}`, serverOf(provider))(error);
  }
}

/** The provider's answer to a RemoteNamespace, as a report line (`usable`: the namespace answered a read). */
function reportOf(
  virtualNode: string,
  peering: OutgoingPeering | undefined,
  remoteNamespace: string,
  request: RemoteNamespace | undefined,
  usable: boolean,
): RemoteNamespaceReport {
  const base = {
    virtualNode,
    remoteNamespace,
    ...(peering ? { providerClusterId: peering.spec.providerClusterId } : {}),
  };
  if (!peering) return { ...base, phase: "Pending", message: `no peering has virtual node ${virtualNode}` };
  const answer = request?.status;
  if (answer?.phase === "Accepted" && !usable) {
    return {
      ...base,
      phase: "Missing",
      message:
        `namespace ${remoteNamespace} is gone on provider ${peering.spec.providerClusterName}, or this peering's ` +
        `rights in it are: its agent makes it again when it runs`,
    };
  }
  if (answer?.phase === "Accepted") return { ...base, phase: "Ready" };
  if (answer?.phase === "Refused") return { ...base, phase: "Refused", message: `${answer.reason}: ${answer.message}` };
  return { ...base, phase: "Pending", message: `waiting for provider ${peering.spec.providerClusterName} to answer` };
}

/** Asks for (or reads) the RemoteNamespace on one provider; resolves it as the provider last answered. */
async function requestRemoteNamespace(
  provider: k8s.KubeConfig,
  peering: OutgoingPeering,
  offloading: NamespaceOffloading,
): Promise<RemoteNamespace> {
  const name = offloading.spec.remoteNamespace;
  const request: RemoteNamespace = {
    apiVersion: API_GROUP_VERSION,
    kind: "RemoteNamespace",
    metadata: { name, namespace: peering.spec.tenantNamespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
    spec: { consumerNamespace: offloading.metadata.namespace! },
  };
  return ensureObject(provider, request).catch(
    describeFailure(`${STEP}: applying RemoteNamespace ${peering.spec.tenantNamespace}/${name}`, serverOf(provider)),
  );
}

/** Whether a RemoteNamespace is gone from its provider (deleted there, and its namespace with it). */
async function remoteNamespaceGone(provider: k8s.KubeConfig, tenant: string, name: string): Promise<boolean> {
  const live = await readOffloading(provider, "remotenamespaces", tenant, name);
  return live === undefined;
}

/**
 * Advances one NamespaceOffloading: asks each provider for its remote namespace and reports, or,
 * once it is being deleted and `drained` (none of its pods left on a virtual node), removes the
 * remote namespaces and then its finalizer. Resolves whether something is still under way.
 */
export async function advanceNamespaceOffloading(
  kc: k8s.KubeConfig,
  offloading: NamespaceOffloading,
  peerings: ConsumerPeerings,
  drained: boolean,
  reporter: Reporter,
): Promise<boolean> {
  const where = `NamespaceOffloading ${offloading.metadata.namespace}/${offloading.metadata.name}`;
  const virtualNodes = offloading.spec.virtualNodes ?? [];
  if (offloading.metadata.deletionTimestamp) {
    if (!(offloading.metadata.finalizers ?? []).includes(OFFLOADING_FINALIZER)) return false;
    // However it is deleted (the resource, kubectl, the namespace going), pods made from now on
    // stay here: once per offloading, not on every pass of its drain.
    const uid = offloading.metadata.uid!;
    if (!placementStopped.has(uid)) {
      await stopPlacingPods(kc, { namespace: offloading.metadata.namespace! }, STEP);
      placementStopped.add(uid);
    }
    if (!drained) return true;
    // A forced delete gave these up: their providers could not be reached, and the namespace stays there.
    const abandoned = abandonedVirtualNodes(offloading.metadata);
    let gone = true;
    for (const virtualNode of virtualNodes) {
      const peering = peerings.byVirtualNode.get(virtualNode);
      if (!peering) continue; // No peering any more: its tenant, and the namespace with it, went with it.
      if (abandoned.has(virtualNode)) continue;
      if (peerings.failing(peering, offloading.spec.remoteNamespace)) {
        gone = false; // Backing off from its provider: a later pass tries again.
        continue;
      }
      const provider = await peerings.identityOf(peering);
      await deleteOffloading(
        provider,
        "remotenamespaces",
        peering.spec.tenantNamespace,
        offloading.spec.remoteNamespace,
      );
      gone =
        (await remoteNamespaceGone(provider, peering.spec.tenantNamespace, offloading.spec.remoteNamespace)) && gone;
    }
    if (!gone) return true;
    await setOffloadingFinalizer(kc, "namespaceoffloadings", offloading, OFFLOADING_FINALIZER, false);
    placementStopped.delete(offloading.metadata.uid!);
    reporter.info(`${STEP}: ${where}: remote namespaces removed`);
    return false;
  }
  await setOffloadingFinalizer(kc, "namespaceoffloadings", offloading, OFFLOADING_FINALIZER, true);
  const remotes: RemoteNamespaceReport[] = [];
  for (const virtualNode of virtualNodes) {
    const peering = peerings.byVirtualNode.get(virtualNode);
    const failing = peering && peerings.failing(peering, offloading.spec.remoteNamespace);
    if (failing) {
      remotes.push({
        virtualNode,
        remoteNamespace: offloading.spec.remoteNamespace,
        providerClusterId: peering.spec.providerClusterId,
        ...failing,
      });
      continue;
    }
    let request: RemoteNamespace | undefined;
    let usable = false;
    try {
      if (peering) {
        const provider = await peerings.identityOf(peering);
        request = await requestRemoteNamespace(provider, peering, offloading);
        usable =
          request.status?.phase === "Accepted" &&
          (await remoteNamespaceUsable(provider, offloading.spec.remoteNamespace));
      }
      remotes.push(reportOf(virtualNode, peering, offloading.spec.remoteNamespace, request, usable));
    } catch (error) {
      remotes.push({
        virtualNode,
        remoteNamespace: offloading.spec.remoteNamespace,
        ...(peering ? { providerClusterId: peering.spec.providerClusterId } : {}),
        phase: "Error",
        message: (error as Error).message,
      });
    }
  }
  // Peerings taken out of the set: their remote namespace goes (its pods were removed with
  // consumer-pods.ts); the report stays until it is gone.
  for (const report of offloading.status?.remotes ?? []) {
    if (virtualNodes.includes(report.virtualNode)) continue;
    const peering = peerings.byVirtualNode.get(report.virtualNode);
    if (!peering) continue;
    const failing = peerings.failing(peering, report.remoteNamespace);
    if (failing) {
      remotes.push({ ...report, ...failing });
      continue;
    }
    const provider = await peerings.identityOf(peering);
    await deleteOffloading(provider, "remotenamespaces", peering.spec.tenantNamespace, report.remoteNamespace);
    if (await remoteNamespaceGone(provider, peering.spec.tenantNamespace, report.remoteNamespace)) continue;
    remotes.push({
      ...report,
      phase: "Pending",
      message: "being removed: the peering was taken out of the offloading",
    });
  }
  const status = { observedGeneration: offloading.metadata.generation ?? 1, remotes };
  // The API server keeps an object's keys in its own order: compared by value, the status is written once per change.
  if (!isDeepStrictEqual(offloading.status ?? {}, status)) {
    await writeOffloadingStatus(kc, "namespaceoffloadings", offloading, status);
    for (const r of remotes.filter((r) => r.phase !== "Ready")) {
      reporter.info(`${STEP}: ${where}: ${r.virtualNode}: ${r.phase}${r.message ? `: ${r.message}` : ""}`);
    }
  }
  return remotes.some((r) => ["Pending", "Error", "Unreachable", "Forbidden"].includes(r.phase));
}
