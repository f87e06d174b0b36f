/**
 * Volumes that follow their pods (pure, no I/O). A claim of the consumer's StorageClass
 * {@link OFFLOADED_STORAGE_CLASS} waits for its first pod (`WaitForFirstConsumer`); once the
 * scheduler puts that pod on a virtual node, the consumer's agent asks that node's provider for the
 * claim (a `ReflectedClaim`). The provider's agent makes a claim of its own, in its storage class
 * for consumers ({@link offeredStorageOf}), in the remote namespace, under the same name, so the
 * pod's volume names it there unchanged; the consumer's agent then binds the consumer's claim to a
 * volume of its own making, tied to that virtual node. Every later pod of the claim goes to that
 * node, so to the provider that holds the data.
 *
 * What a consumer may ask: a size, access modes and a volume mode, nothing more. The storage class,
 * the volume, a selector or a data source are the provider's to choose or the consumer's to do
 * without: none of them is taken from the request, so a consumer's claim can only ever be given a
 * new, empty volume of the provider's class, never one of the provider's own or another tenant's.
 */
import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1PodSpec,
  V1StorageClass,
  V1Volume,
} from "@kubernetes/client-node";
import { API_GROUP, MANAGED_BY, MANAGED_BY_LABEL } from "../api/names.js";
import { OFFLOADED_STORAGE_CLASS, OFFLOADED_VOLUME_PROVISIONER, VOLUME_VIRTUAL_NODE_LABEL } from "../api/offloading.js";
import { parseMemoryBytes } from "../negotiation/quantity.js";
import type { Refusal } from "./pod-policy.js";
import { reflectedLabels } from "./service-reflection.js";

/** The annotation the scheduler sets on a claim that waited for its first pod: that pod's node. */
export const SELECTED_NODE_ANNOTATION = "volume.kubernetes.io/selected-node";

/** The annotation naming the provisioner of a volume, which deletes it when its claim goes. */
export const PROVISIONED_BY_ANNOTATION = "pv.kubernetes.io/provisioned-by";

/** Label of a volume the consumer's agent made: the uid of the claim it was made for. */
export const VOLUME_CLAIM_UID_LABEL = `${API_GROUP}/claim-uid`;

/** The access modes a claim may name. */
const ACCESS_MODES = ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"];

/**
 * What a provider serves consumers' claims with when it says nothing else: its default StorageClass,
 * for the access modes any volume serves (one node at a time). A volume shared by many nodes
 * (`ReadWriteMany`, `ReadOnlyMany`) is not assumed of a class that may be node-local.
 */
export const SERVED_ACCESS_MODES: readonly string[] = ["ReadWriteOnce", "ReadWriteOncePod"];

/** The claim a consumer asks a provider for. */
export interface ClaimRequest {
  /** The claim's name, the same on both sides. */
  readonly name: string;
  /** Its size, a quantity (`1Gi`). */
  readonly storage: string;
  readonly accessModes: readonly string[];
  /** `Filesystem` (the default) or `Block`. */
  readonly volumeMode?: string;
}

/**
 * What to ask the provider for `claim`, or why it cannot be: a claim with a selector or a data
 * source asks for a volume the provider would have to find or fill, which it does not do for consumers.
 */
export function claimRequestOf(claim: V1PersistentVolumeClaim): ClaimRequest | Refusal {
  const name = claim.metadata?.name ?? "";
  const where = `PersistentVolumeClaim ${claim.metadata?.namespace}/${name}`;
  const spec = claim.spec ?? {};
  for (const field of ["selector", "dataSource", "dataSourceRef"] as const) {
    if (spec[field])
      return {
        reason: "ClaimNotServed",
        message: `${where}: spec.${field} is set; a provider gives a claim of class ${OFFLOADED_STORAGE_CLASS} a new, empty volume only`,
      };
  }
  const storage = spec.resources?.requests?.["storage"];
  if (!storage) return { reason: "Invalid", message: `${where}: spec.resources.requests.storage is not set` };
  return {
    name,
    storage: String(storage),
    accessModes: spec.accessModes ?? [],
    ...(spec.volumeMode ? { volumeMode: spec.volumeMode } : {}),
  };
}

/** What a provider serves its consumers' claims with. */
export interface OfferedStorage {
  /** The provider's StorageClass its claims for consumers are of. */
  readonly storageClass: string;
  /** The access modes it serves. */
  readonly accessModes: readonly string[];
}

/**
 * The storage a provider offers consumers: its default StorageClass (never the offloaded class of
 * its own, whose claims it would send on to a provider of its own), or undefined when it has none.
 */
export function offeredStorageOf(classes: readonly V1StorageClass[]): OfferedStorage | undefined {
  const isDefault = (c: V1StorageClass): boolean =>
    c.metadata?.annotations?.["storageclass.kubernetes.io/is-default-class"] === "true" &&
    c.provisioner !== OFFLOADED_VOLUME_PROVISIONER;
  // Two defaults: the API server gives a claim the newest; so does this.
  const newest = classes
    .filter(isDefault)
    .sort((a, b) => String(b.metadata?.creationTimestamp ?? "").localeCompare(String(a.metadata?.creationTimestamp)));
  const chosen = newest[0];
  return chosen ? { storageClass: chosen.metadata!.name!, accessModes: SERVED_ACCESS_MODES } : undefined;
}

/** A DNS subdomain, as an object's name is one. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * Why the provider does not hold `claim` (the consumer's, unchecked), or undefined when it may, with
 * `offered` storage: a name, a positive size, known access modes it serves, a known volume mode.
 */
export function refuseClaimRequest(claim: unknown, offered: OfferedStorage | undefined): Refusal | undefined {
  const request = (typeof claim === "object" && claim !== null ? claim : {}) as Record<string, unknown>;
  const name = request["name"];
  if (typeof name !== "string" || !DNS_SUBDOMAIN.test(name))
    return { reason: "Invalid", message: `claim.name ${JSON.stringify(name)} is not an object name` };
  const where = `claim ${name}`;
  const storage = request["storage"];
  const bytes = ((): number => {
    try {
      return typeof storage === "string" ? parseMemoryBytes(storage) : 0;
    } catch {
      return 0;
    }
  })();
  if (!(bytes > 0))
    return { reason: "Invalid", message: `${where}: storage ${JSON.stringify(storage)} is not a positive quantity` };
  const modes = request["accessModes"];
  if (!Array.isArray(modes) || modes.length === 0 || !modes.every((m) => ACCESS_MODES.includes(m as string)))
    return { reason: "Invalid", message: `${where}: accessModes ${JSON.stringify(modes)} are not access modes` };
  const volumeMode = request["volumeMode"];
  if (volumeMode !== undefined && volumeMode !== "Filesystem" && volumeMode !== "Block")
    return { reason: "Invalid", message: `${where}: volumeMode ${JSON.stringify(volumeMode)} is not one` };
  if (!offered)
    return {
      reason: "NoStorageClass",
      message: `${where}: this provider offers no storage for consumers' claims (it has no default StorageClass)`,
    };
  const refused = (modes as string[]).filter((m) => !offered.accessModes.includes(m));
  if (refused.length > 0)
    return {
      reason: "AccessModeRefused",
      message:
        `${where}: access mode ${refused.join(", ")} is not served by storage class ${offered.storageClass} ` +
        `(it serves ${offered.accessModes.join(", ")})`,
    };
  return undefined;
}

/**
 * The provider's claim for an accepted request, in `remoteNamespace`, of `storageClass`: the
 * request's size, access modes and volume mode, and nothing else of it. Pure.
 */
export function forgeHeldClaim(
  request: ClaimRequest,
  remoteNamespace: string,
  consumerClusterId: string,
  storageClass: string,
): V1PersistentVolumeClaim {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: request.name, namespace: remoteNamespace, labels: reflectedLabels(consumerClusterId) },
    spec: {
      storageClassName: storageClass,
      accessModes: [...request.accessModes],
      resources: { requests: { storage: request.storage } },
      volumeMode: request.volumeMode ?? "Filesystem",
    },
  };
}

/** Whether `claim` is one the provider made for consumer `consumerClusterId`, by the labels it gave it. */
export function isHeldClaimOf(claim: V1PersistentVolumeClaim | undefined, consumerClusterId: string): boolean {
  const labels = claim?.metadata?.labels ?? {};
  return Object.entries(reflectedLabels(consumerClusterId)).every(([key, value]) => labels[key] === value);
}

/** The name of the consumer's volume for the claim of uid `claimUid`. */
export const offloadedVolumeName = (claimUid: string): string => `pulumi-liqo-${claimUid}`;

/**
 * The consumer's volume for `claim`, once its provider (behind `virtualNode`) holds it: bound to the
 * claim, of its size and modes, and only on that virtual node, so every pod of the claim goes there.
 * Its source is a placeholder no kubelet mounts: a virtual node has none, and the provider mounts
 * its own volume. Pure.
 */
export function forgeOffloadedVolume(claim: V1PersistentVolumeClaim, virtualNode: string): V1PersistentVolume {
  const { name, namespace, uid } = claim.metadata!;
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: {
      name: offloadedVolumeName(uid!),
      labels: {
        [MANAGED_BY_LABEL]: MANAGED_BY,
        [VOLUME_VIRTUAL_NODE_LABEL]: virtualNode,
        [VOLUME_CLAIM_UID_LABEL]: uid!,
      },
      annotations: { [PROVISIONED_BY_ANNOTATION]: OFFLOADED_VOLUME_PROVISIONER },
    },
    spec: {
      capacity: { storage: String(claim.spec!.resources!.requests!["storage"]) },
      accessModes: [...(claim.spec!.accessModes ?? [])],
      volumeMode: claim.spec!.volumeMode ?? "Filesystem",
      storageClassName: OFFLOADED_STORAGE_CLASS,
      persistentVolumeReclaimPolicy: "Delete",
      claimRef: { apiVersion: "v1", kind: "PersistentVolumeClaim", name, namespace, uid },
      local: { path: "/pulumi-liqo/offloaded-volume" },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: [virtualNode] }] },
          ],
        },
      },
    },
  };
}

/** The names of the claims `volumes` of a pod use. */
export function claimsOf(volumes: readonly V1Volume[] | undefined): string[] {
  return (volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : []));
}

/**
 * Why a consumer's pod may not be made with its claims, or undefined when each is one the provider
 * made for that consumer in the pod's namespace (`held`): any other claim there (the provider's own,
 * one made by hand) is not the consumer's to mount.
 */
export function refuseUnheldClaims(spec: V1PodSpec, held: ReadonlySet<string>): Refusal | undefined {
  const volume = (spec.volumes ?? []).find(
    (v) => v.persistentVolumeClaim && !held.has(v.persistentVolumeClaim.claimName),
  );
  return volume
    ? {
        reason: "ClaimNotHeld",
        message: `volume "${volume.name}" uses claim ${volume.persistentVolumeClaim!.claimName}, which this provider holds for no claim of this consumer's`,
      }
    : undefined;
}
