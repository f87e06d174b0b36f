/**
 * The pod placements a cluster's uninstall removes: the MutatingAdmissionPolicies and bindings, or
 * the MutatingWebhookConfigurations, that offloadings write (../offloading/pod-placement.ts), which outlive a cluster uninstalled
 * before its offloadings were withdrawn. Found by the project's label alone, so that the install,
 * which every task reads and which therefore comes before the offloading, needs none of its code.
 */
import * as k8s from "@kubernetes/client-node";
import { MANAGED_BY, MANAGED_BY_LABEL } from "../api/names.js";
import { deleteOptional, describeFailure, objectClient, readOptional, serverOf } from "../kube/client.js";
import { readServerVersion } from "../kube/server-version.js";
import { placementMechanismFor, releaseOf, type PlacementMechanism } from "./kubernetes-release.js";

/** The API version the admission policy objects are written in. */
const ADMISSION_API = "admissionregistration.k8s.io/v1";

/** The kinds of the pod-placement objects. */
export type PlacementKind =
  "MutatingAdmissionPolicyBinding" | "MutatingAdmissionPolicy" | "MutatingWebhookConfiguration";

/** How the API server of `kc` places the pods of offloaded namespaces (see {@link placementMechanismFor}). */
export async function placementMechanismOf(kc: k8s.KubeConfig, step: string): Promise<PlacementMechanism> {
  const version = await readServerVersion(kc).catch(
    describeFailure(`${step}: reading the Kubernetes version`, serverOf(kc)),
  );
  return placementMechanismFor(releaseOf(version));
}

/**
 * The kinds of pod-placement objects an API server placing pods by `mechanism` serves, each binding
 * before its policy (the order to remove them in): the webhook configurations on every release (a
 * cluster upgraded from 1.35 may still hold some), the admission policies from 1.36 on.
 */
export function placementKindsOf(mechanism: PlacementMechanism): readonly PlacementKind[] {
  return mechanism === "MutatingAdmissionPolicy"
    ? ["MutatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingWebhookConfiguration"]
    : ["MutatingWebhookConfiguration"];
}

/**
 * Every pod-placement policy and binding of the project, whatever namespace they place; none on a
 * cluster without the API.
 */
export async function listPlacements(
  kc: k8s.KubeConfig,
  step: string,
): Promise<{ readonly kind: PlacementKind; readonly name: string }[]> {
  const client = objectClient(kc);
  const found = [];
  for (const kind of placementKindsOf(await placementMechanismOf(kc, step))) {
    // (namespace, pretty, exact, exportt, fieldSelector) unset: cluster-scoped, by label.
    const listed = await readOptional(() =>
      client.list(
        ADMISSION_API,
        kind,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
        `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
      ),
    ).catch(describeFailure(`${step}: listing the project's ${kind}s`, serverOf(kc)));
    found.push(...(listed?.items ?? []).map((object) => ({ kind, name: object.metadata!.name! })));
  }
  return found;
}

/**
 * Removes every pod-placement policy and binding of the project: the uninstall of a cluster whose
 * offloadings were not all withdrawn (under `remote`, a pod placed for virtual nodes that are gone
 * would stay Pending).
 */
export async function removeAllPlacements(kc: k8s.KubeConfig, step: string): Promise<void> {
  const client = objectClient(kc);
  for (const { kind, name } of await listPlacements(kc, step)) {
    await deleteOptional(() => client.delete({ apiVersion: ADMISSION_API, kind, metadata: { name } })).catch(
      describeFailure(`${step}: deleting ${kind} ${name}`, serverOf(kc)),
    );
  }
}
