import * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";
import { Cluster, Peering, PeeringToken } from "pulumi-liqo";

const config = new pulumi.Config();
// The agent image the clusters' nodes hold (`npm run clusters -- agent-image`): each Cluster deploys the
// agent, the gateway and the route agents from it, on the node ports the local clusters open, as
// examples/local-peering does. Without it, an agent must already run in each cluster.
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
// The measured step: with `peer`, one out-of-band peering (authentication, negotiation, node Ready).
if (config.getBoolean("peer")) {
  const token = new PeeringToken("a-token", { cluster: provider });
  new Peering("b-to-a", {
    consumer,
    provider: { clusterId: token.clusterId, authUrl: token.authUrl, authCaCert: token.authCaCert, token: token.token },
    resources: { cpu: "2", memory: "4Gi", pods: 20 },
  });
}
