import * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";
import { Cluster, Peering, PeeringToken } from "pulumi-liqo";

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
/** Cluster `name` from the lab's config (`of` names whose kubeconfig path and CIDRs). */
const cluster = (name: string, of = name, kubeconfigPath = config.require(`${of}Kubeconfig`)) =>
  new Cluster(name, {
    name,
    kubeconfig: readFileSync(kubeconfigPath, "utf8"),
    podCidr: config.require(`${of}PodCidr`),
    serviceCidr: config.require(`${of}ServiceCidr`),
    ...deployed,
  });
const handoverOf = (token: PeeringToken) => ({
  clusterId: token.clusterId,
  authUrl: token.authUrl,
  authCaCert: token.authCaCert,
  token: token.token,
});

const a = cluster("a");
const b = cluster("b");
const aToken = new PeeringToken("a-token", { cluster: a });
const bToken = new PeeringToken("b-token", { cluster: b });

// One mistake at a time, as a user made it.
switch (config.get("attempt")) {
  case "self-peering":
    // b peers with itself: its own token's handover.
    new Peering("b-to-b", {
      consumer: b,
      provider: handoverOf(bToken),
      resources: { cpu: "1", memory: "1Gi", pods: 5 },
    });
    break;
  case "malformed-kubeconfig":
    // A kubeconfig broken by hand: b's, with a line added after its client key.
    cluster("c", "b", config.require("malformedKubeconfig"));
    break;
  case "pasted-token":
    // The provider's token pasted into config (as the other team got it), with its line's end.
    new Peering("b-to-a", {
      consumer: b,
      provider: {
        clusterId: aToken.clusterId,
        authUrl: aToken.authUrl,
        authCaCert: aToken.authCaCert,
        token: config.requireSecret("pastedToken"),
      },
      resources: { cpu: "1", memory: "1Gi", pods: 5 },
      timeoutSeconds: 120,
    });
    break;
}

export const aPeeringToken = aToken.token;
export const bPeeringToken = bToken.token;
