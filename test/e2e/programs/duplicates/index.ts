import * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";
import { Cluster, Peering, PeeringToken, Tunnel } from "pulumi-liqo";

const config = new pulumi.Config();
// The agent image the clusters' nodes hold (`npm run clusters -- agent-image`): each Cluster deploys the
// agent, the gateway and the route agents from it, on the node ports the local clusters open.
const agentImage = config.get("agentImage");
const deployed = agentImage
  ? {
      agent: { image: agentImage, exposure: "NodePort" as const, nodePort: 8443 },
      gateway: { exposure: "NodePort" as const, nodePort: 51820 },
    }
  : {};
const cluster = (resourceName: string, name: string) =>
  new Cluster(resourceName, {
    name,
    kubeconfig: readFileSync(config.require(`${name}Kubeconfig`), "utf8"),
    podCidr: config.require(`${name}PodCidr`),
    serviceCidr: config.require(`${name}ServiceCidr`),
    ...deployed,
  });

const provider = cluster("a", "a");
const consumer = cluster("b", "b");
const token = new PeeringToken("a-token", { cluster: provider });
const peer = (name: string) =>
  new Peering(name, {
    consumer,
    provider: { clusterId: token.clusterId, authUrl: token.authUrl, authCaCert: token.authCaCert, token: token.token },
    resources: { cpu: "1", memory: "1Gi", pods: 10 },
    timeoutSeconds: 60,
  });

const peering = peer("b-to-a");
// The mistakes: the same pair peered twice, and a's cluster declared twice.
if (config.getBoolean("duplicatePeering")) peer("b-to-a-again");
if (config.getBoolean("duplicateCluster")) cluster("a-again", "a");
// Two tunnels that a's gateway would serve on one UDP port: b-to-a's, and an in-band a-to-b's.
if (config.getBoolean("portClash")) {
  new Tunnel("b-a", { peering, serverAddress: config.require("aGatewayAddress"), port: 51820 });
  new Peering("a-to-b", {
    approach: "in-band",
    consumer: provider,
    providerCluster: consumer,
    tunnel: { server: "consumer", serverAddress: config.require("aGatewayAddress"), port: 51820 },
    resources: { pods: 5 },
  });
}

export const virtualNode = peering.virtualNodeName;
export const providerClusterId = provider.clusterId;
