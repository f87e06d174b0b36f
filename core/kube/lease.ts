/**
 * Lease renewal in one request: the version last written is kept and replaced directly. Only when
 * that fails because someone else wrote the lease since (409) or it is gone (404) is it read
 * again. A renewing loop (the agent's liveness, every virtual node's heartbeat) thus costs one
 * request a renewal instead of a read and a write.
 */
import * as k8s from "@kubernetes/client-node";
import { readOptional, serverOf } from "./client.js";
import { statusOf } from "./errors.js";

/** The last version written of each lease, by API server, namespace and name. */
const written = new Map<string, k8s.V1Lease>();

/** What renewing one lease needs. */
export interface LeaseRenewal {
  readonly namespace: string;
  readonly name: string;
  /** The lease as it should be after renewing `current` (its resourceVersion kept). */
  readonly renew: (current: k8s.V1Lease) => k8s.V1Lease;
  /** The lease to create when there is none. */
  readonly create: () => Promise<k8s.V1Lease>;
}

/**
 * Renews (or creates) a lease. A 409 on the second try means another writer renewed it at that
 * very moment, which is all this renewal was for. Errors other than that are thrown as is.
 */
export async function renewLease(kc: k8s.KubeConfig, lease: LeaseRenewal): Promise<void> {
  const api = kc.makeApiClient(k8s.CoordinationV1Api);
  const { namespace, name } = lease;
  const key = `${serverOf(kc)} ${namespace}/${name}`;
  const last = written.get(key);
  if (last) {
    try {
      written.set(key, await api.replaceNamespacedLease({ name, namespace, body: lease.renew(last) }));
      return;
    } catch (error) {
      written.delete(key);
      if (statusOf(error) !== 409 && statusOf(error) !== 404) throw error;
    }
  }
  try {
    const current = await readOptional(() => api.readNamespacedLease({ name, namespace }));
    const body = current ? lease.renew(current) : await lease.create();
    written.set(
      key,
      current
        ? await api.replaceNamespacedLease({ name, namespace, body })
        : await api.createNamespacedLease({ namespace, body }),
    );
  } catch (error) {
    if (statusOf(error) !== 409) throw error;
  }
}
