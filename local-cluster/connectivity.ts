/**
 * Connectivity profiles between local clusters, as firewall rules inside each cluster's own
 * namespace (so nothing is ever added to the host's firewall, and deleting the namespace removes
 * them), plus the NAT router that puts a cluster behind NAT.
 *
 * - `open`: everything reachable.
 * - `gateway-only`: over the wire, a cluster accepts from other clusters only the gateway UDP
 *   ports, and from the host only its API server port, as an operator's kubeconfig would reach it.
 *   Traffic that arrives on any other interface (the tunnel) is not filtered.
 * - `nat`: chosen clusters sit behind a router namespace that masquerades their traffic and
 *   forwards only the ports they open; the others are `open`.
 */
import { runIn } from "../host/exec.js";

/** The connectivity profiles the harness can apply. */
export type ConnectivityProfile = "open" | "gateway-only" | "nat";

/** All profile names, for validation and help text. */
export const PROFILES: readonly ConnectivityProfile[] = ["open", "gateway-only", "nat"];

/** A UDP port range kept open for WireGuard gateways under `gateway-only`. */
export interface PortRange {
  /** First port. */
  readonly from: number;
  /** Last port, inclusive. */
  readonly to: number;
}

/** A port a NAT router forwards to the cluster behind it. */
export interface PortForward {
  /** `tcp` or `udp`. */
  readonly protocol: "tcp" | "udp";
  /** Port on the router's public address, and on the cluster. */
  readonly port: number;
}

const CHAIN = "LQ-PROFILE";

/** The iptables rules (arguments after `-A CHAIN`) of a profile: pure, unit-tested. */
export function profileRules(
  profile: ConnectivityProfile,
  hostAddress: string,
  apiPort: number,
  gatewayPorts: PortRange,
): string[][] {
  if (profile !== "gateway-only") return [];
  return [
    ["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"],
    ["-s", hostAddress, "-p", "tcp", "--dport", String(apiPort), "-j", "RETURN"],
    ["-s", hostAddress, "-j", "DROP"],
    ["-p", "udp", "--dport", `${gatewayPorts.from}:${gatewayPorts.to}`, "-j", "RETURN"],
    ["-j", "DROP"],
  ];
}

/** Applies `profile` to the cluster in `netns`, replacing the previous profile's rules. */
export async function applyProfile(netns: string, rules: readonly string[][]): Promise<void> {
  const has = async (args: string[]): Promise<boolean> =>
    runIn(netns, "iptables", args).then(
      () => true,
      () => false,
    );
  if (!(await has(["-S", CHAIN]))) await runIn(netns, "iptables", ["-N", CHAIN]);
  await runIn(netns, "iptables", ["-F", CHAIN]);
  // Only what arrives over the wire (eth0) is filtered: loopback and tunnels stay untouched. FORWARD
  // too: a NodePort (the agent's auth service) is DNATed to a pod before INPUT would see it.
  for (const chain of ["INPUT", "FORWARD"])
    if (!(await has(["-C", chain, "-i", "eth0", "-j", CHAIN])))
      await runIn(netns, "iptables", ["-I", chain, "-i", "eth0", "-j", CHAIN]);
  for (const rule of rules) await runIn(netns, "iptables", ["-A", CHAIN, ...rule]);
}

/**
 * Makes `routerNetns` a NAT router for the private network behind its `lan` interface: it
 * masquerades what leaves through `eth0` and forwards `forwards` to `privateAddress`.
 */
export async function configureNatRouter(
  routerNetns: string,
  privateCidr: string,
  privateAddress: string,
  forwards: readonly PortForward[],
): Promise<void> {
  await runIn(routerNetns, "sysctl", ["-q", "-w", "net.ipv4.ip_forward=1"]);
  await runIn(routerNetns, "iptables", [
    "-t",
    "nat",
    "-A",
    "POSTROUTING",
    "-s",
    privateCidr,
    "-o",
    "eth0",
    "-j",
    "MASQUERADE",
  ]);
  for (const { protocol, port } of forwards) {
    await runIn(routerNetns, "iptables", [
      "-t",
      "nat",
      "-A",
      "PREROUTING",
      "-i",
      "eth0",
      "-p",
      protocol,
      "--dport",
      String(port),
      "-j",
      "DNAT",
      "--to-destination",
      `${privateAddress}:${port}`,
    ]);
  }
}
