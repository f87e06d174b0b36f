import * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";
import { Cluster, NamespaceOffloading, Peering, PeeringToken, Tunnel } from "pulumi-liqo";

// The README's first program as users write it (exposure, tunnel address and CIDRs left to their
// defaults), and label-selected offloading: b's namespaces labelled matrix=offloaded run their pods on a.
const config = new pulumi.Config();
const agentImage = config.require("agentImage");
const cluster = (name: string) =>
  new Cluster(name, {
    name,
    kubeconfig: readFileSync(config.require(`${name}Kubeconfig`), "utf8"),
    agent: { image: agentImage },
  });
const a = cluster("a");
const b = cluster("b");
const token = new PeeringToken("a-token", { cluster: a });
const peering = new Peering("b-to-a", {
  consumer: b,
  provider: { clusterId: token.clusterId, authUrl: token.authUrl, authCaCert: token.authCaCert, token: token.token },
  resources: { cpu: "2", memory: "4Gi", pods: 20 },
});
const tunnel = new Tunnel("b-to-a", { peering });
new NamespaceOffloading("b-offloads", {
  consumer: b,
  namespaceSelector: { matchLabels: { matrix: "offloaded" } },
  peerings: [peering],
  podOffloading: "remote",
});

export const virtualNode = peering.virtualNodeName;
export const tunnelStatus = tunnel.status;
export const podPlacement = b.podPlacement;
export const versions = { a: a.kubernetesVersion, b: b.kubernetesVersion };
