import * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";
import { Cluster, NamespaceOffloading, Peering, Tunnel } from "pulumi-liqo";

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
const name = config.get("name") ?? "b";
// Set once the provider is gone for good (`pulumi up`, then `pulumi destroy`): see docs/operations.md, "When the provider is gone".
const force = config.getBoolean("force") ?? false;
const cluster = new Cluster(name, {
  name,
  kubeconfig: readFileSync(config.require("kubeconfig"), "utf8"),
  podCidr: config.require("podCidr"),
  serviceCidr: config.require("serviceCidr"),
  ...deployed,
});

// The provider team's outputs, read from its stack; the token stays a secret.
const provider = new pulumi.StackReference(config.require("providerStack"));
const peering = new Peering(`${name}-to-provider`, {
  consumer: cluster,
  provider: {
    clusterId: provider.requireOutput("clusterId") as pulumi.Output<string>,
    authUrl: provider.requireOutput("authUrl") as pulumi.Output<string>,
    authCaCert: provider.requireOutput("authCaCert") as pulumi.Output<string>,
    token: provider.requireOutput("peeringToken") as pulumi.Output<string>,
  },
  resources: { cpu: "1", memory: "2Gi", pods: 10 },
  force,
});

// The tunnel, when the provider team says where its gateway serves.
const gatewayAddress = config.get("gatewayAddress");
const tunnel = gatewayAddress
  ? new Tunnel(`${name}-to-provider-tunnel`, { peering, serverAddress: gatewayAddress, force })
  : undefined;

// Namespaces of b (made beforehand: an offloading does not own its namespace) whose pods may run on the
// provider, e.g. `pulumi config set offloadNamespaces shop,cart`. Offloaded pods need the tunnel.
const offloadings = (config.get("offloadNamespaces") ?? "")
  .split(",")
  .filter((namespace) => namespace !== "")
  .map(
    (namespace) =>
      new NamespaceOffloading(`${name}-${namespace}`, { consumer: cluster, namespace, peerings: [peering], force }),
  );

export const virtualNode = peering.virtualNodeName;
export const offloadingStatus = offloadings.map((o) => o.status);
export const tunnelStatus = tunnel?.status;
export const consumerInterface = tunnel?.consumer.interfaceName;
export const providerInterface = tunnel?.provider.interfaceName;
