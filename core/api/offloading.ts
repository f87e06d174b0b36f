/**
 * The custom resources of offloading: how a consumer's namespace and pods come to run on a
 * provider without its identity ever creating a namespace or a pod there itself.
 *
 * - `NamespaceOffloading` (consumer side, in the offloaded namespace): which virtual nodes (that
 *   is, which peerings) the namespace's pods may run through, and the remote namespace's name.
 *   Written by the `NamespaceOffloading` resource; the consumer's agent answers in its status.
 * - `OffloadingSelector` (consumer side, system namespace): offloads every namespace whose labels
 *   match, those made later included. The consumer's agent writes a `NamespaceOffloading` into each
 *   (and withdraws it when the namespace stops matching), and lists them in its status.
 * - `RemoteNamespace` (provider side, tenant namespace; named as the namespace it asks for): the
 *   consumer's agent asks for a namespace; the provider's agent checks the name and makes it.
 * - `OffloadedPod` (provider side, tenant namespace): the consumer's agent asks for a pod; the
 *   provider's agent checks it against its rules and the offer, and creates the real pod, or
 *   refuses it with a reason.
 * - `ReflectedService` (provider side, tenant namespace): the consumer's agent asks for a Service of
 *   an offloaded namespace in its remote namespace, with the endpoints that live on the consumer;
 *   the provider's agent checks it (ClusterIP or headless only; endpoints among the consumer's
 *   pods) and makes the Service and an EndpointSlice of those endpoints, or refuses it.
 * - `ReflectedClaim` (provider side, tenant namespace): the consumer's agent asks for a
 *   PersistentVolumeClaim of an offloaded namespace, for a pod bound to the virtual node; the
 *   provider's agent checks it (size, access modes it serves) and makes a claim of its own storage
 *   class in the remote namespace, or refuses it (core/offloading/claim-reflection.ts).
 */
import { createHash } from "node:crypto";
import type { V1ObjectMeta, V1PodSpec } from "@kubernetes/client-node";
import { crd, int, obj, opaque, str, stringList, stringMap } from "./crd-schema.js";
import { API_GROUP } from "./names.js";

/** Where an offloaded namespace's pods may run (core/offloading/pod-placement.ts applies it). */
export type PodOffloading = "local-and-remote" | "remote" | "local";

/** Every {@link PodOffloading}, in the order the docs list them. */
export const POD_OFFLOADING_POLICIES: readonly PodOffloading[] = ["local-and-remote", "remote", "local"];

/** The policy when none is given, as Liqo's. */
export const DEFAULT_POD_OFFLOADING: PodOffloading = "local-and-remote";

/**
 * What an offloaded pod that mounts a service account token gets on the provider: `consumer` (the
 * default), a token of its own service account in the consumer's cluster, with
 * `kubernetes.default` leading to the consumer's API server through the tunnel; `none`, no token at
 * all. Never one of the provider's.
 */
export type ServiceAccountTokens = "consumer" | "none";

/** Every {@link ServiceAccountTokens}. */
export const SERVICE_ACCOUNT_TOKENS: readonly ServiceAccountTokens[] = ["consumer", "none"];

/** Name of the one `NamespaceOffloading` of an offloaded namespace (as Liqo names its own). */
export const NAMESPACE_OFFLOADING_NAME = "offloading";

/**
 * Annotation on a `NamespaceOffloading` being deleted with `force`: the virtual nodes (comma
 * separated) whose providers could not be reached. The consumer's agent leaves their remote
 * namespaces be and lets the object go without them; the resource lists what stays there.
 */
export const ABANDONED_VIRTUAL_NODES_ANNOTATION = `${API_GROUP}/abandoned-virtual-nodes`;

/** The virtual nodes a `NamespaceOffloading`'s {@link ABANDONED_VIRTUAL_NODES_ANNOTATION} names. */
export function abandonedVirtualNodes(metadata: { readonly annotations?: Record<string, string> }): Set<string> {
  const value = metadata.annotations?.[ABANDONED_VIRTUAL_NODES_ANNOTATION] ?? "";
  return new Set(value.split(",").filter((node) => node !== ""));
}

/** How far one provider's side of an offloaded namespace got. */
export interface RemoteNamespaceReport {
  /** The virtual node, i.e. the peering, this report is about. */
  virtualNode: string;
  /** That peering's provider. */
  providerClusterId?: string;
  /** The namespace on the provider. */
  remoteNamespace: string;
  /**
   * `Ready`, `Pending`, `Refused` (the provider said no: `message` says why), `Missing` (accepted,
   * but the namespace, or this peering's rights in it, are gone on the provider), `Unreachable`
   * (no connection to the provider: the agent tries again after a pause that grows to 30 s;
   * `message` says where and why), `Forbidden` (the provider refuses this peering's identity a
   * right it needs: waiting cannot change that, the provider's `Cluster` gives its tenants their
   * rights; `message` names the right, the kind and the identity) or `Error` (tried again).
   */
  phase: "Ready" | "Pending" | "Refused" | "Missing" | "Unreachable" | "Forbidden" | "Error";
  /** Why; never holds a secret. */
  message?: string;
}

/** A consumer namespace whose pods may run on the providers of some virtual nodes. */
export interface NamespaceOffloading {
  apiVersion: string;
  kind: "NamespaceOffloading";
  metadata: V1ObjectMeta;
  spec: {
    /** Name of the namespace on every provider. */
    remoteNamespace: string;
    /** The virtual nodes (one per peering) the namespace's pods may be scheduled on. */
    virtualNodes: string[];
    /** The token the namespace's offloaded pods get. @default "consumer" */
    serviceAccountTokens?: ServiceAccountTokens;
  };
  status?: {
    /** The spec generation this status answers. */
    observedGeneration?: number;
    /** One report per virtual node of the spec. */
    remotes?: RemoteNamespaceReport[];
  };
}

/** One requirement of a {@link NamespaceLabelSelector}, as Kubernetes' label selectors spell it. */
export interface LabelRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
  /** The values of `In` and `NotIn`; none for `Exists` and `DoesNotExist`. */
  values?: string[];
}

/** Which namespaces an {@link OffloadingSelector} offloads: all of these must hold (a Kubernetes label selector). */
export interface NamespaceLabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelRequirement[];
}

/** Label on a `NamespaceOffloading` an {@link OffloadingSelector} wrote: the selector's name. */
export const SELECTED_BY_LABEL = `${API_GROUP}/selected-by`;

/** How far one selected namespace's offloading got. */
export interface SelectedNamespaceReport {
  namespace: string;
  remoteNamespace: string;
  /**
   * `Ready` (every provider made its remote namespace), `Pending`, `Withdrawing` (it stopped
   * matching: its pods and remote namespaces go), `Refused` (a provider said no) or `Conflict`
   * (the namespace is offloaded by something else already, and is left as it is).
   */
  phase: "Ready" | "Pending" | "Withdrawing" | "Refused" | "Conflict";
  /** Why; never holds a secret. */
  message?: string;
}

/** Namespaces offloaded by their labels, those made later included. */
export interface OffloadingSelector {
  apiVersion: string;
  kind: "OffloadingSelector";
  metadata: V1ObjectMeta;
  spec: {
    namespaceSelector: NamespaceLabelSelector;
    /** The virtual nodes (one per peering) the selected namespaces' pods may be scheduled on. */
    virtualNodes: string[];
    /** How each remote namespace is named (as a `NamespaceOffloading` resource's `naming`). */
    naming: "suffixed" | "same";
    /** The consumer's cluster id, which a `suffixed` remote namespace ends with. */
    consumerClusterId: string;
    /** The token the selected namespaces' offloaded pods get (as a `NamespaceOffloading`'s). @default "consumer" */
    serviceAccountTokens?: ServiceAccountTokens;
  };
  status?: {
    /** The spec generation this status answers. */
    observedGeneration?: number;
    /** One report per namespace the selector offloads, or withdraws. */
    namespaces?: SelectedNamespaceReport[];
  };
}

/** What the provider's agent answered to a `RemoteNamespace` or an `OffloadedPod`. */
export interface OffloadingAnswer {
  /** `Accepted` (made, or kept), `Refused` (nothing was made; `reason` and `message` say why). */
  phase?: "Accepted" | "Refused";
  /** A CamelCase reason, as Kubernetes conditions carry: `Privileged`, `HostPath`, `ExceedsOffer`... */
  reason?: string;
  /** Why, in words that name the offending field. */
  message?: string;
  /** The spec generation this answer is about. */
  observedGeneration?: number;
}

/** A consumer's request for a namespace on the provider, named as the namespace it asks for. */
export interface RemoteNamespace {
  apiVersion: string;
  kind: "RemoteNamespace";
  metadata: V1ObjectMeta;
  spec: {
    /** The consumer's namespace it mirrors (shown to the provider's admins; never trusted for anything). */
    consumerNamespace: string;
  };
  status?: OffloadingAnswer;
}

/** A consumer's request for a pod on the provider. */
export interface OffloadedPod {
  apiVersion: string;
  kind: "OffloadedPod";
  metadata: V1ObjectMeta;
  spec: {
    /** The remote namespace the pod is to run in: one of this tenant's `RemoteNamespace`s. */
    namespace: string;
    /** The pod's name there (the consumer pod's name). */
    name: string;
    /** The consumer pod's uid, which the provider's pod carries as a label. */
    consumerUid: string;
    /** Labels of the pod (the project's own are added, and win). */
    labels?: Record<string, string>;
    /** Annotations of the pod, but those of Kubernetes' own prefixes (`*kubernetes.io/`, `*k8s.io/`), which are for the consumer's cluster. */
    annotations?: Record<string, string>;
    /** The pod's spec as the consumer asks it, checked by the provider's agent before use. */
    pod: V1PodSpec;
    /**
     * The consumer's agent keeps a token of the pod's service account in the consumer's cluster in
     * the remote namespace (Secret `consumerTokenSecretName`), and the provider mounts it where a
     * kubelet mounts a pod's token, with `kubernetes.default` leading to the consumer's API server.
     */
    consumerToken?: boolean;
  };
  status?: OffloadingAnswer;
}

/** A consumer's request for a Service in one of its remote namespaces on the provider. */
export interface ReflectedService {
  apiVersion: string;
  kind: "ReflectedService";
  metadata: V1ObjectMeta;
  spec: {
    /** The remote namespace the Service is to be in: one of this tenant's `RemoteNamespace`s. */
    namespace: string;
    /**
     * The Service, its ports and selector, and its endpoints on the consumer at the consumer's own
     * pod addresses (core/offloading/service-reflection.ts `ServiceRequest`); checked by the
     * provider's agent before use.
     */
    service: unknown;
  };
  status?: OffloadingAnswer;
}

/** The consumer's StorageClass whose claims are served by the provider their first pod goes to (core/offloading/claim-reflection.ts). */
export const OFFLOADED_STORAGE_CLASS = "pulumi-liqo";

/** The provisioner that class names: the consumer's agent. */
export const OFFLOADED_VOLUME_PROVISIONER = `offloaded-volume.${API_GROUP}`;

/** Label of a volume the consumer's agent made: the virtual node (the peering) whose provider holds its data. */
export const VOLUME_VIRTUAL_NODE_LABEL = `${API_GROUP}/virtual-node-name`;

/** A consumer's request for a PersistentVolumeClaim in one of its remote namespaces on the provider. */
export interface ReflectedClaim {
  apiVersion: string;
  kind: "ReflectedClaim";
  metadata: V1ObjectMeta;
  spec: {
    /** The remote namespace the claim is to be in: one of this tenant's `RemoteNamespace`s. */
    namespace: string;
    /**
     * The claim: its name, size, access modes and volume mode (core/offloading/claim-reflection.ts
     * `ClaimRequest`); checked by the provider's agent before use. Never a storage class or a volume:
     * the provider chooses those.
     */
    claim: unknown;
  };
  status?: OffloadingAnswer;
}

/** The longest name an object may have (a DNS subdomain). */
const MAX_OBJECT_NAME = 253;

/**
 * The name of a tenant's request for object `name` of remote namespace `remoteNamespace` (an
 * OffloadedPod, a ReflectedService, a ReflectedClaim): `<remote namespace>.<name>`, unique in a tenant for a kind (a
 * namespace name has no dot). A pod name may
 * be 253 characters long, so one too long for an object's name is cut and ends in a digest of the
 * whole, which keeps it unique and the same at every pass.
 */
export function tenantRequestName(remoteNamespace: string, podName: string): string {
  const name = `${remoteNamespace}.${podName}`;
  if (name.length <= MAX_OBJECT_NAME) return name;
  const digest = createHash("sha256").update(name).digest("hex").slice(0, 16);
  return `${name.slice(0, MAX_OBJECT_NAME - digest.length - 1).replace(/[.-]+$/, "")}.${digest}`;
}

const answer = obj({
  phase: { type: "string", enum: ["Accepted", "Refused"] },
  reason: str,
  message: str,
  observedGeneration: int,
});

const tokens = { type: "string", enum: [...SERVICE_ACCOUNT_TOKENS] };

/** The CustomResourceDefinitions of offloading (part of every participating cluster's). */
export function forgeOffloadingDefinitions() {
  return [
    crd(
      "NamespaceOffloading",
      "namespaceoffloadings",
      obj({ remoteNamespace: str, virtualNodes: stringList, serviceAccountTokens: tokens }, [
        "remoteNamespace",
        "virtualNodes",
      ]),
      obj({
        observedGeneration: int,
        remotes: {
          type: "array",
          items: obj({
            virtualNode: str,
            providerClusterId: str,
            remoteNamespace: str,
            phase: str,
            message: str,
          }),
        },
      }),
    ),
    crd(
      "OffloadingSelector",
      "offloadingselectors",
      obj(
        {
          namespaceSelector: obj({
            matchLabels: stringMap,
            matchExpressions: {
              type: "array",
              items: obj(
                {
                  key: str,
                  operator: { type: "string", enum: ["In", "NotIn", "Exists", "DoesNotExist"] },
                  values: stringList,
                },
                ["key", "operator"],
              ),
            },
          }),
          virtualNodes: stringList,
          naming: { type: "string", enum: ["suffixed", "same"] },
          consumerClusterId: str,
          serviceAccountTokens: tokens,
        },
        ["namespaceSelector", "virtualNodes", "naming", "consumerClusterId"],
      ),
      obj({
        observedGeneration: int,
        namespaces: {
          type: "array",
          items: obj({ namespace: str, remoteNamespace: str, phase: str, message: str }),
        },
      }),
    ),
    crd("RemoteNamespace", "remotenamespaces", obj({ consumerNamespace: str }, ["consumerNamespace"]), answer),
    crd(
      "OffloadedPod",
      "offloadedpods",
      obj(
        {
          namespace: str,
          name: str,
          consumerUid: str,
          labels: stringMap,
          annotations: stringMap,
          pod: opaque,
          consumerToken: { type: "boolean" },
        },
        ["namespace", "name", "consumerUid", "pod"],
      ),
      answer,
    ),
    crd(
      "ReflectedService",
      "reflectedservices",
      obj({ namespace: str, service: opaque }, ["namespace", "service"]),
      answer,
    ),
    crd("ReflectedClaim", "reflectedclaims", obj({ namespace: str, claim: opaque }, ["namespace", "claim"]), answer),
  ];
}
