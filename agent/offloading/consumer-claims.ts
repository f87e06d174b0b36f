/**
 * The consumer's side of volumes that follow their pods (core/offloading/claim-reflection.ts): in
 * each namespace offloaded through a peering, a claim of class `pulumi-liqo` whose first pod the
 * scheduler put on the peering's virtual node is asked for on its provider (a ReflectedClaim in the
 * tenant namespace, with the identity the peering issued); once the provider holds it, this agent
 * binds the claim to a volume of its own making, tied to that virtual node, and the scheduler
 * lets the pod go there. A claim that cannot be served there (refused by the provider, of another
 * class, asking for a data source) gives its waiting pods a condition and the claim an event that
 * say why. A claim deleted, or its namespace withdrawn, withdraws the request, and the provider
 * deletes its claim; the volume made here goes once its claim has.
 *
 * This agent may read claims only in offloaded namespaces (REFLECTOR_ROLE), and makes and deletes
 * only volumes of its own label.
 */
import * as k8s from "@kubernetes/client-node";
import { isDeepStrictEqual } from "node:util";
import {
  API_GROUP_VERSION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  OFFLOADED_STORAGE_CLASS,
  tenantRequestName,
  VOLUME_VIRTUAL_NODE_LABEL,
  type NamespaceOffloading,
  type ReflectedClaim,
} from "../../core/api/index.js";
import { deleteOptional, describeFailure, ensureObject, isNotFound, serverOf } from "../../core/kube/client.js";
import {
  claimRequestOf,
  type ClaimRequest,
  claimsOf,
  forgeOffloadedVolume,
  SELECTED_NODE_ANNOTATION,
  VOLUME_CLAIM_UID_LABEL,
} from "../../core/offloading/claim-reflection.js";
import { httpStatusOf } from "../../core/kube/errors.js";
import { deleteOffloading, listOffloading } from "../../core/offloading/objects.js";
import type { Refusal } from "../../core/offloading/pod-policy.js";
import { refusedPodStatus } from "../../core/offloading/reflection.js";
import type { Reporter } from "../reporter.js";
import { offloadedNamespaces, recordEvent, type PeeringReach } from "./consumer-pods.js";

const STEP = "offloading (consumer claims)";

/** The refusals already shown on a claim, by claim uid: each is shown once, not at every pass. */
const shownRefusals = new Map<string, string>();

/**
 * What to ask the provider behind `virtualNode` for `claim`, whose first pod went there, or why it
 * cannot be served there: only claims of the offloaded class are, and only as new, empty volumes.
 */
function askedClaim(claim: k8s.V1PersistentVolumeClaim, virtualNode: string): ClaimRequest | Refusal {
  const where = `PersistentVolumeClaim ${claim.metadata?.namespace}/${claim.metadata?.name}`;
  if (claim.spec?.storageClassName !== OFFLOADED_STORAGE_CLASS)
    return {
      reason: "ClaimNotServed",
      message:
        `${where} is of storage class ${claim.spec?.storageClassName ?? "(none)"}; a pod on virtual node ${virtualNode} ` +
        `can use claims of class ${OFFLOADED_STORAGE_CLASS} only, which its provider holds`,
    };
  return claimRequestOf(claim);
}

/**
 * One pass over the claims of the namespaces offloaded through one peering; resolves whether a
 * claim still waits on the provider.
 */
export async function reflectPeeringClaims(
  kc: k8s.KubeConfig,
  reach: PeeringReach,
  offloadings: readonly NamespaceOffloading[],
  reporter: Reporter,
): Promise<boolean> {
  const { peering, provider } = reach;
  const tenant = peering.spec.tenantNamespace;
  const virtualNode = peering.spec.virtualNodeName;
  // A provider whose Cluster predates volumes across peerings has no such kind, or has it and grants
  // the tenant no rights on it until its Cluster is updated: its claims are refused here, saying so,
  // and the rest of the peering goes on.
  const requests = await listOffloading<ReflectedClaim>(provider, "reflectedclaims", tenant).catch((error: unknown) => {
    if (httpStatusOf(error) === 403) return undefined;
    throw error;
  });
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const existing = new Map((requests ?? []).map((r) => [r.metadata.name!, r]));
  const wanted = new Set<string>();
  const liveClaims = new Set<string>();
  let pending = false;
  for (const [namespace, remoteNamespace] of offloadedNamespaces(offloadings, virtualNode)) {
    const claims = await core
      .listNamespacedPersistentVolumeClaim({ namespace })
      .catch(describeFailure(`${STEP}: listing the claims of ${namespace}`, serverOf(kc)));
    for (const claim of claims.items) {
      liveClaims.add(claim.metadata!.uid!);
      if (claim.metadata?.annotations?.[SELECTED_NODE_ANNOTATION] !== virtualNode) continue;
      if (claim.metadata.deletionTimestamp) continue;
      const request = askedClaim(claim, virtualNode);
      if ("reason" in request || !requests) {
        const refusal = "reason" in request ? request : noClaimsThere(peering.spec.providerClusterId);
        await showRefusal(kc, claim, refusal, reporter);
        continue;
      }
      const name = tenantRequestName(remoteNamespace, request.name);
      wanted.add(name);
      const current = existing.get(name);
      // Compared by value: the API server keeps an object's keys in an order of its own.
      if (!current || !isDeepStrictEqual(current.spec.claim, request)) {
        const object: ReflectedClaim = {
          apiVersion: API_GROUP_VERSION,
          kind: "ReflectedClaim",
          metadata: { name, namespace: tenant },
          spec: { namespace: remoteNamespace, claim: request },
        };
        await ensureObject(provider, object).catch(
          describeFailure(`${STEP}: asking for claim ${namespace}/${request.name}`, serverOf(provider)),
        );
        pending = true;
        continue;
      }
      const answer = current.status;
      if (answer?.observedGeneration !== (current.metadata.generation ?? 1) || !answer?.phase) {
        pending = true;
        continue;
      }
      if (answer.phase === "Refused") {
        await showRefusal(kc, claim, { reason: answer.reason ?? "Refused", message: answer.message ?? "" }, reporter);
        continue;
      }
      if (!claim.spec?.volumeName) {
        await ensureObject(kc, forgeOffloadedVolume(claim, virtualNode)).catch(
          describeFailure(`${STEP}: making the volume of claim ${namespace}/${request.name}`, serverOf(kc)),
        );
        shownRefusals.delete(claim.metadata.uid!);
        reporter.info(`${STEP}: claim ${namespace}/${request.name} held by ${peering.spec.providerClusterId}`);
      }
    }
  }
  // Requests no claim stands for any more: withdrawn, and the provider deletes its claim.
  for (const name of existing.keys()) {
    if (wanted.has(name)) continue;
    await deleteOffloading(provider, "reflectedclaims", tenant, name);
  }
  await removeVolumesLeft(kc, virtualNode, liveClaims);
  return pending;
}

/** A provider whose Cluster predates volumes across peerings. */
const noClaimsThere = (provider: string): Refusal => ({
  reason: "ClaimNotServed",
  message: `provider ${provider} holds no claims for consumers yet (its Cluster predates them: update it)`,
});

/**
 * Deletes the volumes made here for claims of `virtualNode` whose claim is gone (released), or no
 * longer in a namespace offloaded there (`liveClaims`: the uids of those that are): the data they
 * stood for is gone from the provider. A volume still bound to its claim goes once that claim does
 * (the API server's protection).
 */
async function removeVolumesLeft(
  kc: k8s.KubeConfig,
  virtualNode: string,
  liveClaims: ReadonlySet<string>,
): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const volumes = await core
    .listPersistentVolume({
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY},${VOLUME_VIRTUAL_NODE_LABEL}=${virtualNode}`,
    })
    .catch(describeFailure(`${STEP}: listing the volumes made for ${virtualNode}`, serverOf(kc)));
  for (const volume of volumes.items) {
    if (volume.metadata?.deletionTimestamp) continue;
    const claimUid = volume.metadata?.labels?.[VOLUME_CLAIM_UID_LABEL] ?? "";
    const released = volume.status?.phase === "Released" || volume.status?.phase === "Failed";
    if (!released && liveClaims.has(claimUid)) continue;
    await deleteOptional(() => core.deletePersistentVolume({ name: volume.metadata!.name! })).catch(
      describeFailure(`${STEP}: deleting PersistentVolume ${volume.metadata!.name}`, serverOf(kc)),
    );
  }
}

/**
 * Shows why `claim` is not served: a Warning event on it, and the condition on each pod waiting on
 * it (not yet on a node), once per reason.
 */
async function showRefusal(
  kc: k8s.KubeConfig,
  claim: k8s.V1PersistentVolumeClaim,
  refusal: Refusal,
  reporter: Reporter,
): Promise<void> {
  const { name, namespace, uid } = claim.metadata!;
  const shown = `${refusal.reason}: ${refusal.message}`;
  if (shownRefusals.get(uid!) === shown) return;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await recordEvent(kc, { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: claim.metadata }, refusal);
  const pods = await core
    .listNamespacedPod({ namespace: namespace! })
    .catch(describeFailure(`${STEP}: listing the pods of ${namespace}`, serverOf(kc)));
  for (const pod of pods.items) {
    if (pod.spec?.nodeName || !claimsOf(pod.spec?.volumes).includes(name!)) continue;
    await core
      .patchNamespacedPodStatus(
        {
          name: pod.metadata!.name!,
          namespace: namespace!,
          body: { metadata: { uid: pod.metadata!.uid }, status: refusedPodStatus(refusal) },
        },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.StrategicMergePatch),
      )
      .catch((error: unknown) => {
        if (isNotFound(error)) return; // Gone meanwhile.
        return describeFailure(
          `${STEP}: writing the status of Pod ${namespace}/${pod.metadata!.name}`,
          serverOf(kc),
        )(error);
      });
  }
  shownRefusals.set(uid!, shown);
  reporter.warn(`${STEP}: claim ${namespace}/${name} not served: ${shown}`);
}
