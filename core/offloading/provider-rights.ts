/**
 * Whether each provider of an offloading still grants this consumer's identity what offloading
 * needs there. A tenant made by an earlier release lacks the kinds added since (until the
 * provider's `Cluster` is updated), and an administrator may cut a tenant's Role: either way the
 * consumer's agent meets HTTP 403s that no wait changes. So the offloading's create and update look
 * first and fail in seconds naming the right, the kind, the identity and the way out; its delete
 * takes a refusing provider as one out of reach (`force` leaves it be). The look is one
 * SelfSubjectRulesReview as the peering's identity in its tenant namespace (any authenticated user
 * may ask what it may do); the comparison with the Role a tenant gets is pure. In-band, the
 * provider's API server is inside the tunnel, out of pulumi's reach: the agent's reports say it.
 */
import * as k8s from "@kubernetes/client-node";
import type { OutgoingPeering } from "../api/crds.js";
import { consumerUserName } from "../api/names.js";
import { getIdentityKubeconfig } from "../authentication/stored-identity.js";
import { TENANT_RULES } from "../authentication/tenant.js";
import { getClusterIdentity } from "../cluster/install.js";
import { describeFailure, loadKubeconfig, serverOf } from "../kube/client.js";
import { listOutgoingPeerings } from "../virtual-node/outgoing-peering.js";
import { describeUnreachable } from "../operation/unreachable.js";
import type { UnreachableOffloadingProvider } from "./provider-reach.js";

const STEP = "offloading";

/** Verbs on one kind that an identity needs and is not granted. */
export interface MissingRight {
  /** The kind, as `<plural>.<group>`. */
  readonly resource: string;
  readonly verbs: readonly string[];
}

const grants = (rule: k8s.V1ResourceRule, group: string, resource: string, verb: string): boolean =>
  (rule.apiGroups ?? []).some((g) => g === group || g === "*") &&
  (rule.resources ?? []).some((r) => r === resource || r === "*") &&
  rule.verbs.some((v) => v === verb || v === "*") &&
  // A rule for named objects only does not let the agent list or create.
  (rule.resourceNames ?? []).length === 0;

/** The verbs of `needed` that `granted` (a SelfSubjectRulesReview's rules) leaves out, by kind. Pure. */
export function missingRights(
  needed: readonly k8s.V1PolicyRule[],
  granted: readonly k8s.V1ResourceRule[],
): MissingRight[] {
  return needed.flatMap((rule) =>
    (rule.apiGroups ?? []).flatMap((group) =>
      (rule.resources ?? []).flatMap((resource) => {
        const verbs = (rule.verbs ?? []).filter((verb) => !granted.some((g) => grants(g, group, resource, verb)));
        return verbs.length > 0 ? [{ resource: group ? `${resource}.${group}` : resource, verbs }] : [];
      }),
    ),
  );
}

/** `get, list reflectedservices.liqo.pulumi.io; create offloadedpods.liqo.pulumi.io`. Pure. */
export const describeMissing = (missing: readonly MissingRight[]): string =>
  missing.map((m) => `${m.verbs.join(", ")} ${m.resource}`).join("; ");

/** A provider that refuses this consumer's identity rights offloading needs, as a provider out of reach. */
export type RefusingProvider = UnreachableOffloadingProvider & { readonly refuses: true };

/** What a provider refuses: `… may not list reflectedservices… in <tenant> (HTTP 403 …)`. Pure. */
export function refusalCause(
  consumerClusterId: string,
  tenantNamespace: string,
  missing: readonly MissingRight[],
): string {
  return (
    `its identity ${consumerUserName(consumerClusterId)} may not ${describeMissing(missing)} in ${tenantNamespace} ` +
    `(the consumer's agent gets HTTP 403 Forbidden there)`
  );
}

/**
 * The error of an offloading's create, update or delete that found providers refusing rights it
 * needs: nothing was changed; the two ways out are said.
 */
export function rightsRefusedError(step: string, found: readonly RefusingProvider[]): Error {
  return new Error(
    `${step}: ${found.map(describeUnreachable).join("; ")}. Nothing was changed, and waiting does not change that. ` +
      `The provider's Cluster gives every consumer the rights of its release: run pulumi up of the stack that holds it ` +
      `with this release of pulumi-liqo (or ask its administrator, who may have cut them). To remove the offloading ` +
      `without the provider's help, set force: true on the NamespaceOffloading and run pulumi up, then pulumi destroy ` +
      `again: the consumer's side is removed and what stays on the provider is listed`,
  );
}

/**
 * The providers of `virtualNodes` that refuse this consumer's identity rights offloading needs
 * ({@link findRefusingProviders}); `where` names the object whose peerings are read, for errors.
 */
export async function refusingProviders(
  kc: k8s.KubeConfig,
  virtualNodes: readonly string[],
  where: string,
): Promise<RefusingProvider[]> {
  const endpoint = serverOf(kc);
  const consumer = await getClusterIdentity(kc).catch(
    describeFailure(`${STEP}: reading the consumer's identity`, endpoint),
  );
  if (!consumer) return [];
  return findRefusingProviders(kc, consumer.clusterId, virtualNodes, STEP).catch(
    describeFailure(`${STEP}: reading the peerings of ${where}`, endpoint),
  );
}

/**
 * One look as each out-of-band peering's identity at what its provider grants in its tenant
 * namespace, for the peerings of `virtualNodes`; resolves the providers that refuse a right of
 * the tenant Role. A provider that cannot be looked at (out of reach, no identity) is not one:
 * {@link findUnreachableProviders} says those.
 */
export async function findRefusingProviders(
  consumer: k8s.KubeConfig,
  consumerClusterId: string,
  virtualNodes: readonly string[],
  step: string,
): Promise<RefusingProvider[]> {
  const wanted = new Set(virtualNodes);
  const peerings = (await listOutgoingPeerings(consumer)).filter(
    (p) => wanted.has(p.spec.virtualNodeName) && !p.metadata.deletionTimestamp && !p.spec.inBand,
  );
  const found = await Promise.all(
    peerings.map((peering) => lookAtRights(consumer, consumerClusterId, peering, step).catch(() => undefined)),
  );
  return found.filter((f): f is RefusingProvider => f !== undefined);
}

async function lookAtRights(
  consumer: k8s.KubeConfig,
  consumerClusterId: string,
  peering: OutgoingPeering,
  step: string,
): Promise<RefusingProvider | undefined> {
  const identity = await getIdentityKubeconfig(consumer, peering.spec.providerClusterId);
  if (!identity) return undefined;
  const provider = loadKubeconfig(identity, "stored identity");
  const namespace = peering.spec.tenantNamespace;
  const authorization = provider.makeApiClient(k8s.AuthorizationV1Api);
  const review = await authorization.createSelfSubjectRulesReview({ body: { spec: { namespace } } });
  let missing = missingRights(TENANT_RULES, review.status?.resourceRules ?? []);
  // With another authorizer beside RBAC (the Node authorizer of most clusters) the list may be
  // incomplete: each right it leaves out is then asked about on its own, and only a denial counts.
  if (missing.length > 0 && review.status?.incomplete)
    missing = await confirmMissing(authorization, namespace, missing);
  if (missing.length === 0) return undefined;
  return {
    step,
    providerName: peering.spec.providerClusterName,
    virtualNode: peering.spec.virtualNodeName,
    tenantNamespace: namespace,
    endpoint: `API server ${serverOf(provider)}`,
    cause: refusalCause(consumerClusterId, namespace, missing),
    refuses: true,
  };
}

/** Of `missing`, the rights a SelfSubjectAccessReview for each verb denies in `namespace`. */
async function confirmMissing(
  authorization: k8s.AuthorizationV1Api,
  namespace: string,
  missing: readonly MissingRight[],
): Promise<MissingRight[]> {
  const confirmed = await Promise.all(
    missing.map(async ({ resource, verbs }) => {
      const [plural, ...group] = resource.split(".");
      const denied = await Promise.all(
        verbs.map(async (verb) => {
          const review = await authorization.createSelfSubjectAccessReview({
            body: { spec: { resourceAttributes: { namespace, verb, group: group.join("."), resource: plural! } } },
          });
          return review.status?.allowed ? undefined : verb;
        }),
      );
      const verbsDenied = denied.filter((verb): verb is string => verb !== undefined);
      return verbsDenied.length > 0 ? [{ resource, verbs: verbsDenied }] : [];
    }),
  );
  return confirmed.flat();
}
