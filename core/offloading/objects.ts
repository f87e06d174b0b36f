/**
 * Reading and answering the offloading custom resources (I/O only; what to answer is decided in
 * the pure modules beside this one).
 */
import * as k8s from "@kubernetes/client-node";
import { API_GROUP, API_VERSION } from "../api/names.js";
import type { OffloadingAnswer } from "../api/offloading.js";
import { deleteOptional, describeFailure, isNotFound, readOptional, serverOf } from "../kube/client.js";

/** The offloading kinds, by plural. */
export type OffloadingPlural =
  | "namespaceoffloadings"
  | "offloadingselectors"
  | "remotenamespaces"
  | "offloadedpods"
  | "reflectedservices"
  | "reflectedclaims";

/**
 * Every object of kind `plural` in `namespace` (all namespaces when omitted); undefined when the
 * kind is not installed there (the cluster's `Cluster` predates offloading, or is being removed).
 */
export async function listOffloading<T>(
  kc: k8s.KubeConfig,
  plural: OffloadingPlural | "resourceoffers",
  namespace?: string,
): Promise<T[] | undefined> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const where = `${plural}${namespace ? ` in ${namespace}` : ""}`;
  try {
    const result = (await (namespace
      ? api.listNamespacedCustomObject({ group: API_GROUP, version: API_VERSION, namespace, plural })
      : api.listClusterCustomObject({ group: API_GROUP, version: API_VERSION, plural }))) as { items: T[] };
    return result.items;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    return describeFailure(`offloading: listing ${where}`, serverOf(kc))(error);
  }
}

/** One offloading object, or undefined when there is none of that name. */
export async function readOffloading<T>(
  kc: k8s.KubeConfig,
  plural: OffloadingPlural,
  namespace: string,
  name: string,
): Promise<T | undefined> {
  return readOptional(
    () =>
      kc
        .makeApiClient(k8s.CustomObjectsApi)
        .getNamespacedCustomObject({ group: API_GROUP, version: API_VERSION, namespace, plural, name }) as Promise<T>,
  ).catch(describeFailure(`offloading: reading ${plural} ${namespace}/${name}`, serverOf(kc)));
}

/** Writes the answer of an offloading object (merge patch of its status subresource; a null field is removed). */
export async function writeOffloadingStatus(
  kc: k8s.KubeConfig,
  plural: OffloadingPlural,
  object: { readonly metadata: k8s.V1ObjectMeta },
  status: OffloadingAnswer | Record<string, unknown>,
): Promise<void> {
  const { namespace, name } = object.metadata;
  await kc
    .makeApiClient(k8s.CustomObjectsApi)
    .patchNamespacedCustomObjectStatus(
      { group: API_GROUP, version: API_VERSION, namespace: namespace!, plural, name: name!, body: { status } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )
    .catch(describeFailure(`offloading: writing the status of ${plural} ${namespace}/${name}`, serverOf(kc)));
}

/** Deletes an offloading object; resolves whether it existed. */
export async function deleteOffloading(
  kc: k8s.KubeConfig,
  plural: OffloadingPlural,
  namespace: string,
  name: string,
): Promise<boolean> {
  return deleteOptional(() =>
    kc
      .makeApiClient(k8s.CustomObjectsApi)
      .deleteNamespacedCustomObject({ group: API_GROUP, version: API_VERSION, namespace, plural, name }),
  ).catch(describeFailure(`offloading: deleting ${plural} ${namespace}/${name}`, serverOf(kc)));
}

/**
 * Adds or removes `finalizer` on an offloading object (a JSON merge patch of its finalizers, on
 * the version read: a concurrent change makes it fail with 409, and the next pass reads again).
 */
export async function setOffloadingFinalizer(
  kc: k8s.KubeConfig,
  plural: OffloadingPlural,
  object: { readonly metadata: k8s.V1ObjectMeta },
  finalizer: string,
  present: boolean,
): Promise<void> {
  const others = (object.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  if (present === (others.length !== (object.metadata.finalizers ?? []).length)) return;
  const { namespace, name, resourceVersion } = object.metadata;
  await kc
    .makeApiClient(k8s.CustomObjectsApi)
    .patchNamespacedCustomObject(
      {
        group: API_GROUP,
        version: API_VERSION,
        namespace: namespace!,
        plural,
        name: name!,
        body: { metadata: { resourceVersion, finalizers: present ? [...others, finalizer] : others } },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )
    .catch(
      describeFailure(
        `offloading: ${present ? "adding" : "removing"} finalizer ${finalizer} of ${plural} ${namespace}/${name}`,
        serverOf(kc),
      ),
    );
}
