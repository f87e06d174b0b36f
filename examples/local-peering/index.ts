import * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";
import { Cluster, NamespaceOffloading, Peering, PeeringToken, Tunnel } from "pulumi-liqo";

const config = new pulumi.Config();
// The agent image the clusters' nodes hold (`npm run clusters -- agent-image`): each Cluster deploys the
// agent, the gateway and the route agents from it, at the default exposure (`LoadBalancer`): the
// local clusters' load balancer gives the Services addresses, which each Cluster reads back as its
// authUrl and gatewayEndpoint. Without CIDRs, each Cluster reads its ranges from what the cluster declares.
const agentImage = config.get("agentImage");
// The way out when a cluster is gone for good: `pulumi config set --type bool force true`, `pulumi up`
// (which contacts no cluster), then `pulumi destroy`, which leaves what it cannot reach and lists it.
const force = config.getBoolean("force");
const cluster = (name: string) =>
  new Cluster(name, {
    name,
    kubeconfig: readFileSync(config.require(`${name}Kubeconfig`), "utf8"),
    podCidr: config.get(`${name}PodCidr`),
    serviceCidr: config.get(`${name}ServiceCidr`),
    ...(agentImage ? { agent: { image: agentImage } } : {}),
    force,
  });

const provider = cluster("a");
const consumer = cluster("b");
const token = new PeeringToken("a-token", { cluster: provider, rotation: config.get("rotation") ?? "1", force });
const peering = new Peering("b-to-a", {
  consumer,
  provider: { clusterId: token.clusterId, authUrl: token.authUrl, authCaCert: token.authCaCert, token: token.token },
  resources: { cpu: config.get("cpu") ?? "2", memory: "4Gi", pods: 20 },
  timeoutSeconds: 120,
  force,
});

// The network fabric: a WireGuard tunnel between the gateways, the provider's serving. With no
// serverAddress, the consumer's side dials where a's gateway says it is reached (a's Cluster's
// gatewayEndpoint), once it has checked that endpoint; `aGatewayAddress` dials an address of your own.
const serverAddress = config.get("aGatewayAddress");
const tunnel = new Tunnel("b-to-a-tunnel", {
  peering,
  ...(serverAddress ? { serverAddress } : {}),
  port: config.getNumber("tunnelPort") ?? 51820,
  timeoutSeconds: 120,
  force,
});

// Offloading: this namespace of b (it must exist) runs its pods on a too (`podOffloading`, default
// local-and-remote; `remote`: only there), in a namespace made for b there; its Services follow them.
const offloadNamespace = config.get("offloadNamespace");
const podOffloading = config.get("podOffloading") as "local-and-remote" | "remote" | "local" | undefined;
const offloading = offloadNamespace
  ? new NamespaceOffloading("b-offloads", {
      consumer,
      namespace: offloadNamespace,
      peerings: [peering],
      podOffloading,
      force,
    })
  : undefined;

export const virtualNode = peering.virtualNodeName;
export const offloadedAs = offloading?.remoteNamespace;
export const tunnelStatus = tunnel.status;
// How each side sees the other's pods (remapped when the pod CIDRs overlap).
export const providerPodsAsSeenByConsumer = tunnel.consumer.remotePodCidrAsSeen;
export const consumerPodsAsSeenByProvider = tunnel.provider.remotePodCidrAsSeen;
export const offer = peering.offer;
export const tokenId = token.tokenId;
// A secret output: the tests check that it is stored only as ciphertext.
export const peeringToken = token.token;
