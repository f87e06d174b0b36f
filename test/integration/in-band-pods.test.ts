/**
 * In-band peering with the project running as pods, as in any cluster: a private lab of two
 * clusters with two nodes each, the same pod CIDR on both, under the `gateway-only` profile (only
 * the gateways' UDP ports are open between the clusters). a's agent and gateway run on node 2, away
 * from its API server: a's gateway relays its API server and auth service on its tunnel address.
 * b's agent authenticates and negotiates through the tunnel; pods of b on both nodes reach pods of
 * a. Then b's gateway pod is deleted and comes back on b's other node with the same key: traffic
 * flows again, and b's agent, now on a node without the gateway, renegotiates through the tunnel
 * (a route agent sends a's tunnel address to the gateway's node). b, with the identity it was
 * issued, cannot make a's gateway serve the control plane on a tunnel of its own.
 */
import * as k8s from "@kubernetes/client-node";
import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  SYSTEM_NAMESPACE,
  tenantNamespace,
  type TunnelEndpoint,
} from "../../core/api/index.js";
import { AGENT_NAME, COMPONENT_LABEL } from "../../core/cluster/agent-components.js";
import { loadKubeconfig } from "../../core/kube/client.js";
import { Cidr } from "../../core/net/cidr.js";
import { getTunnelEndpoint } from "../../core/network-fabric/endpoints.js";
import { translateAddress } from "../../core/network-fabric/remap.js";
import {
  TUNNEL_DEFAULTS,
  tunnelEndpointName,
  tunnelLinkCidr,
  type TunnelSettings,
} from "../../core/network-fabric/tunnel-plan.js";
import { createInBandPeering, deleteInBandPeering, providerTunnelIp } from "../../core/peering/in-band.js";
import { getIdentityKubeconfig } from "../../core/authentication/stored-identity.js";
import { nodeReadiness } from "../../core/virtual-node/node.js";
import { poll } from "../../core/wait/poll.js";
import { runIn } from "../../host/exec.js";
import type { ClusterState } from "../../local-cluster/lab.js";
import { AUTH_SERVICE_PORT } from "../../local-cluster/control-plane.js";
import { coreOf, podName, podtoolFrom, runPodtool, setCordoned } from "../../local-cluster/pods.js";
import { installWithAgentPods, uninstallClusters } from "../../harness/install.js";
import { withLab } from "../../harness/labs.js";
import { projectTraces } from "../../harness/leaks.js";
import { gatewayWireguard, projectRoutes, runningGateway } from "../../harness/gateway-pods.js";
import { quietProgress } from "../support/tunnel-pair.js";

/** Each test's bound: a private lab of two nodes, both installs, an in-band peering and its tunnel. */
const TEST_BOUND_MS = 10 * 60_000;

const NODES = [1, 2] as const;
const POD_CIDR = "10.150.0.0/16";

/** The node the control agent's pod of `cluster` runs on. */
async function controlAgentNode(cluster: ClusterState): Promise<string | undefined> {
  const pods = await coreOf(cluster).listNamespacedPod({
    namespace: SYSTEM_NAMESPACE,
    labelSelector: `${COMPONENT_LABEL}=${AGENT_NAME}`,
  });
  return pods.items.find((p) => !p.metadata?.deletionTimestamp)?.spec?.nodeName;
}

/** What listens for TCP and which links exist, on every node of `cluster`. */
async function nodeSockets(cluster: ClusterState): Promise<string[]> {
  const lines: string[] = [];
  for (const node of cluster.nodes) {
    lines.push(...(await runIn(node.netns, "ss", ["-ltnH"])).split("\n").map((l) => `${node.name}: ${l.trim()}`));
    lines.push(...(await runIn(node.netns, "ip", ["-o", "-br", "link"])).split("\n").map((l) => `${node.name}: ${l}`));
  }
  return lines.filter((l) => !l.endsWith(": ")).sort();
}

describe("in-band peering with the agent and gateway as pods (private lab: a and b, two nodes each, one pod CIDR)", () => {
  test(
    "GIVEN a's agent and gateway on the node without its API server and only the gateways' ports open WHEN b peers " +
      "in-band THEN b's agent gets its identity and offer through the tunnel and pods of b on both nodes reach a's; " +
      "b's gateway deleted comes back on the other node with its key, traffic flows and b's agent renegotiates " +
      "through it; b's own tunnel asking a's gateway to serve the control plane is refused and changes nothing",
    async () => {
      await withLab(
        [
          { name: "a", podCidr: POD_CIDR },
          { name: "b", podCidr: POD_CIDR },
        ],
        { nodes: 2, profile: "gateway-only" },
        async (lab) => {
          const [a, b] = [lab.clusters[0]!, lab.clusters[1]!];
          const tunnel: TunnelSettings = {
            server: "provider",
            serverAddress: a.publicAddress,
            ...TUNNEL_DEFAULTS,
            behindNat: [],
          };
          let request: Parameters<typeof createInBandPeering>[0] | undefined;
          try {
            const pods = new Map<string, k8s.V1Pod>();
            for (const cluster of [a, b])
              for (const node of NODES) pods.set(podName(cluster, node), await runPodtool(cluster, node));
            // Each cluster's project starts on node 2 (node 1 cordoned meanwhile); node 1 holds the API server.
            for (const cluster of [a, b]) await setCordoned(coreOf(cluster), [`${cluster.name}-n1`], true);
            const [provider, consumer] = [await installWithAgentPods(a), await installWithAgentPods(b)];
            for (const cluster of [a, b]) {
              await setCordoned(coreOf(cluster), [`${cluster.name}-n1`], false);
              expect((await runningGateway(cluster)).node).toBe(`${cluster.name}-n2`);
              expect(await controlAgentNode(cluster)).toBe(`${cluster.name}-n2`);
            }

            request = {
              consumerKubeconfig: consumer.kubeconfig,
              providerKubeconfig: provider.kubeconfig,
              authPort: AUTH_SERVICE_PORT,
              tunnel,
              resources: { cpu: "1", memory: "2Gi", pods: 5 },
              timeoutMs: 180_000,
            };
            const record = await createInBandPeering(request, quietProgress);
            expect(record.offer).toEqual({ cpu: "1", memory: "2Gi", pods: 5 });
            const ip = providerTunnelIp(
              { me: { clusterId: consumer.clusterId } as never, them: { clusterId: provider.clusterId } as never },
              tunnel,
            );
            const identityText = (await getIdentityKubeconfig(consumer.kc, provider.clusterId))!;
            expect(loadKubeconfig(identityText, "identity").getCurrentCluster()?.server).toBe(`https://${ip}:6443`);
            expect(nodeReadiness(await coreOf(b).readNode({ name: record.virtualNodeName })).ready).toBe(true);

            // Pods of b on both nodes reach a's pods, remapped, through the tunnel.
            const endpoint = (await getTunnelEndpoint(
              consumer.kc,
              {
                namespace: SYSTEM_NAMESPACE,
                name: tunnelEndpointName(provider.clusterId),
              },
              "test",
            ))!;
            const asSeen = Cidr.parse(endpoint.status!.remotePodCidrAsSeen!);
            expect(asSeen.toString()).not.toBe(POD_CIDR);
            expect(endpoint.status?.remoteTunnelAddress).toBe(ip);
            const seenFromB = (node: number): string =>
              translateAddress(pods.get(podName(a, node))!.status!.podIP!, Cidr.parse(POD_CIDR), asSeen);
            const ifname = endpoint.status!.interfaceName!;
            const txBefore = (await gatewayWireguard(b, ifname)).peers[0]!.txBytes;
            for (const from of NODES)
              for (const to of NODES) {
                expect(await podtoolFrom(b, from, "ping", seenFromB(to), 60_000)).toMatch(/^reply from /);
                expect(await podtoolFrom(b, from, "tcp", `${seenFromB(to)}:8080`)).toContain(
                  `podtool ${podName(a, to)} `,
                );
              }
            expect((await gatewayWireguard(b, ifname)).peers[0]!.txBytes).toBeGreaterThan(txBefore);

            // b's gateway pod deleted, node 2 cordoned: it comes back on node 1 with the same key, and
            // the route agent of node 2 sends a's tunnel address and pods there.
            const key = (await gatewayWireguard(b, ifname)).publicKey;
            const gateway = await runningGateway(b);
            await setCordoned(coreOf(b), [`${b.name}-n2`], true);
            await coreOf(b).deleteNamespacedPod({ name: gateway.name, namespace: SYSTEM_NAMESPACE });
            expect((await runningGateway(b, gateway.name)).node).toBe(`${b.name}-n1`);
            await setCordoned(coreOf(b), [`${b.name}-n2`], false);
            // Traffic first: the new pod is ready before its first pass has brought the interface up.
            for (const from of NODES)
              expect(await podtoolFrom(b, from, "tcp", `${seenFromB(from)}:8080`, 90_000)).toContain(
                `podtool ${podName(a, from)} `,
              );
            expect((await gatewayWireguard(b, ifname)).publicKey).toBe(key);
            expect(await projectRoutes(b)).toContainEqual(
              expect.stringMatching(new RegExp(`^${b.name}-n2: ${ip} via `)),
            );
            // b's agent stays on node 2, the gateway on node 1: a new request still goes through the tunnel.
            expect(await controlAgentNode(b)).toBe(`${b.name}-n2`);
            const resized = await createInBandPeering(
              { ...request, resources: { cpu: "2", memory: "2Gi", pods: 5 } },
              quietProgress,
            );
            expect(resized.offer).toEqual({ cpu: "2", memory: "2Gi", pods: 5 });

            // b, with its identity on a (pointed at a's API server from here), asks a's gateway through
            // a tunnel of its own to serve a's control plane: refused naming the field; nothing listens
            // or appears on a's nodes.
            const asB = loadKubeconfig(identityText, "identity");
            const cluster = asB.getCurrentCluster()!;
            asB.clusters = [{ ...cluster, server: a.apiServerUrl }];
            const before = await nodeSockets(a);
            const forged: TunnelEndpoint = {
              apiVersion: API_GROUP_VERSION,
              kind: "TunnelEndpoint",
              metadata: {
                name: tunnelEndpointName(consumer.clusterId),
                namespace: tenantNamespace(consumer.clusterId),
              },
              spec: {
                remoteClusterId: consumer.clusterId,
                remoteClusterName: "b",
                role: "server",
                listenPort: 51830,
                mtu: 1420,
                keepaliveSeconds: 0,
                linkCidr: tunnelLinkCidr(consumer.clusterId, provider.clusterId).toString(),
                remote: {},
                inBandPorts: { apiServer: 443, auth: 8444 },
              },
            };
            const objects = asB.makeApiClient(k8s.CustomObjectsApi);
            const where = {
              group: API_GROUP,
              version: API_VERSION,
              namespace: forged.metadata.namespace!,
              plural: "tunnelendpoints",
            };
            await objects.createNamespacedCustomObject({ ...where, body: forged });
            try {
              const refused = await poll(
                { step: "test", object: "the forged TunnelEndpoint's status", endpoint: a.apiServerUrl },
                { timeoutMs: 30_000, intervalMs: 250 },
                async () => {
                  const seen = await getTunnelEndpoint(
                    asB,
                    { namespace: where.namespace, name: forged.metadata.name! },
                    "test",
                  );
                  return seen?.status?.phase === "Refused"
                    ? { done: true, value: seen }
                    : { done: false, state: seen?.status?.phase ?? "no status" };
                },
              );
              expect(refused.status?.message).toMatch(/^refused spec\.inBandPorts: /);
              expect(refused.metadata.finalizers ?? []).toEqual([]);
              expect(await nodeSockets(a)).toEqual(before);
            } finally {
              await objects.deleteNamespacedCustomObject({ ...where, name: forged.metadata.name! });
            }
          } finally {
            if (request)
              await deleteInBandPeering(
                request.consumerKubeconfig,
                request.providerKubeconfig,
                undefined,
                60_000,
                quietProgress,
              );
            await uninstallClusters([a, b]);
          }
          for (const cluster of [a, b]) expect(await projectTraces(cluster.kubeconfig)).toEqual([]);
        },
      );
    },
    TEST_BOUND_MS,
  );
});
