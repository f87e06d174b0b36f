/** What every role of the agent shares: how it reaches its cluster, names collections, and stops. */
import { readFileSync } from "node:fs";
import { KubeConfig } from "@kubernetes/client-node";
import { API_GROUP, API_VERSION } from "../../core/api/index.js";
import { loadKubeconfig, reuseConnections } from "../../core/kube/client.js";
import type { Reporter } from "../reporter.js";

/** The collection of one of the project's custom resources, across namespaces. */
export const collection = (plural: string): string => `/apis/${API_GROUP}/${API_VERSION}/${plural}`;

/** The cluster's API: from `--kubeconfig PATH`, or without one (in a pod) with the pod's ServiceAccount. */
export function clusterConfig(kubeconfigPath: string | undefined): KubeConfig {
  if (kubeconfigPath) return loadKubeconfig(readFileSync(kubeconfigPath, "utf8"), `--kubeconfig ${kubeconfigPath}`);
  const kc = new KubeConfig();
  kc.loadFromCluster();
  return reuseConnections(kc);
}

/** Aborts `stop` on the first SIGTERM or SIGINT (what the kubelet sends a pod's container), saying so. */
export function stopOnSignals(stop: AbortController, who: string, reporter: Reporter): void {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      reporter.info(`${who}: ${signal}, stopping`);
      stop.abort();
    });
  }
}

/** A number from environment variable `name`, or `fallback` when unset; throws naming the variable when out of `[min, max]`. */
export function numberFromEnv(name: string, fallback: number, min: number, max: number): number {
  const text = process.env[name];
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < min || value > max)
    throw new Error(`${name}=${JSON.stringify(text)} must be a number from ${min} to ${max}`);
  return value;
}

/** Environment variable `name`, which the role's manifest sets (e.g. from the downward API); throws naming it when unset. */
export function requiredEnv(name: string, why: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: ${why}`);
  return value;
}
