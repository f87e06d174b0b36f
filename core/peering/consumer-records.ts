/**
 * The consumer's records of a peering, removed together on unpeer: its OutgoingPeering
 * (../virtual-node/outgoing-peering.ts), its identity Secret (../authentication/stored-identity.ts),
 * and last its claim on the pair (claim.ts), so the pair stays claimed until the rest is gone.
 */
import * as k8s from "@kubernetes/client-node";
import { API_GROUP, API_VERSION, SYSTEM_NAMESPACE } from "../api/index.js";
import { identitySecretName } from "../authentication/stored-identity.js";
import { deleteOptional, describeFailure, serverOf } from "../kube/client.js";
import { outgoingPeeringName } from "../virtual-node/outgoing-peering.js";
import { releasePeeringClaim } from "./claim.js";

/** Removes the consumer's records of the peering (OutgoingPeering, the identity Secret, then the claim on the pair). */
export async function deleteConsumerRecords(consumer: k8s.KubeConfig, providerClusterId: string): Promise<void> {
  const custom = consumer.makeApiClient(k8s.CustomObjectsApi);
  const core = consumer.makeApiClient(k8s.CoreV1Api);
  const fail = describeFailure(
    `cleanup: removing the records of the peering with ${providerClusterId}`,
    serverOf(consumer),
  );
  await deleteOptional(() =>
    custom.deleteNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: SYSTEM_NAMESPACE,
      plural: "outgoingpeerings",
      name: outgoingPeeringName(providerClusterId),
    }),
  ).catch(fail);
  await deleteOptional(() =>
    core.deleteNamespacedSecret({ name: identitySecretName(providerClusterId), namespace: SYSTEM_NAMESPACE }),
  ).catch(fail);
  await releasePeeringClaim(consumer, providerClusterId);
}
