/**
 * What the consumer's watches name, done at once for that one object: a pod on a virtual node
 * being deleted has its request withdrawn on its provider, and a ConfigMap or Secret edited has
 * its copy there updated. Each is the step the next pass (consumer-pods.ts) would take, taken
 * without waiting for a pass over every pod of the node, which at hundreds of pods takes seconds.
 *
 * The pass stays the authority: a shortcut works from what the last pass found (the peerings, the
 * namespaces offloaded through each, the copies held), does nothing it is not sure of, and never
 * fails the loop. Whatever it misses or races (a pass that read a ConfigMap just before the edit
 * and writes after the shortcut) the pass the same watch event woke puts right.
 */
import * as k8s from "@kubernetes/client-node";
import { tenantRequestName, type OffloadedPod } from "../../core/api/index.js";
import { describeFailure, ensureObject, serverOf } from "../../core/kube/client.js";
import { deleteOffloading, readOffloading } from "../../core/offloading/objects.js";
import { forgeReflectedConfigMap, forgeReflectedSecret } from "../../core/offloading/reflection.js";
import type { Reporter } from "../reporter.js";

const STEP = "offloading (consumer)";

/** The names of the ConfigMaps and Secrets of one consumer namespace that have copies on a provider. */
export interface HeldCopies {
  readonly configMaps: ReadonlySet<string>;
  readonly secrets: ReadonlySet<string>;
}

/** One peering as the last pass left it: where its requests go, and what is offloaded through it. */
export interface PeeringRoute {
  /** The peering's virtual node on this cluster. */
  readonly virtualNode: string;
  /** The peering's identity on its provider. */
  readonly provider: k8s.KubeConfig;
  /** The peering's tenant namespace on its provider, where its requests are. */
  readonly tenant: string;
  /** The remote namespace of each consumer namespace offloaded to the virtual node and accepted there. */
  readonly remoteNamespaces: ReadonlyMap<string, string>;
  /** The copies the pods of each consumer namespace read, held in its remote namespace. */
  readonly copies: ReadonlyMap<string, HeldCopies>;
}

/** An object of a watch event, as far as the shortcuts read it. */
type Watched = { metadata?: k8s.V1ObjectMeta; spec?: { nodeName?: string } } | undefined;

/** The shortcuts of one consumer agent; {@link use} gives them what each pass found. */
export class ConsumerShortcuts {
  private routes: readonly PeeringRoute[] = [];
  /** Pods whose request is being withdrawn now: their next events (status, finalizers) wait for it. */
  private readonly withdrawing = new Set<string>();

  constructor(private readonly reporter: Reporter) {}

  /** The peerings as the last pass found them. */
  use(routes: readonly PeeringRoute[]): void {
    this.routes = routes;
  }

  /** A pod changed: one on a virtual node being deleted here has its request withdrawn at once. */
  podChanged(type: string | undefined, object: unknown): void {
    const pod = object as Watched;
    const { name, namespace, uid, deletionTimestamp } = pod?.metadata ?? {};
    if (!name || !namespace || !uid || (type !== "DELETED" && !deletionTimestamp)) return;
    const route = this.routes.find((r) => r.virtualNode === pod?.spec?.nodeName);
    const remoteNamespace = route?.remoteNamespaces.get(namespace);
    if (!route || !remoteNamespace || this.withdrawing.has(uid)) return;
    this.withdrawing.add(uid);
    void this.withdraw(route, tenantRequestName(remoteNamespace, name), uid)
      .catch((error: unknown) => this.reporter.warn(`${STEP}: ${(error as Error).message}`))
      .finally(() => this.withdrawing.delete(uid));
  }

  /** A ConfigMap or Secret changed: a copy a provider holds of it is brought up to date at once. */
  objectChanged(kind: "ConfigMap" | "Secret", type: string | undefined, object: unknown): void {
    if (type !== "ADDED" && type !== "MODIFIED") return; // A deletion is the pass's: it decides what the pods still need.
    const source = object as (k8s.V1ConfigMap & k8s.V1Secret) | undefined;
    const { name, namespace } = source?.metadata ?? {};
    if (!source || !name || !namespace) return;
    for (const route of this.routes) {
      const remoteNamespace = route.remoteNamespaces.get(namespace);
      const held = route.copies.get(namespace);
      if (!remoteNamespace || !(kind === "ConfigMap" ? held?.configMaps : held?.secrets)?.has(name)) continue;
      const copy =
        kind === "ConfigMap"
          ? forgeReflectedConfigMap(source, remoteNamespace)
          : forgeReflectedSecret(source, remoteNamespace);
      if (!copy) continue;
      void ensureObject(route.provider, copy as k8s.KubernetesObject)
        // The message names the object, never its content.
        .catch(
          describeFailure(
            `${STEP}: reflecting ${kind} ${namespace}/${name} to ${remoteNamespace}`,
            serverOf(route.provider),
          ),
        )
        .catch((error: unknown) => this.reporter.warn((error as Error).message));
    }
  }

  /** Withdraws request `requestName` when it is still this very pod's (a pod of the same name may have come since). */
  private async withdraw(route: PeeringRoute, requestName: string, uid: string): Promise<void> {
    const request = await readOffloading<OffloadedPod>(route.provider, "offloadedpods", route.tenant, requestName);
    if (!request || request.spec.consumerUid !== uid || request.metadata.deletionTimestamp) return;
    await deleteOffloading(route.provider, "offloadedpods", route.tenant, requestName);
  }
}
