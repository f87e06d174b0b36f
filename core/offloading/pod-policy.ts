/**
 * What a provider lets a consumer's pod do, decided from the pod's spec alone (pure, no I/O): the
 * provider's agent asks {@link refusePodSpec} before it creates any pod for a consumer, and the
 * consumer's agent shows the refusal on its pod. The offer is checked apart (budget.ts).
 *
 * A consumer's pod runs among the provider's own workloads, on its nodes: whatever would let it
 * reach past its containers (the node's namespaces, files, ports, devices, a token of one of its
 * service accounts) is refused, whatever the pod says it needs. The service account a pod names is
 * its consumer's: the provider runs it as its namespace's `default`, with no token of the
 * provider's (reflection.ts `forgeRemotePod`).
 */
import type { V1Container, V1PodSpec, V1Volume } from "@kubernetes/client-node";

/** Why a pod is refused: a CamelCase reason, as conditions and events carry it, and a sentence naming the field. */
export interface Refusal {
  /**
   * `Privileged`, `HostNamespace`, `HostPath`, `VolumeSource`, `HostPort`, `ServiceAccountToken`,
   * `NodeSelection`, `ExceedsOffer`, `TunnelNotReady`, `ClaimNotHeld`, `Invalid`.
   */
  readonly reason: string;
  /** Names the container and field, e.g. `container "app": securityContext.privileged is true`. */
  readonly message: string;
}

/** The service account of the provider's that an offloaded pod runs as: its namespace's default, with no rights. */
export const ALLOWED_SERVICE_ACCOUNT = "default";

/** The volume sources an offloaded pod may use. */
const OWN_VOLUME_SOURCES = [
  "emptyDir",
  "configMap",
  "secret",
  "projected",
  "downwardAPI",
  "persistentVolumeClaim",
] as const satisfies readonly (keyof V1Volume)[];

/** Every container of a pod, init and ephemeral ones included, with the field path it sits under. */
function containersOf(spec: V1PodSpec): { readonly path: string; readonly container: V1Container }[] {
  return [
    ...(spec.initContainers ?? []).map((container) => ({ path: "initContainers", container })),
    ...(spec.containers ?? []).map((container) => ({ path: "containers", container })),
    ...((spec.ephemeralContainers ?? []) as V1Container[]).map((container) => ({
      path: "ephemeralContainers",
      container,
    })),
  ];
}

/** The first rule a container breaks, if any. */
function refuseContainer(path: string, container: V1Container): Refusal | undefined {
  const where = `${path} "${container.name}"`;
  const security = container.securityContext;
  if (security?.privileged) {
    return { reason: "Privileged", message: `${where}: securityContext.privileged is true` };
  }
  if (security?.allowPrivilegeEscalation) {
    return { reason: "Privileged", message: `${where}: securityContext.allowPrivilegeEscalation is true` };
  }
  const added = security?.capabilities?.add ?? [];
  if (added.length > 0) {
    return {
      reason: "Privileged",
      message: `${where}: securityContext.capabilities.add asks for ${added.join(", ")}`,
    };
  }
  if (security?.procMount && security.procMount !== "Default") {
    return { reason: "Privileged", message: `${where}: securityContext.procMount is ${security.procMount}` };
  }
  const hostPort = (container.ports ?? []).find((p) => p.hostPort !== undefined && p.hostPort !== 0);
  if (hostPort) {
    return { reason: "HostPort", message: `${where}: ports asks for hostPort ${hostPort.hostPort}` };
  }
  return undefined;
}

/**
 * The first rule `spec` breaks, or undefined when the provider may run it: no privileged
 * container (nor privilege escalation, added capabilities or an unmasked /proc), no host
 * namespace, host path or host port, no service account token of the provider's of its own
 * asking, and no choice of node (the provider's scheduler places
 * it).
 */
export function refusePodSpec(spec: V1PodSpec): Refusal | undefined {
  if (!spec || !Array.isArray(spec.containers) || spec.containers.length === 0) {
    return { reason: "Invalid", message: "spec.containers is empty" };
  }
  for (const field of ["hostNetwork", "hostPID", "hostIPC"] as const) {
    if (spec[field]) return { reason: "HostNamespace", message: `spec.${field} is true` };
  }
  const hostPath = (spec.volumes ?? []).find((v) => v.hostPath !== undefined);
  if (hostPath) {
    return {
      reason: "HostPath",
      message: `volume "${hostPath.name}" mounts hostPath ${hostPath.hostPath?.path ?? ""}`,
    };
  }
  // Only volumes of the pod's own (its files, its namespace's objects) or a claim the provider made
  // for its consumer (checked where the claims are known: claim-reflection.ts). Any other source
  // (a network share, a device, a driver, an ephemeral claim of a class the pod would name) reaches
  // past the pod into the provider's storage.
  const foreign = (spec.volumes ?? []).find(
    (v) => !OWN_VOLUME_SOURCES.some((source) => v[source] !== undefined) && v.hostPath === undefined,
  );
  if (foreign) {
    const source = Object.keys(foreign).find((key) => key !== "name") ?? "no source";
    return {
      reason: "VolumeSource",
      message: `volume "${foreign.name}" has source ${source}; an offloaded pod may use ${OWN_VOLUME_SOURCES.join(", ")} volumes`,
    };
  }
  // A token projected here would be one of the provider's own service accounts: an identity in the
  // provider's cluster that the consumer's code would hold.
  const token = (spec.volumes ?? []).find((v) => v.projected?.sources?.some((s) => s.serviceAccountToken));
  if (token) {
    return {
      reason: "ServiceAccountToken",
      message: `volume "${token.name}" projects a service account token; an offloaded pod is never given one of the provider's`,
    };
  }
  if (spec.securityContext?.sysctls?.length) {
    return {
      reason: "Privileged",
      message: `spec.securityContext.sysctls sets ${spec.securityContext.sysctls.map((s) => s.name).join(", ")}`,
    };
  }
  for (const { path, container } of containersOf(spec)) {
    const refused = refuseContainer(path, container);
    if (refused) return refused;
  }
  return undefined;
}
