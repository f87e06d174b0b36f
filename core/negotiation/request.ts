/**
 * Parameters negotiation, consumer side: with the identity the provider issued, file a
 * ResourceRequest in the tenant namespace, wait for the provider agent's ResourceOffer answering
 * the request's current generation, and withdraw the request on unpeer.
 */
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  type OfferedResources,
  type ResourceAsk,
  type ResourceOffer,
  type ResourceRequest,
} from "../api/index.js";
import { deleteOptional, describeFailure, ensureObject, readOptional, serverOf } from "../kube/client.js";
import { poll } from "../wait/poll.js";

/** Where a request lives on the provider. */
export interface RequestLocation {
  /** The consumer's tenant namespace on the provider. */
  readonly tenantNamespace: string;
  /** Name of the ResourceRequest (and of the offer answering it). */
  readonly name: string;
}

/** What the consumer asks for. */
export interface RequestSpec extends RequestLocation {
  readonly consumerClusterId: string;
  readonly consumerClusterName: string;
  readonly resources: ResourceAsk;
}

/** Files (or updates in place) the consumer's ResourceRequest; resolves with its generation. */
export async function ensureResourceRequest(provider: k8s.KubeConfig, spec: RequestSpec): Promise<number> {
  const request: ResourceRequest = {
    apiVersion: API_GROUP_VERSION,
    kind: "ResourceRequest",
    metadata: { name: spec.name, namespace: spec.tenantNamespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
    spec: {
      consumerClusterId: spec.consumerClusterId,
      consumerClusterName: spec.consumerClusterName,
      resources: spec.resources,
    },
  };
  const applied = await ensureObject(provider, request).catch(
    describeFailure(`negotiation: filing ResourceRequest ${spec.tenantNamespace}/${spec.name}`, serverOf(provider)),
  );
  return applied.metadata?.generation ?? 1;
}

/** Reads the object of kind `plural` at `location` in the tenant namespace, if there is one. */
function readTenantObject(provider: k8s.KubeConfig, plural: string, location: RequestLocation): Promise<unknown> {
  const api = provider.makeApiClient(k8s.CustomObjectsApi);
  return readOptional(() =>
    api.getNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: location.tenantNamespace,
      plural,
      name: location.name,
    }),
  );
}

/** Reads the offer answering request `location`, if the provider has made one. */
export async function getResourceOffer(
  provider: k8s.KubeConfig,
  location: RequestLocation,
): Promise<ResourceOffer | undefined> {
  return (await readTenantObject(provider, "resourceoffers", location)) as ResourceOffer | undefined;
}

/** Reads the consumer's request at `location`, if it is filed. */
export async function getResourceRequest(
  provider: k8s.KubeConfig,
  location: RequestLocation,
): Promise<ResourceRequest | undefined> {
  return (await readTenantObject(provider, "resourcerequests", location)) as ResourceRequest | undefined;
}

/** Waits for the provider's offer that answers generation `generation` of the request. */
export async function waitForResourceOffer(
  provider: k8s.KubeConfig,
  location: RequestLocation & { readonly generation: number; readonly providerName: string },
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<OfferedResources> {
  return poll(
    {
      step: "negotiation",
      object: `ResourceOffer ${location.tenantNamespace}/${location.name} from provider ${location.providerName}`,
      endpoint: serverOf(provider),
    },
    { timeoutMs, intervalMs: 300, ...(signal ? { signal } : {}) },
    async () => {
      const offer = await getResourceOffer(provider, location);
      if (!offer) return { done: false, state: "no offer yet" };
      const answered = offer.spec.requestGeneration;
      return answered >= location.generation
        ? { done: true, value: offer.spec.resources }
        : { done: false, state: `offer answers request generation ${answered}, waiting for ${location.generation}` };
    },
  );
}

/** Withdraws the request (the provider agent then removes its offer). Resolves whether it existed. */
export async function withdrawResourceRequest(provider: k8s.KubeConfig, location: RequestLocation): Promise<boolean> {
  const api = provider.makeApiClient(k8s.CustomObjectsApi);
  return deleteOptional(() =>
    api.deleteNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: location.tenantNamespace,
      plural: "resourcerequests",
      name: location.name,
    }),
  ).catch(
    describeFailure(
      `negotiation: withdrawing ResourceRequest ${location.tenantNamespace}/${location.name}`,
      serverOf(provider),
    ),
  );
}
