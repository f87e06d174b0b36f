/**
 * The consumer's side of its offloaded pods' identity: for each pod that mounts a service account
 * token, the consumer's agent asks its own API server for a token of the pod's service account,
 * bound to the pod (so it dies with it), and keeps it in the pod's remote namespace, where the
 * provider mounts it as the pod's token (reflection.ts `forgeRemotePod`). A token is asked for
 * again once 80 % of its life has gone, as a kubelet does; the Secret of a pod that is gone goes.
 *
 * The token never appears in a log line, an error or an event: messages name the pod and the
 * Secret only.
 */
import * as k8s from "@kubernetes/client-node";
import { describeFailure, ensureObject, isNotFound, serverOf } from "../../core/kube/client.js";
import { mapLimited, POD_WORKERS } from "../limited.js";
import {
  CONSUMER_POD_UID_LABEL,
  CONSUMER_TOKEN_LABEL,
  forgeConsumerTokenSecret,
  TOKEN_REFRESH_ANNOTATION,
} from "../../core/offloading/reflection.js";

const STEP = "offloading (consumer)";

/** How long a token asked for lives: an hour, as a kubelet's default projected token. */
export const TOKEN_LIFETIME_SECONDS = 3600;

/** The share of a token's life after which a fresh one is asked for. */
const REFRESH_AFTER = 0.8;

/** The consumer cluster's CA, as every namespace's `kube-root-ca.crt` ConfigMap holds it. */
async function clusterCa(kc: k8s.KubeConfig, namespace: string): Promise<string> {
  const configMap = await kc
    .makeApiClient(k8s.CoreV1Api)
    .readNamespacedConfigMap({ name: "kube-root-ca.crt", namespace })
    .catch(describeFailure(`${STEP}: reading ConfigMap ${namespace}/kube-root-ca.crt`, serverOf(kc)));
  const pem = configMap.data?.["ca.crt"];
  if (!pem) throw new Error(`${STEP}: ConfigMap ${namespace}/kube-root-ca.crt holds no ca.crt (${serverOf(kc)})`);
  return pem;
}

/** A token of `pod`'s service account, bound to the pod, and when to ask for the next. */
async function podToken(kc: k8s.KubeConfig, pod: k8s.V1Pod, now: Date): Promise<{ token: string; refreshAt: Date }> {
  const { name, namespace, uid } = pod.metadata!;
  const account = pod.spec?.serviceAccountName || "default";
  const answer = await kc
    .makeApiClient(k8s.CoreV1Api)
    .createNamespacedServiceAccountToken({
      name: account,
      namespace: namespace!,
      body: {
        spec: {
          audiences: [],
          expirationSeconds: TOKEN_LIFETIME_SECONDS,
          boundObjectRef: { apiVersion: "v1", kind: "Pod", name: name!, uid: uid! },
        },
      },
    })
    .catch(
      describeFailure(
        `${STEP}: asking for a token of ServiceAccount ${namespace}/${account} for pod ${namespace}/${name}`,
        serverOf(kc),
      ),
    );
  const token = answer.status?.token;
  if (!token)
    throw new Error(
      `${STEP}: the TokenRequest for pod ${namespace}/${name} came back without a token (${serverOf(kc)})`,
    );
  const expires = new Date(answer.status?.expirationTimestamp ?? now.getTime() + TOKEN_LIFETIME_SECONDS * 1000);
  const refreshAt = new Date(now.getTime() + REFRESH_AFTER * (expires.getTime() - now.getTime()));
  return { token, refreshAt };
}

/**
 * Keeps a fresh token of each of `pods` (those of `namespace` whose token goes with them) in
 * `remoteNamespace` on `provider` (with the peering's identity there), and removes the tokens of
 * pods that are not among them.
 */
export async function reflectTokens(
  kc: k8s.KubeConfig,
  provider: k8s.KubeConfig,
  namespace: string,
  remoteNamespace: string,
  pods: readonly k8s.V1Pod[],
  now: Date,
): Promise<void> {
  const remote = provider.makeApiClient(k8s.CoreV1Api);
  const endpoint = serverOf(provider);
  const held = await remote
    .listNamespacedSecret({ namespace: remoteNamespace, labelSelector: `${CONSUMER_TOKEN_LABEL}=true` })
    .catch(describeFailure(`${STEP}: listing the pods' tokens in ${remoteNamespace}`, endpoint));
  const heldFor = new Map(held.items.map((s) => [s.metadata?.labels?.[CONSUMER_POD_UID_LABEL], s]));
  const due = pods.filter(
    (pod) =>
      !(
        Date.parse(heldFor.get(pod.metadata!.uid)?.metadata?.annotations?.[TOKEN_REFRESH_ANNOTATION] ?? "") >
        now.getTime()
      ),
  );
  // Read once, and only when a token is due.
  let caCert: Promise<string> | undefined;
  await mapLimited(due, POD_WORKERS, async (pod) => {
    const { name, uid } = pod.metadata!;
    const fresh = await podToken(kc, pod, now);
    const secret = forgeConsumerTokenSecret(
      {
        pod: { name: name!, uid: uid!, namespace },
        token: fresh.token,
        caCert: await (caCert ??= clusterCa(kc, namespace)),
        refreshAt: fresh.refreshAt,
      },
      remoteNamespace,
    );
    await ensureObject(provider, secret).catch(
      describeFailure(`${STEP}: keeping pod ${namespace}/${name}'s token in ${remoteNamespace}`, endpoint),
    );
  });
  const wanted = new Set(pods.map((p) => p.metadata!.uid!));
  for (const secret of held.items) {
    if (wanted.has(secret.metadata?.labels?.[CONSUMER_POD_UID_LABEL] ?? "")) continue;
    const secretName = secret.metadata!.name!;
    await remote.deleteNamespacedSecret({ name: secretName, namespace: remoteNamespace }).catch((error: unknown) => {
      if (!isNotFound(error))
        describeFailure(`${STEP}: removing token Secret ${remoteNamespace}/${secretName}`, endpoint)(error);
    });
  }
}
