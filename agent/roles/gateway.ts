/**
 * The gateway role: the cluster's WireGuard tunnels, as its TunnelEndpoints ask, in one network
 * namespace. As a pod (hostNetwork) that is its own, its node's; the host-process agent of the
 * local clusters names the cluster's (`--gateway-netns`).
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { describeNamespace } from "../../host/namespaces.js";
import { TunnelGateway } from "../gateway/tunnels.js";
import { runLoop, Wakeup } from "../loop.js";
import type { Reporter } from "../reporter.js";
import { RetryNow, wakeOnChanges } from "../watch.js";
import { collection } from "./common.js";

/** The resync of the gateway loop (watches wake it at once); a tunnel waiting on its peer's handshake asks for `pending`. */
const INTERVALS = { gateway: 10_000, pending: 1_000 };

/** Where and how the gateway role works. */
export interface GatewayRoleOptions {
  /** The cluster's API. */
  readonly kc: KubeConfig;
  /** Network namespace of its tunnels. @default this process's own (a hostNetwork pod's) */
  readonly netns?: string;
  /** Directory for wireguard-go's logs and the short-lived key files `wg` reads. */
  readonly workDir: string;
  /** The wireguard-go executable. @default "wireguard-go" from PATH */
  readonly wireguardGo?: string;
  /** The address of the gateway's node (a pod's host IP): see GatewayOptions.nodeAddress. */
  readonly nodeAddress?: string;
  /** Ends the loop. */
  readonly signal: AbortSignal;
  readonly reporter: Reporter;
}

/** A started gateway: its loops, and the gateway itself (to take its tunnels down once they settled). */
export interface StartedGateway {
  readonly loops: Promise<void>[];
  readonly gateway: TunnelGateway;
}

/** Starts the gateway's watch and loop. */
export function startGateway(options: GatewayRoleOptions): StartedGateway {
  const { kc, signal, reporter } = options;
  const gateway = new TunnelGateway({
    kc,
    workDir: options.workDir,
    reporter,
    ...(options.netns ? { netns: options.netns } : {}),
    ...(options.wireguardGo ? { wireguardGo: options.wireguardGo } : {}),
    ...(options.nodeAddress ? { nodeAddress: options.nodeAddress } : {}),
  });
  const wakeup = new Wakeup();
  gateway.watchProcesses(signal, () => wakeup.wake());
  reporter.info(`gateway: tunnels in ${describeNamespace(options.netns)}`);
  return {
    gateway,
    loops: [
      wakeOnChanges(kc, collection("tunnelendpoints"), () => wakeup.wake(), {
        signal,
        retryNow: new RetryNow(),
        reporter,
      }),
      runLoop({ name: "gateway", intervalMs: INTERVALS.gateway, signal, reporter, wakeup }, async () =>
        (await gateway.pass()) > 0 ? INTERVALS.pending : undefined,
      ),
    ],
  };
}

/**
 * Runs the gateway role until `signal` aborts (SIGTERM), then takes its tunnels down: the loop has
 * stopped first, so no pass brings one up again behind the teardown.
 */
export async function runGatewayRole(options: GatewayRoleOptions): Promise<void> {
  const { gateway, loops } = startGateway(options);
  await Promise.all(loops);
  const removed = await gateway.shutdown();
  options.reporter.info(`gateway: stopped; removed ${removed.join(", ") || "nothing"}`);
}
