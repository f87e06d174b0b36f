import * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";
import { Cluster, Peering, PeeringToken, Tunnel } from "pulumi-liqo";

/** One cluster of the mesh, as the stack's config lists it. */
interface MeshMember {
  readonly name: string;
  /** Path of its admin kubeconfig. */
  readonly kubeconfig: string;
  readonly podCidr: string;
  readonly serviceCidr: string;
  /** Where the other clusters' gateways reach its gateway. */
  readonly gatewayAddress: string;
}

type Topology = "all-to-all" | "hub-and-spoke";

/** Who consumes from whom: every ordered pair, or the hub (the first member) with each spoke both ways. */
function peeringsOf(names: readonly string[], topology: Topology): [consumer: string, provider: string][] {
  const [hub, ...spokes] = names;
  if (topology === "hub-and-spoke")
    return spokes.flatMap((spoke): [string, string][] => [
      [spoke, hub!],
      [hub!, spoke],
    ]);
  return names.flatMap((consumer) =>
    names.filter((provider) => provider !== consumer).map((provider): [string, string] => [consumer, provider]),
  );
}

/** The whole mesh from one declaration: a Cluster each, a token and a peering per ordered pair, and one tunnel per pair. */
function mesh(members: readonly MeshMember[], topology: Topology) {
  const byName = new Map(members.map((m) => [m.name, m]));
  const clusters = new Map(
    members.map((m) => [
      m.name,
      new Cluster(m.name, {
        name: m.name,
        kubeconfig: readFileSync(m.kubeconfig, "utf8"),
        podCidr: m.podCidr,
        serviceCidr: m.serviceCidr,
        ...deployed,
      }),
    ]),
  );
  let tunnels = 0;
  const peerings = peeringsOf(
    members.map((m) => m.name),
    topology,
  ).map(([consumer, provider]) => {
    // A token binds to the first consumer that uses it: each consumer gets its own from each provider.
    const token = new PeeringToken(`${provider}-token-for-${consumer}`, { cluster: clusters.get(provider)! });
    const peering = new Peering(`${consumer}-to-${provider}`, {
      consumer: clusters.get(consumer)!,
      provider: {
        clusterId: token.clusterId,
        authUrl: token.authUrl,
        authCaCert: token.authCaCert,
        token: token.token,
      },
      resources: { sharePercent: 25 },
      timeoutSeconds: 120,
    });
    // One tunnel carries a pair's traffic both ways: it rides on the peering whose consumer sorts
    // first. A gateway serving several tunnels needs a UDP port for each: one per tunnel here.
    const tunnel =
      consumer < provider
        ? new Tunnel(`${consumer}-${provider}`, {
            peering,
            serverAddress: byName.get(provider)!.gatewayAddress,
            port: 51820 + tunnels++,
            timeoutSeconds: 120,
          })
        : undefined;
    return { name: `${consumer}-to-${provider}`, peering, tunnel };
  });
  return { clusters, peerings };
}

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
const built = mesh(
  config.requireObject<MeshMember[]>("clusters"),
  (config.get("topology") ?? "all-to-all") as Topology,
);

export const virtualNodes = Object.fromEntries(built.peerings.map((p) => [p.name, p.peering.virtualNodeName]));
export const tunnels = Object.fromEntries(
  built.peerings.filter((p) => p.tunnel).map((p) => [p.name, p.tunnel!.status]),
);
