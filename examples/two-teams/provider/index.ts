import * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";
import { Cluster, PeeringToken } from "pulumi-liqo";

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
const name = config.get("name") ?? "a";
const cluster = new Cluster(name, {
  name,
  kubeconfig: readFileSync(config.require("kubeconfig"), "utf8"),
  podCidr: config.require("podCidr"),
  serviceCidr: config.require("serviceCidr"),
  ...deployed,
});
const token = new PeeringToken(`${name}-token`, { cluster });

// What the consumer team needs, and nothing more: no kubeconfig leaves this stack.
export const clusterId = token.clusterId;
export const authUrl = token.authUrl;
export const authCaCert = token.authCaCert;
export const peeringToken = token.token; // a secret output
