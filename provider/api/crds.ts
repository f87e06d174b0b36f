/**
 * The project's custom resources, as CustomResourceDefinitions (pure builders, no I/O) and as
 * TypeScript types of the objects.
 *
 * - `ResourceRequest` (provider side, tenant namespace): the consumer asks for resources.
 * - `ResourceOffer` (provider side, tenant namespace): the provider's agent answers.
 * - `OutgoingPeering` (consumer side, system namespace): what the consumer's agent keeps alive
 *   (the virtual node's heartbeat) and follows (offer changes).
 */
import type { V1CustomResourceDefinition, V1ObjectMeta } from "@kubernetes/client-node";
import { API_GROUP, API_VERSION, MANAGED_BY, MANAGED_BY_LABEL } from "./names.js";

/** Resources asked for: a share of the provider's free capacity, or fixed amounts. */
export interface ResourceAsk {
  /** Percentage (1-100) of the provider's free allocatable capacity; exclusive with the fixed amounts. */
  readonly sharePercent?: number;
  /** Fixed CPU quantity, e.g. `2` or `500m`. */
  readonly cpu?: string;
  /** Fixed memory quantity, e.g. `4Gi`. */
  readonly memory?: string;
  /** Fixed pod count. */
  readonly pods?: number;
}

/** Amounts a provider offers. */
export interface OfferedResources {
  /** CPU quantity. */
  readonly cpu: string;
  /** Memory quantity. */
  readonly memory: string;
  /** Pod count. */
  readonly pods: number;
}

/** A consumer's request for resources, in its tenant namespace on the provider. */
export interface ResourceRequest {
  apiVersion: string;
  kind: "ResourceRequest";
  metadata: V1ObjectMeta;
  spec: { consumerClusterId: string; consumerClusterName: string; resources: ResourceAsk };
}

/** A provider's answer to a ResourceRequest of the same name. */
export interface ResourceOffer {
  apiVersion: string;
  kind: "ResourceOffer";
  metadata: V1ObjectMeta;
  spec: {
    providerClusterId: string;
    providerClusterName: string;
    resources: OfferedResources;
    labels?: Record<string, string>;
    /** Generation of the ResourceRequest this offer answers: older offers are not the answer yet. */
    requestGeneration: number;
  };
}

/** The consumer's record of one peering, which its agent keeps alive. */
export interface OutgoingPeering {
  apiVersion: string;
  kind: "OutgoingPeering";
  metadata: V1ObjectMeta;
  spec: {
    providerClusterId: string;
    providerClusterName: string;
    /** Secret in the system namespace holding the identity's kubeconfig for the provider. */
    identitySecret: string;
    /** Tenant namespace on the provider. */
    tenantNamespace: string;
    /** Name of the ResourceRequest and ResourceOffer in the tenant namespace. */
    requestName: string;
    /** The virtual node standing for the offer. */
    virtualNodeName: string;
  };
}

type Schema = Record<string, unknown>;
const str: Schema = { type: "string" };
const int: Schema = { type: "integer" };
const stringMap: Schema = { type: "object", additionalProperties: { type: "string" } };
const obj = (properties: Record<string, Schema>, required: string[] = []): Schema => ({ type: "object", properties, ...(required.length ? { required } : {}) });

const resourceAsk = obj({ sharePercent: { type: "integer", minimum: 1, maximum: 100 }, cpu: str, memory: str, pods: { type: "integer", minimum: 1 } });
const offered = obj({ cpu: str, memory: str, pods: int }, ["cpu", "memory", "pods"]);

function crd(kind: string, plural: string, spec: Schema): V1CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${API_GROUP}`, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
    spec: {
      group: API_GROUP,
      scope: "Namespaced",
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: API_VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: obj({ spec }, ["spec"]) as never },
        },
      ],
    },
  };
}

/** The CustomResourceDefinitions every participating cluster needs. */
export function forgeCustomResourceDefinitions(): V1CustomResourceDefinition[] {
  return [
    crd("ResourceRequest", "resourcerequests", obj({ consumerClusterId: str, consumerClusterName: str, resources: resourceAsk }, ["consumerClusterId", "resources"])),
    crd(
      "ResourceOffer",
      "resourceoffers",
      obj({ providerClusterId: str, providerClusterName: str, resources: offered, labels: stringMap, requestGeneration: int }, ["providerClusterId", "resources", "requestGeneration"]),
    ),
    crd(
      "OutgoingPeering",
      "outgoingpeerings",
      obj(
        { providerClusterId: str, providerClusterName: str, identitySecret: str, tenantNamespace: str, requestName: str, virtualNodeName: str },
        ["providerClusterId", "identitySecret", "tenantNamespace", "requestName", "virtualNodeName"],
      ),
    ),
  ];
}
