/**
 * A Tunnel resource whose peering was unpeered first (its consumer holds no identity for the
 * provider any more), on real clusters and gateways, through the `Tunnel` dynamic provider's own
 * read and delete: refresh reports it as it is (never `Connected`), delete without `force` fails at
 * once naming why and changes nothing, and with `force` removes the consumer's side.
 */
import {
  pulumiProvider as tunnelResource,
  type TunnelInputs,
  type TunnelOutputs,
} from "../../core/resources/tunnel.js";
import { deletePeering } from "../../core/peering/peering.js";
import { getTunnelEndpoint } from "../../core/network-fabric/endpoints.js";
import { endpointRefOf } from "../../core/network-fabric/tunnel.js";
import { poll } from "../../core/wait/poll.js";
import { sharedLab } from "../../harness/labs.js";
import { tunnelTraces } from "../../harness/leaks.js";
import { peerPair, quietProgress, unpeerPair } from "../support/tunnel-pair.js";

/** Each test's bound: a peering, its tunnel, an unpeer, and refresh of the tunnel left. */
const TEST_BOUND_MS = 5 * 60_000;

describe("a tunnel whose peering was unpeered first", () => {
  test(
    "GIVEN a connected Tunnel WHEN its peering is unpeered THEN refresh says the provider cannot be read and why, " +
      "delete without force fails at once changing nothing, and with force removes the consumer's side",
    async () => {
      const pair = await peerPair(await sharedLab());
      const inputs: TunnelInputs = {
        consumerKubeconfig: pair.consumer.kubeconfig,
        consumerClusterId: pair.consumer.clusterId,
        providerClusterId: pair.provider.clusterId,
        providerClusterName: "a",
        tenantNamespace: pair.record.tenantNamespace,
        serverAddress: pair.a.publicAddress,
        port: 51825,
        timeoutSeconds: 90,
      };
      try {
        const created = await tunnelResource.create!(inputs);
        const { id } = created;
        const outs = created.outs as TunnelOutputs;
        expect(outs.status).toBe("Connected");
        const consumerRef = endpointRefOf(pair.sides, "consumer");

        // The peering goes first: the provider revokes the identity (its tenant namespace, with its endpoint, goes too).
        await deletePeering(
          pair.consumer.kubeconfig,
          pair.record,
          { authUrl: pair.a.authUrl, authCaCert: pair.provider.caPem },
          { force: false, timeoutMs: 30_000 },
          quietProgress,
        );

        const read = await tunnelResource.read!(id, outs);
        // Whatever the consumer's gateway last wrote (Connected, until its next probe fails), the tunnel is not reported up.
        expect(read.props!.status).toMatch(
          new RegExp(
            `^provider a: cannot be read: consumer b holds no identity for it any more \\(its Peering was deleted or ` +
              `unpeered\\); consumer b: its TunnelEndpoint ${consumerRef.namespace}/${consumerRef.name} remains \\(.+\\)$`,
          ),
        );

        const started = Date.now();
        await expect(tunnelResource.delete!(id, outs)).rejects.toThrow(
          new RegExp(
            '^Tunnel "[^"]+": delete failed: network fabric: provider a is unreachable: through the peering\'s identity: ' +
              "consumer b holds no identity for it any more .*Nothing was changed\\. .*set force: true on the Tunnel",
          ),
        );
        expect(Date.now() - started).toBeLessThan(2_000);
        expect(await getTunnelEndpoint(pair.consumer.kc, consumerRef, "test")).toBeDefined();

        const forced = Date.now();
        await tunnelResource.delete!(id, { ...outs, force: true });
        expect(Date.now() - forced).toBeLessThan(30_000);
        expect(await getTunnelEndpoint(pair.consumer.kc, consumerRef, "test")).toBeUndefined();
        expect(await tunnelTraces(pair.b, [outs.consumer!.interfaceName])).toEqual([]);
        // The provider's side went with the tenant namespace: its gateway takes it down by itself.
        await poll(
          { step: "test", object: "a's side of the tunnel taken down", endpoint: pair.a.netns },
          { timeoutMs: 60_000, intervalMs: 1_000 },
          async () => {
            const left = await tunnelTraces(pair.a, [outs.provider!.interfaceName]);
            return left.length === 0 ? { done: true, value: undefined } : { done: false, state: left.join("; ") };
          },
        );
      } finally {
        await unpeerPair(pair);
      }
    },
    TEST_BOUND_MS,
  );
});
