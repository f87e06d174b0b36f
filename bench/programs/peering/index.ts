import * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";
import { Cluster, Peering, PeeringToken } from "pulumi-liqo";

const config = new pulumi.Config();
const cluster = (name: string) =>
  new Cluster(name, {
    name,
    kubeconfig: readFileSync(config.require(`${name}Kubeconfig`), "utf8"),
    podCidr: config.require(`${name}PodCidr`),
    serviceCidr: config.require(`${name}ServiceCidr`),
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
