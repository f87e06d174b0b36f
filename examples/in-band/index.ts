import * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";
import { Cluster, Peering } from "pulumi-liqo";

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
const cluster = (name: string) =>
  new Cluster(name, {
    name,
    kubeconfig: readFileSync(config.require(`${name}Kubeconfig`), "utf8"),
    podCidr: config.require(`${name}PodCidr`),
    serviceCidr: config.require(`${name}ServiceCidr`),
    ...deployed,
  });

const provider = cluster("a");
const consumer = cluster("b");

// In-band: only the gateways reach each other. The tunnel is built first, with both kubeconfigs;
// b's agent then authenticates and negotiates with a through it.
const peering = new Peering("b-to-a", {
  consumer,
  approach: "in-band",
  providerCluster: provider,
  tunnel: { serverAddress: config.require("aGatewayAddress"), port: config.getNumber("tunnelPort") ?? 51820 },
  resources: { cpu: "1", memory: "2Gi", pods: 10 },
  timeoutSeconds: 120,
});

export const virtualNode = peering.virtualNodeName;
export const status = peering.status;
export const tunnel = peering.tunnelStatus;
