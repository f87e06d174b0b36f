// The floor every pulumi figure of this provider is held to: the same resources, with the same
// dependencies, inputs and secret outputs as the program measured, on a dynamic provider that does
// nothing (check, diff, create and read answer at once). The engine still starts Pulumi's dynamic
// provider host for them, so the floor minus the empty program is what any dynamic provider pays.
//
// Config `shape`: `demo` (examples/local-peering: Clusters a and b, a PeeringToken, a Peering and
// a Tunnel) or `peering` (bench/programs/peering: Clusters a and b, and with `peer` the token and
// the Peering).
import * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";

/** Answers at once: every input becomes an output, nothing is ever reached. */
const nothing: pulumi.dynamic.ResourceProvider = {
  check: async (_olds, news) => ({ inputs: news }),
  diff: async (_id, olds, news) => ({ changes: JSON.stringify(olds) !== JSON.stringify(news) }),
  create: async (inputs) => ({ id: "floor", outs: inputs }),
  read: async (id, props) => ({ id, props }),
  update: async (_id, _olds, news) => ({ outs: news }),
  delete: async () => undefined,
};

/** A resource of the floor: `inputs` in, the same out; `secrets` as the real resource marks them. */
class Floor extends pulumi.dynamic.Resource {
  constructor(name: string, inputs: Record<string, pulumi.Input<unknown>>, secrets: string[]) {
    super(nothing, name, inputs, { additionalSecretOutputs: secrets });
  }
}
/** Output `key` of `resource` (the engine sets one property per input, as for every dynamic resource). */
const out = (resource: Floor, key: string): pulumi.Output<unknown> =>
  (resource as unknown as Record<string, pulumi.Output<unknown>>)[key]!;

const config = new pulumi.Config();
// The same agent inputs as the programs measured, when they deploy the agent.
const agentImage = config.get("agentImage");
const deployed = agentImage
  ? {
      agent: { image: agentImage, exposure: "NodePort", nodePort: 8443 },
      gateway: { exposure: "NodePort", nodePort: 51820 },
    }
  : {};
const cluster = (name: string): Floor =>
  new Floor(
    name,
    {
      name,
      kubeconfig: readFileSync(config.require(`${name}Kubeconfig`), "utf8"),
      podCidr: config.require(`${name}PodCidr`),
      serviceCidr: config.require(`${name}ServiceCidr`),
      ...deployed,
      clusterId: `${name}-id`,
      authUrl: `https://${name}:8443`,
      authCaCert: "ca",
    },
    ["kubeconfig"],
  );

const provider = cluster("a");
const consumer = cluster("b");
const shape = config.require("shape");
if (shape === "demo" || config.getBoolean("peer")) {
  const token = new Floor(
    "a-token",
    {
      kubeconfig: out(provider, "kubeconfig"),
      clusterId: out(provider, "clusterId"),
      authUrl: out(provider, "authUrl"),
      authCaCert: out(provider, "authCaCert"),
      token: "token",
      rotation: "1",
    },
    ["token", "kubeconfig"],
  );
  const peering = new Floor(
    "b-to-a",
    {
      consumerKubeconfig: out(consumer, "kubeconfig"),
      consumerClusterId: out(consumer, "clusterId"),
      provider: {
        clusterId: out(token, "clusterId"),
        authUrl: out(token, "authUrl"),
        authCaCert: out(token, "authCaCert"),
        token: out(token, "token"),
      },
      resources: { cpu: "2", memory: "4Gi", pods: 20 },
      providerClusterName: "a",
      tenantNamespace: "tenant",
    },
    ["consumerKubeconfig"],
  );
  if (shape === "demo") {
    new Floor(
      "b-to-a-tunnel",
      {
        consumerKubeconfig: out(peering, "consumerKubeconfig"),
        consumerClusterId: out(peering, "consumerClusterId"),
        providerClusterName: out(peering, "providerClusterName"),
        tenantNamespace: out(peering, "tenantNamespace"),
        serverAddress: config.require("aGatewayAddress"),
        port: 51820,
      },
      ["consumerKubeconfig"],
    );
  }
}
