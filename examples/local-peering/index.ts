import * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";
import { Cluster, Peering, PeeringToken, Tunnel } from "pulumi-liqo";

const config = new pulumi.Config();
// The agent image the nodes hold (`npm run clusters -- agent-image`): each Cluster deploys the
// agent, the gateway and the route agents as pods, exposed on the node ports the local clusters
// open. Without it, an agent already running in each cluster is checked.
const agentImage = config.get("agentImage");
const cluster = (name: string) =>
  new Cluster(name, {
    name,
    kubeconfig: readFileSync(config.require(`${name}Kubeconfig`), "utf8"),
    podCidr: config.require(`${name}PodCidr`),
    serviceCidr: config.require(`${name}ServiceCidr`),
    ...(agentImage
      ? {
          agent: { image: agentImage, exposure: "NodePort" as const, nodePort: 8443 },
          // The gateway runs on host network: a Tunnel reaches it on its node at the tunnel's port, whatever
          // this Service's node port is, so moving the tunnel changes the Tunnel only.
          gateway: { exposure: "NodePort" as const, nodePort: 51820 },
        }
      : {}),
  });

const provider = cluster("a");
const consumer = cluster("b");
const token = new PeeringToken("a-token", { cluster: provider, rotation: config.get("rotation") ?? "1" });
const peering = new Peering("b-to-a", {
  consumer,
  provider: { clusterId: token.clusterId, authUrl: token.authUrl, authCaCert: token.authCaCert, token: token.token },
  resources: { cpu: config.get("cpu") ?? "2", memory: "4Gi", pods: 20 },
  timeoutSeconds: 120,
});

// The network fabric: a WireGuard tunnel between the gateways, the provider's serving.
const tunnel = new Tunnel("b-to-a-tunnel", {
  peering,
  serverAddress: config.require("aGatewayAddress"),
  port: config.getNumber("tunnelPort") ?? 51820,
  timeoutSeconds: 120,
});

export const virtualNode = peering.virtualNodeName;
export const tunnelStatus = tunnel.status;
// How each side sees the other's pods (remapped when the pod CIDRs overlap).
export const providerPodsAsSeenByConsumer = tunnel.consumer.remotePodCidrAsSeen;
export const consumerPodsAsSeenByProvider = tunnel.provider.remotePodCidrAsSeen;
export const offer = peering.offer;
export const tokenId = token.tokenId;
// A secret output: the tests check that it is stored only as ciphertext.
export const peeringToken = token.token;
