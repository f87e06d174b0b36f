import * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";

const config = new pulumi.Config();

/** Any resource of the package: the engine knows it by its type token alone. */
class LiqoResource extends pulumi.CustomResource {}

/**
 * A resource of the plugin, by its type token, as a program of any language sees it: inputs as
 * the schema names them, and the outputs asked for.
 */
function liqo(
  type: string,
  name: string,
  inputs: pulumi.Inputs,
  outputs: readonly string[],
  opts?: pulumi.CustomResourceOptions,
): Record<string, pulumi.Output<unknown>> {
  const props: pulumi.Inputs = { ...inputs };
  for (const output of outputs) props[output] ??= undefined;
  return new LiqoResource(`liqo:index:${type}`, name, props, opts) as unknown as Record<string, pulumi.Output<unknown>>;
}

const agentImage = config.get("agentImage");
const deployed = agentImage
  ? {
      agent: { image: agentImage, exposure: "NodePort", nodePort: 8443 },
      gateway: { exposure: "NodePort", nodePort: 51820 },
    }
  : {};
const cluster = (name: string, opts?: pulumi.CustomResourceOptions) =>
  liqo(
    "Cluster",
    name,
    {
      name,
      kubeconfig: pulumi.secret(readFileSync(config.require(`${name}Kubeconfig`), "utf8")),
      podCidr: config.require(`${name}PodCidr`),
      serviceCidr: config.require(`${name}ServiceCidr`),
      ...deployed,
    },
    ["access", "clusterId", "authUrl"],
    opts,
  );

/** The Peering's create timeout, when a test gives one: its customTimeouts, the deadline the plugin gives the create. */
const peeringCreateTimeout = config.get("peeringCreateTimeout");

/** The peering b -> a, out-of-band, through the plugin; none when the program shows a create that never finishes. */
function peer() {
  const a = cluster("a");
  const b = cluster("b");
  const token = liqo("PeeringToken", "a-token", { cluster: a["access"], rotation: "1" }, [
    "token",
    "clusterId",
    "authUrl",
    "authCaCert",
  ]);
  const peering = liqo(
    "Peering",
    "b-to-a",
    {
      consumer: b["access"],
      provider: {
        clusterId: token["clusterId"],
        authUrl: token["authUrl"],
        authCaCert: token["authCaCert"],
        token: token["token"],
      },
      resources: { cpu: config.get("cpu") ?? "2", memory: "4Gi", pods: 20 },
      timeoutSeconds: 120,
    },
    ["access", "virtualNodeName", "status"],
    peeringCreateTimeout ? { customTimeouts: { create: peeringCreateTimeout } } : undefined,
  );
  return { token, peering };
}

// A cluster whose API server takes connections and never answers: its create never finishes.
const mode = config.get("mode");
const unanswered = mode === "unanswered";
if (unanswered) cluster("a", { customTimeouts: { create: config.require("createTimeout") } });
// One cluster alone (the import test takes it out of the state and imports it back).
const lone = mode === "cluster" ? cluster("a") : undefined;
const peered = unanswered || lone ? undefined : peer();

export const clusterId = lone?.["clusterId"] ?? "";

export const virtualNode = peered?.peering["virtualNodeName"] ?? "";
export const peeringStatus = peered?.peering["status"] ?? "";
// Where b asks a for its identity: the path a test cuts.
export const authUrl = peered?.token["authUrl"] ?? "";
// A secret output: the tests check that it is stored only as ciphertext.
export const peeringToken = peered?.token["token"] ?? "";
