/**
 * The gateway's I/O around the claims decision (core/network-fabric/claims.ts): where each
 * endpoint comes from (its namespace's labels), and the status of a refused endpoint. A refused
 * endpoint gets no finalizer, key, interface or listener: it is answered in its status, and that
 * is all.
 */
import * as k8s from "@kubernetes/client-node";
import { REMOTE_CLUSTER_LABEL, SYSTEM_NAMESPACE, type TunnelEndpoint } from "../../core/api/index.js";
import { describeFailure, serverOf } from "../../core/kube/client.js";
import { writeTunnelEndpointStatus } from "../../core/network-fabric/endpoints.js";
import {
  endpointOrigin,
  refusalMessage,
  type EndpointOrigin,
  type RefusedClaims,
} from "../../core/network-fabric/claims.js";
import type { Reporter } from "../reporter.js";

/**
 * The origin of each endpoint's namespace, by namespace name. Lists the namespaces that carry a
 * remote cluster label, and only when some endpoint lives outside the system namespace.
 */
export async function readOrigins(
  kc: k8s.KubeConfig,
  endpoints: readonly TunnelEndpoint[],
  step: string,
): Promise<ReadonlyMap<string, EndpointOrigin>> {
  const namespaces = new Set(endpoints.map((e) => e.metadata.namespace ?? ""));
  const labels = new Map<string, Record<string, string>>();
  if ([...namespaces].some((ns) => ns !== SYSTEM_NAMESPACE)) {
    const listed = await kc
      .makeApiClient(k8s.CoreV1Api)
      .listNamespace({ labelSelector: REMOTE_CLUSTER_LABEL })
      .catch(
        describeFailure(
          `${step}: listing the namespaces labelled ${REMOTE_CLUSTER_LABEL} (to tell tenant namespaces)`,
          serverOf(kc),
        ),
      );
    for (const ns of listed.items) labels.set(ns.metadata?.name ?? "", ns.metadata?.labels ?? {});
  }
  return new Map([...namespaces].map((ns) => [ns, endpointOrigin(ns, labels.get(ns))]));
}

/**
 * Answers a refused endpoint in its status: phase `Refused` and the reason, for the generation
 * refused. What the gateway runs for it stays as the last accepted spec left it (nothing, if none
 * was), and so do the status fields describing that. Writes (and warns) only when the refusal is
 * new, so a refused endpoint costs one read a pass and does not wake the gateway again.
 */
export async function answerRefusal(
  kc: k8s.KubeConfig,
  endpoint: TunnelEndpoint,
  refusal: RefusedClaims,
  reporter: Reporter,
  step: string,
): Promise<void> {
  const message = refusalMessage(refusal);
  const generation = endpoint.metadata.generation!;
  const status = endpoint.status;
  if (status?.phase === "Refused" && status.message === message && status.observedGeneration === generation) return;
  await writeTunnelEndpointStatus(
    kc,
    endpoint,
    { ...status, phase: "Refused", message, observedGeneration: generation },
    step,
  );
  reporter.warn(`${step}: TunnelEndpoint ${endpoint.metadata.namespace}/${endpoint.metadata.name}: ${message}`);
}
