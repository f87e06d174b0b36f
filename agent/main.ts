/**
 * The agent: one program, three roles, chosen by the first argument, as `Cluster` deploys them:
 *
 *   control  the auth service, offer answering, heartbeat, in-band peering, identity renewal
 *            (roles/control.ts): a Deployment of one non-root pod
 *   gateway  the cluster's WireGuard tunnels in its own network namespace (roles/gateway.ts): a
 *            hostNetwork pod; on SIGTERM it takes its tunnels down and exits; its node's address
 *            comes from NODE_ADDRESS (the downward API)
 *   route    this node's routes to the remote clusters through the gateway's node (roles/route.ts):
 *            a hostNetwork DaemonSet; the node's name comes from NODE_NAME (the downward API)
 *
 *   node agent.js control [--kubeconfig PATH] [--auth-listen HOST:PORT] [--name NAME]
 *   node agent.js gateway [--kubeconfig PATH] [--work-dir DIR] [--wireguard-go PATH]
 *   node agent.js route   [--kubeconfig PATH]
 *
 * Without a role word it is the local clusters' host process: the control role, and with
 * --gateway-netns also the gateway, in that network namespace (the cluster's):
 *
 *   node agent.js [--kubeconfig PATH] [--auth-listen HOST:PORT] [--name NAME]
 *                 [--gateway-netns NETNS --gateway-dir DIR [--wireguard-go PATH]]
 *
 * Without --kubeconfig a role runs in a pod, with its ServiceAccount.
 */
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { consoleReporter } from "./reporter.js";
import { clusterConfig, requiredEnv, stopOnSignals } from "./roles/common.js";
import { startControl } from "./roles/control.js";
import { runGatewayRole, startGateway } from "./roles/gateway.js";
import { runRouteRole } from "./roles/route.js";

const ROLES = ["control", "gateway", "route"] as const;
type Role = (typeof ROLES)[number];

/** Where the gateway pod keeps wireguard-go's logs and the short-lived key files (an emptyDir in its manifest). */
const DEFAULT_GATEWAY_DIR = "/var/lib/pulumi-liqo/gateway";

async function main(argv: readonly string[]): Promise<void> {
  const role = ROLES.includes(argv[0] as Role) ? (argv[0] as Role) : undefined;
  const { values } = parseArgs({
    args: role ? argv.slice(1) : [...argv],
    options: {
      kubeconfig: { type: "string" },
      "auth-listen": { type: "string", default: "0.0.0.0:8443" },
      name: { type: "string", default: hostname() },
      "work-dir": { type: "string", default: DEFAULT_GATEWAY_DIR },
      "gateway-netns": { type: "string" },
      "gateway-dir": { type: "string" },
      "wireguard-go": { type: "string" },
    },
  });
  const reporter = consoleReporter;
  const kc = clusterConfig(values.kubeconfig);
  const stop = new AbortController();
  const wireguardGo = values["wireguard-go"] ? { wireguardGo: values["wireguard-go"] } : {};
  stopOnSignals(stop, `agent ${role ?? "host process"} ${values.name}`, reporter);
  if (role === "gateway") {
    // From the downward API (status.hostIP): the address a Service brings the peers' packets to.
    const nodeAddress = process.env["NODE_ADDRESS"];
    return runGatewayRole({
      kc,
      workDir: values["work-dir"]!,
      signal: stop.signal,
      reporter,
      ...wireguardGo,
      ...(nodeAddress ? { nodeAddress } : {}),
    });
  }
  if (role === "route") {
    const nodeName = requiredEnv("NODE_NAME", "the route role learns its node's name from the downward API");
    return runRouteRole({ kc, nodeName, signal: stop.signal, reporter });
  }
  const gatewayNetns = values["gateway-netns"];
  if (gatewayNetns && !values["gateway-dir"])
    throw new Error("--gateway-netns needs --gateway-dir (where the gateway keeps its logs)");
  const [host, port] = values["auth-listen"]!.split(":");
  const loops = await startControl({
    kc,
    name: values.name!,
    listen: { host: host!, port: Number(port) },
    signal: stop.signal,
    reporter,
  });
  // The host process leaves its tunnels running when it stops: the lab restarts it over them.
  if (!role && gatewayNetns) {
    const started = startGateway({
      kc,
      netns: gatewayNetns,
      workDir: values["gateway-dir"]!,
      signal: stop.signal,
      reporter,
      ...wireguardGo,
    });
    loops.push(...started.loops);
  }
  await Promise.all(loops);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: Error) => {
    consoleReporter.warn(`agent: ${error.message}`);
    process.exit(1);
  },
);
