/**
 * The provider's side of volumes that follow their pods: each pass relists every tenant's
 * ReflectedClaims and answers them. A request counts only in a live tenant namespace, for a remote
 * namespace this agent made for that tenant's consumer, under the one name its claim gives it; its
 * claim must pass `refuseClaimRequest` (a size, access modes this cluster's storage for consumers
 * serves). Then the claim is made in the remote namespace, of that storage class, with nothing else
 * of the request's (core/offloading/claim-reflection.ts). A claim made here that no accepted
 * request stands for any more is deleted, and its volume with it as its class's reclaim policy
 * says; a claim of that name that is not this project's is never touched.
 */
import * as k8s from "@kubernetes/client-node";
import type { ReflectedClaim } from "../../core/api/index.js";
import { deleteOptional, describeFailure, ensureObject, readOptional, serverOf } from "../../core/kube/client.js";
import {
  forgeHeldClaim,
  isHeldClaimOf,
  offeredStorageOf,
  refuseClaimRequest,
  type ClaimRequest,
} from "../../core/offloading/claim-reflection.js";
import { listOffloading, writeOffloadingStatus } from "../../core/offloading/objects.js";
import { reflectedLabels } from "../../core/offloading/service-reflection.js";
import type { Refusal } from "../../core/offloading/pod-policy.js";
import type { Reporter } from "../reporter.js";
import { byAge, sameAnswer } from "./provider-side.js";
import { consumerNamespaces, refuseTarget } from "./provider-services.js";

const STEP = "offloading (provider claims)";

/** One pass of the provider's side of claims; resolves how many objects it made, changed or removed. */
export async function answerClaimRequests(kc: k8s.KubeConfig, reporter: Reporter): Promise<number> {
  const requests = await listOffloading<ReflectedClaim>(kc, "reflectedclaims");
  if (!requests) return 0;
  const endpoint = serverOf(kc);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const { tenants, byName, remoteNamespaces } = await consumerNamespaces(kc, STEP);
  if (requests.length === 0 && remoteNamespaces.length === 0) return 0;
  const classes = await kc
    .makeApiClient(k8s.StorageV1Api)
    .listStorageClass()
    .catch(describeFailure(`${STEP}: listing the storage classes`, endpoint));
  const offered = offeredStorageOf(classes.items);
  let changes = 0;
  const kept = new Set<string>();
  for (const request of [...requests].sort(byAge)) {
    const consumer = tenants.get(request.metadata.namespace ?? "");
    if (!consumer || request.metadata.deletionTimestamp) continue;
    const claimName = (request.spec.claim as { name?: unknown } | null)?.name;
    const where = `${request.spec.namespace}/${String(claimName)}`;
    let refusal: Refusal | undefined =
      refuseTarget(request, claimName, "PersistentVolumeClaim", consumer, byName) ??
      refuseClaimRequest(request.spec.claim, offered);
    if (!refusal) {
      const claim = request.spec.claim as ClaimRequest;
      refusal = await holdClaim(kc, claim, request.spec.namespace, consumer, offered!.storageClass).catch(
        describeFailure(`${STEP}: applying PersistentVolumeClaim ${where} for consumer ${consumer}`, endpoint),
      );
      if (!refusal) kept.add(`${request.spec.namespace}/${claim.name}`);
    }
    const generation = request.metadata.generation ?? 1;
    const answer = refusal ? { phase: "Refused" as const, ...refusal } : { phase: "Accepted" as const };
    if (sameAnswer(request.status, { ...answer, observedGeneration: generation })) continue;
    await writeOffloadingStatus(kc, "reflectedclaims", request, {
      reason: null,
      message: null,
      ...answer,
      observedGeneration: generation,
    });
    if (refusal)
      reporter.warn(`${STEP}: refused claim ${where} of consumer ${consumer}: ${refusal.reason}: ${refusal.message}`);
    else reporter.info(`${STEP}: holding claim ${where} for consumer ${consumer}`);
    changes += 1;
  }
  // What no accepted request stands for any more: its claim (and, by its class's policy, its volume).
  for (const { namespace, consumer } of remoteNamespaces) {
    const labelSelector = Object.entries(reflectedLabels(consumer))
      .map(([key, value]) => `${key}=${value}`)
      .join(",");
    const claims = await core
      .listNamespacedPersistentVolumeClaim({ namespace, labelSelector })
      .catch(describeFailure(`${STEP}: listing the claims made in ${namespace}`, endpoint));
    for (const { metadata } of claims.items) {
      if (kept.has(`${namespace}/${metadata!.name}`) || metadata?.deletionTimestamp) continue;
      await deleteOptional(() =>
        core.deleteNamespacedPersistentVolumeClaim({ name: metadata!.name!, namespace }),
      ).catch(describeFailure(`${STEP}: deleting PersistentVolumeClaim ${namespace}/${metadata!.name}`, endpoint));
      reporter.info(`${STEP}: removed claim ${namespace}/${metadata!.name}: no accepted request stands for it`);
      changes += 1;
    }
  }
  return changes;
}

/**
 * Makes the claim of an accepted request, once (a claim's spec does not change once made); resolves a
 * refusal instead when a claim of that name is someone else's.
 */
async function holdClaim(
  kc: k8s.KubeConfig,
  request: ClaimRequest,
  namespace: string,
  consumer: string,
  storageClass: string,
): Promise<Refusal | undefined> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const existing = await readOptional(() =>
    core.readNamespacedPersistentVolumeClaim({ name: request.name, namespace }),
  );
  if (existing && !isHeldClaimOf(existing, consumer))
    return {
      reason: "NameTaken",
      message: `PersistentVolumeClaim ${namespace}/${request.name} exists and is not this consumer's`,
    };
  if (!existing) await ensureObject(kc, forgeHeldClaim(request, namespace, consumer, storageClass));
  return undefined;
}
