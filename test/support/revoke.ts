/**
 * What revokes a peering's identity from outside its `Peering`: the consumer's own identity handed
 * to the provider's auth service `/v1/revoke` (as anyone holding that identity can), and the
 * virtual node's Ready condition the consumer's heartbeat then posts.
 */
import * as k8s from "@kubernetes/client-node";
import { revokeIdentity, type RevokeIdentityResult } from "../../core/authentication/identity.js";
import { loadKubeconfig } from "../../core/kube/client.js";
import { getIdentityKubeconfig } from "../../core/authentication/stored-identity.js";
import { poll } from "../../core/wait/poll.js";
import type { AuthServiceAt } from "../../harness/peering-pair.js";

/** Revokes the identity that `consumer` holds for provider `providerClusterId`, with that identity's own certificate. */
export async function revokeHeldIdentity(
  consumer: k8s.KubeConfig,
  providerClusterId: string,
  auth: AuthServiceAt,
): Promise<RevokeIdentityResult> {
  const text = await getIdentityKubeconfig(consumer, providerClusterId);
  if (!text) throw new Error(`test: the consumer holds no identity for provider ${providerClusterId}`);
  const user = loadKubeconfig(text, "stored identity").getCurrentUser()!;
  const decode = (data: string | undefined): string => Buffer.from(data ?? "", "base64").toString("utf8");
  return revokeIdentity({
    authUrl: auth.authUrl,
    authCaPem: auth.authCaCert,
    certificatePem: decode(user.certData),
    keyPem: decode(user.keyData),
    timeoutMs: 20_000,
  });
}

/** Waits until Node `nodeName`'s Ready condition has status `status`; resolves that condition. */
export async function waitForReadyStatus(
  consumer: k8s.KubeConfig,
  nodeName: string,
  status: "True" | "False",
  timeoutMs: number,
): Promise<k8s.V1NodeCondition> {
  const core = consumer.makeApiClient(k8s.CoreV1Api);
  return poll(
    { step: "test", object: `Node ${nodeName} Ready=${status}`, endpoint: consumer.getCurrentCluster()!.server },
    { timeoutMs, intervalMs: 200 },
    async () => {
      const ready = (await core.readNode({ name: nodeName })).status?.conditions?.find((c) => c.type === "Ready");
      return ready?.status === status
        ? { done: true, value: ready }
        : { done: false, state: `Ready=${ready?.status} (${ready?.reason}: ${ready?.message})` };
    },
  );
}
