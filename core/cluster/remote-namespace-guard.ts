/**
 * What a consumer may not store in its remote namespaces on a provider, held by the provider's own
 * API server: a `ValidatingAdmissionPolicy` that refuses Secrets of type
 * `kubernetes.io/service-account-token` there.
 *
 * Why: the consumer's identity may write Secrets in its remote namespaces (the copies of those its
 * pods read), and Kubernetes' token controller fills a Secret of that type, annotated with a
 * service account's name, with a token of that account of the provider's cluster. The consumer
 * could then read it back, or mount it into its pods: an identity in the provider's cluster that
 * no one gave it. The consumer's agent never reflects that type (../offloading/reflection.ts);
 * this refuses it whoever writes it, the API server deciding, so it holds while the agent is down.
 *
 * Forgers are pure; the `Cluster`'s install applies them with the agent's RBAC and its uninstall
 * removes them: so they live with the install, as the agent's roles for remote namespaces do
 * (agent-rbac.ts), not with the offloading that relies on them.
 */
import * as k8s from "@kubernetes/client-node";
import { MANAGED_BY, MANAGED_BY_LABEL, REMOTE_NAMESPACE_LABEL } from "../api/names.js";
import { deleteOptional, describeFailure, ensureObject, objectClient, serverOf } from "../kube/client.js";

/** The API version the policy is written in. */
const ADMISSION_API = "admissionregistration.k8s.io/v1";

/** Name of the policy and of its binding. */
export const REMOTE_NAMESPACE_GUARD = "pulumi-liqo-remote-namespace-secrets";

/** The Secret type that would make the provider mint a token. */
export const SERVICE_ACCOUNT_TOKEN_TYPE = "kubernetes.io/service-account-token";

/** The policy and its binding (to every namespace labelled a remote namespace), in apply order. */
export function forgeRemoteNamespaceGuard(): k8s.KubernetesObject[] {
  const metadata = { name: REMOTE_NAMESPACE_GUARD, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } };
  return [
    {
      apiVersion: ADMISSION_API,
      kind: "ValidatingAdmissionPolicy",
      metadata,
      spec: {
        matchConstraints: {
          resourceRules: [
            { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["secrets"] },
          ],
        },
        failurePolicy: "Fail",
        validations: [
          {
            expression: `!has(object.type) || object.type != ${JSON.stringify(SERVICE_ACCOUNT_TOKEN_TYPE)}`,
            message:
              `a Secret of type ${SERVICE_ACCOUNT_TOKEN_TYPE} is never stored in a consumer's remote namespace: ` +
              "this cluster would fill it with a token of its own",
            reason: "Forbidden",
          },
        ],
      },
    } as k8s.KubernetesObject,
    {
      apiVersion: ADMISSION_API,
      kind: "ValidatingAdmissionPolicyBinding",
      metadata,
      spec: {
        policyName: REMOTE_NAMESPACE_GUARD,
        validationActions: ["Deny"],
        matchResources: { namespaceSelector: { matchLabels: { [REMOTE_NAMESPACE_LABEL]: "true" } } },
      },
    } as k8s.KubernetesObject,
  ];
}

/** Applies the policy and its binding (idempotent). */
export async function ensureRemoteNamespaceGuard(kc: k8s.KubeConfig, step: string): Promise<void> {
  for (const object of forgeRemoteNamespaceGuard())
    await ensureObject(kc, object).catch(
      describeFailure(`${step}: applying ${object.kind} ${REMOTE_NAMESPACE_GUARD}`, serverOf(kc)),
    );
}

/** Removes the policy and its binding (uninstall); either being gone already is fine. */
export async function deleteRemoteNamespaceGuard(kc: k8s.KubeConfig, step: string): Promise<void> {
  const client = objectClient(kc);
  for (const kind of ["ValidatingAdmissionPolicyBinding", "ValidatingAdmissionPolicy"]) {
    await deleteOptional(() =>
      client.delete({ apiVersion: ADMISSION_API, kind, metadata: { name: REMOTE_NAMESPACE_GUARD } }),
    ).catch(describeFailure(`${step}: removing ${kind} ${REMOTE_NAMESPACE_GUARD}`, serverOf(kc)));
  }
}
