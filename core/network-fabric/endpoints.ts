/**
 * `TunnelEndpoint` objects in a cluster: read, applied, answered, finalized. Shared by the `Tunnel`
 * steps (which write specs) and the gateway (which writes statuses and holds a finalizer until it
 * has removed what it set up).
 */
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REMOTE_CLUSTER_LABEL,
  type TunnelEndpoint,
  type TunnelEndpointSpec,
  type TunnelEndpointStatus,
} from "../api/index.js";
import {
  FIELD_MANAGER,
  deleteOptional,
  describeFailure,
  ensureObject,
  readOptional,
  serverOf,
} from "../kube/client.js";

const PLURAL = "tunnelendpoints";

/** Finalizer the gateway puts on every endpoint it has set up, and removes once it has taken it all down. */
export const GATEWAY_FINALIZER = `${API_GROUP}/gateway`;

/** The Secret (in the system namespace) where a gateway keeps the key pair of interface `ifname`. */
export const gatewayKeySecretName = (ifname: string): string => `wireguard-${ifname}`;

/** Where a `TunnelEndpoint` lives. */
export interface EndpointRef {
  readonly namespace: string;
  readonly name: string;
}

const describeRef = (ref: EndpointRef): string => `TunnelEndpoint ${ref.namespace}/${ref.name}`;

/** Reads an endpoint; undefined when it does not exist. */
export async function getTunnelEndpoint(
  kc: k8s.KubeConfig,
  ref: EndpointRef,
  step: string,
): Promise<TunnelEndpoint | undefined> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  return (await readOptional(() =>
    api.getNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: ref.namespace,
      plural: PLURAL,
      name: ref.name,
    }),
  ).catch(describeFailure(`${step}: reading ${describeRef(ref)}`, serverOf(kc)))) as TunnelEndpoint | undefined;
}

/** Every endpoint of the cluster, in every namespace. */
export async function listTunnelEndpoints(kc: k8s.KubeConfig, step: string): Promise<TunnelEndpoint[]> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const list = (await api
    .listClusterCustomObject({ group: API_GROUP, version: API_VERSION, plural: PLURAL })
    .catch(describeFailure(`${step}: listing TunnelEndpoints`, serverOf(kc)))) as {
    items: TunnelEndpoint[];
  };
  return list.items;
}

/** Applies an endpoint's spec (server-side apply: fields set before and left out now are removed). Resolves the stored object. */
export async function applyTunnelEndpoint(
  kc: k8s.KubeConfig,
  ref: EndpointRef,
  spec: TunnelEndpointSpec,
  step: string,
): Promise<TunnelEndpoint> {
  const object: TunnelEndpoint = {
    apiVersion: API_GROUP_VERSION,
    kind: "TunnelEndpoint",
    metadata: {
      name: ref.name,
      namespace: ref.namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [REMOTE_CLUSTER_LABEL]: spec.remoteClusterId },
    },
    spec,
  };
  return ensureObject(kc, object).catch(describeFailure(`${step}: applying ${describeRef(ref)}`, serverOf(kc)));
}

/** Deletes an endpoint; resolves whether it existed. Its gateway's finalizer keeps it until the gateway has cleaned up. */
export async function deleteTunnelEndpoint(kc: k8s.KubeConfig, ref: EndpointRef, step: string): Promise<boolean> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  return deleteOptional(() =>
    api.deleteNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: ref.namespace,
      plural: PLURAL,
      name: ref.name,
    }),
  ).catch(describeFailure(`${step}: deleting ${describeRef(ref)}`, serverOf(kc)));
}

/** Replaces the endpoint's status (merge patch on the status subresource). */
export async function writeTunnelEndpointStatus(
  kc: k8s.KubeConfig,
  endpoint: TunnelEndpoint,
  status: TunnelEndpointStatus,
  step: string,
): Promise<void> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const { namespace, name } = endpoint.metadata as Required<Pick<k8s.V1ObjectMeta, "namespace" | "name">>;
  // Fields the gateway no longer reports are nulled, so a stale round-trip time does not linger.
  const cleared = Object.fromEntries(Object.keys(endpoint.status ?? {}).map((key) => [key, null]));
  await api
    .patchNamespacedCustomObjectStatus(
      {
        group: API_GROUP,
        version: API_VERSION,
        namespace,
        plural: PLURAL,
        name,
        body: { status: { ...cleared, ...status } },
        fieldManager: FIELD_MANAGER,
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    )
    .catch(describeFailure(`${step}: writing the status of ${describeRef({ namespace, name })}`, serverOf(kc)));
}

/** Sets the endpoint's finalizers to `finalizers`, guarded by its resourceVersion (a conflict retries on the next pass). */
export async function setTunnelEndpointFinalizers(
  kc: k8s.KubeConfig,
  endpoint: TunnelEndpoint,
  finalizers: readonly string[],
  step: string,
): Promise<void> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const { namespace, name, resourceVersion } = endpoint.metadata as Required<
    Pick<k8s.V1ObjectMeta, "namespace" | "name" | "resourceVersion">
  >;
  await deleteOptional(() =>
    api.patchNamespacedCustomObject(
      {
        group: API_GROUP,
        version: API_VERSION,
        namespace,
        plural: PLURAL,
        name,
        body: { metadata: { finalizers, resourceVersion } },
        fieldManager: FIELD_MANAGER,
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    ),
  ).catch(describeFailure(`${step}: setting the finalizers of ${describeRef({ namespace, name })}`, serverOf(kc)));
}
