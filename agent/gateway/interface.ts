/**
 * A gateway's WireGuard interface, made of the userspace `wireguard-go` (this machine has no
 * WireGuard kernel module) started inside the cluster's network namespace, configured with `wg`
 * and `ip` there. Every function is idempotent where it can be: `ensure*` finds an interface
 * already running and brings it to the spec; `delete*` removes what is there and skips the rest,
 * so it also cleans up after a run that crashed half-way.
 *
 * Where things live: the TUN link and its routes inside the namespace; the process is recorded by
 * PID and start time (never found by name alone); its control socket in
 * `/var/run/wireguard/<ifname>.sock`, one directory for every namespace of the machine.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, unlinkSync } from "node:fs";
import { connect } from "node:net";
import { basename, dirname, join } from "node:path";
import { runIn, type CommandError } from "../../host/exec.js";
import { describeNamespace, namespaceExists, namespacePids } from "../../host/namespaces.js";
import {
  isRunning,
  logTail,
  recordOf,
  startInNamespace,
  stopProcess,
  type ProcessRecord,
} from "../../host/processes.js";
import { poll } from "../../core/wait/poll.js";
import {
  GatewaySpecError,
  checkPeerSpec,
  checkRoutes,
  forgeInterfaceArgs,
  forgePeerArgs,
  forgeRouteArgs,
  ifnameProblems,
  interfaceSpecProblems,
  type WireguardPeerSpec,
} from "./commands.js";
import { wireguardPublicKeyOf } from "./keys.js";
import { parseWireguardDump, type WireguardStatus } from "./status.js";

export { wireguardInterfaceName, type WireguardPeerSpec } from "./commands.js";

/** Directory of wireguard-go's control sockets, shared by every network namespace. */
export const WIREGUARD_SOCKET_DIR = "/var/run/wireguard";

/** The control socket of interface `ifname`. */
export const wireguardSocketPath = (ifname: string): string => join(WIREGUARD_SOCKET_DIR, `${ifname}.sock`);

/** What a gateway's WireGuard interface is made from. */
export interface WireguardInterfaceSpec {
  /** Network namespace of the cluster whose gateway this is. @default this process's own (a hostNetwork pod's) */
  readonly netns?: string;
  /** Interface name, unique on the machine: see {@link wireguardInterfaceName}. */
  readonly ifname: string;
  /** The gateway's private key (base64). It reaches `wg` through a file of mode 600 deleted right after. */
  readonly privateKey: string;
  /** UDP port the gateway listens on, in its namespace; 0 for any free one. @example 51820 */
  readonly listenPort: number;
  /**
   * The interface's own tunnel-internal address with its prefix: a /30 shared with the peer, or
   * a /32 when only routes name the peer.
   * @example "10.254.0.1/30"
   */
  readonly address: string;
  /** MTU of the tunnel interface: the wire's 1500 minus WireGuard's 80 bytes of overhead. @default 1420 */
  readonly mtu?: number;
  /** File that receives wireguard-go's output. */
  readonly logFile: string;
  /**
   * Directory where the private key is written for `wg`, in a private subdirectory of mode 700,
   * removed right after.
   * @default the directory of `logFile`
   */
  readonly keyDir?: string;
  /** The wireguard-go executable. @default "wireguard-go" (from PATH) */
  readonly wireguardGo?: string;
  /** How long wireguard-go may take to open its interface and socket. @default 10000 */
  readonly startTimeoutMs?: number;
  /** The operation's shared deadline. */
  readonly signal?: AbortSignal;
}

/** A running WireGuard interface. */
export interface WireguardInterface {
  /** Network namespace it lives in. @default this process's own */
  readonly netns?: string;
  /** Interface name. */
  readonly ifname: string;
  /** The wireguard-go process serving it. */
  readonly process: ProcessRecord;
  /** The interface's public key, for the peer. */
  readonly publicKey: string;
  /** Whether this call started wireguard-go (false: it was already running and was reconfigured). */
  readonly started: boolean;
}

const DEFAULT_MTU = 1420;

/** Whether link `ifname` exists in namespace `netns`. */
export async function linkExistsIn(netns: string | undefined, ifname: string): Promise<boolean> {
  if (!namespaceExists(netns)) return false;
  const links = await runIn(netns, "ip", ["-o", "link", "show"]);
  return links.split("\n").some((line) => line.split(":")[1]?.trim().split("@")[0] === ifname);
}

/** The wireguard-go process serving `ifname` in namespace `netns`, found among that namespace's own processes. */
export async function findWireguardProcess(
  netns: string | undefined,
  ifname: string,
  logFile = "",
): Promise<ProcessRecord | undefined> {
  for (const pid of await namespacePids(netns)) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    } catch {
      continue;
    }
    if (argv.length > 0 && basename(argv[0]!) === "wireguard-go" && argv.at(-1) === ifname) {
      const record = recordOf(pid, `wireguard-go ${ifname}`, logFile);
      if (record) return record;
    }
  }
  return undefined;
}

/** Runs `body` with the private key in a file of mode 600, in a fresh directory of mode 700 removed right after. */
async function withKeyFile<T>(keyDir: string, privateKey: string, body: (file: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(keyDir, ".wg-key-"));
  try {
    const file = join(dir, "private.key");
    writeFileSync(file, `${privateKey}\n`, { mode: 0o600, flag: "wx" });
    return await body(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Addresses (with prefix) the interface holds, IPv4. */
async function addressesOf(netns: string | undefined, ifname: string): Promise<string[]> {
  const out = await runIn(netns, "ip", ["-4", "-o", "addr", "show", "dev", ifname]);
  return [...out.matchAll(/ inet (\S+)/g)].map((m) => m[1]!);
}

/**
 * Ensures the WireGuard interface of `spec` runs in its namespace: starts wireguard-go unless it
 * already serves the interface there, waits for its link and socket, then sets the private key,
 * listen port, MTU and address (replacing any other address) and brings the link up. If it
 * started wireguard-go and a later step fails, it stops it again, so a failed call leaves nothing.
 */
export async function ensureWireguardInterface(spec: WireguardInterfaceSpec): Promise<WireguardInterface> {
  const mtu = spec.mtu ?? DEFAULT_MTU;
  const problems = interfaceSpecProblems({ ...spec, mtu });
  if (!namespaceExists(spec.netns)) problems.push(`netns "${spec.netns!}": no such network namespace`);
  if (problems.length > 0) throw new GatewaySpecError(`WireGuard interface ${spec.ifname}`, problems);
  const { netns, ifname } = spec;

  const existing = await findWireguardProcess(netns, ifname, spec.logFile);
  const record =
    existing ??
    startInNamespace(netns, `wireguard-go ${ifname}`, spec.wireguardGo ?? "wireguard-go", ["-f", ifname], spec.logFile);
  try {
    await poll(
      {
        step: "gateway",
        object: `wireguard-go interface ${ifname} and socket ${wireguardSocketPath(ifname)}`,
        endpoint: describeNamespace(netns),
      },
      { timeoutMs: spec.startTimeoutMs ?? 10_000, intervalMs: 50, ...(spec.signal ? { signal: spec.signal } : {}) },
      async () => {
        if (!isRunning(record))
          return { failed: true, reason: `wireguard-go (pid ${record.pid}) exited: ${logTail(spec.logFile)}` };
        const link = await linkExistsIn(netns, ifname);
        const socket = existsSync(wireguardSocketPath(ifname));
        return link && socket
          ? { done: true, value: undefined }
          : { done: false, state: `link ${link ? "up" : "absent"}, socket ${socket ? "present" : "absent"}` };
      },
    );
    await withKeyFile(spec.keyDir ?? dirname(spec.logFile), spec.privateKey, (file) =>
      runIn(netns, "wg", forgeInterfaceArgs({ ifname, privateKeyFile: file, listenPort: spec.listenPort })),
    );
    await runIn(netns, "ip", ["link", "set", "dev", ifname, "mtu", String(mtu)]);
    for (const other of (await addressesOf(netns, ifname)).filter((a) => a !== spec.address)) {
      await runIn(netns, "ip", ["addr", "del", other, "dev", ifname]);
    }
    await runIn(netns, "ip", ["addr", "replace", spec.address, "dev", ifname]);
    await runIn(netns, "ip", ["link", "set", "dev", ifname, "up"]);
  } catch (error) {
    if (!existing) await stopProcess(record, 3000);
    throw error;
  }
  return { netns, ifname, process: record, publicKey: wireguardPublicKeyOf(spec.privateKey), started: !existing };
}

/**
 * Adds or updates one peer of the interface: its key, its endpoint if given, the networks it may
 * send from and receives (replacing the previous list) and the keepalive.
 */
export async function configureWireguardPeer(spec: WireguardPeerSpec): Promise<void> {
  checkPeerSpec(spec);
  await runIn(spec.netns, "wg", forgePeerArgs(spec));
}

/**
 * Routes `cidrs` into the tunnel interface, replacing any route to the same networks. With
 * `source`, packets the gateway itself sends there leave from that address (e.g. its pod address)
 * rather than from the tunnel address.
 */
export async function addTunnelRoutes(
  netns: string | undefined,
  ifname: string,
  cidrs: readonly string[],
  source?: string,
): Promise<void> {
  checkRoutes(ifname, cidrs, source);
  for (const args of forgeRouteArgs(ifname, cidrs, source)) await runIn(netns, "ip", args);
}

const isMissing = (error: unknown): boolean =>
  /No such process|Cannot find device|does not exist/.test((error as CommandError).stderr ?? "");

/** Removes the routes to `cidrs` through `ifname`; routes already gone are skipped. */
export async function removeTunnelRoutes(
  netns: string | undefined,
  ifname: string,
  cidrs: readonly string[],
): Promise<void> {
  checkRoutes(ifname, cidrs);
  if (!(await linkExistsIn(netns, ifname))) return;
  for (const cidr of cidrs) {
    await runIn(netns, "ip", ["route", "del", cidr, "dev", ifname]).catch((error: unknown) => {
      if (!isMissing(error)) throw error;
    });
  }
}

/** The interface's state as `wg show <ifname> dump` reports it (without its private key). */
export async function readWireguardStatus(netns: string | undefined, ifname: string): Promise<WireguardStatus> {
  return parseWireguardDump(ifname, await runIn(netns, "wg", ["show", ifname, "dump"]));
}

/** Whether a Unix socket accepts connections (a socket file left by a killed process does not). */
function socketIsLive(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** What to remove of a WireGuard interface. */
export interface WireguardInterfaceRef {
  /** Network namespace it lives in. @default this process's own */
  readonly netns?: string;
  /** Interface name. */
  readonly ifname: string;
  /**
   * The wireguard-go process as recorded at start. @default the wireguard-go serving `ifname`
   * found among the namespace's processes
   */
  readonly process?: ProcessRecord;
  /** Routes into the interface to remove. (They go with the link anyway; naming them removes them first.) @default [] */
  readonly routes?: readonly string[];
}

/**
 * Removes the interface: its routes, its wireguard-go process (by recorded PID; SIGTERM, which
 * makes it delete its link and socket), the link if still there, and a socket file left behind
 * by a process that was killed. A socket some live process still serves is left alone: that is
 * someone else's interface of the same name. Returns what it removed.
 */
export async function deleteWireguardInterface(ref: WireguardInterfaceRef): Promise<string[]> {
  const problems = ifnameProblems(ref.ifname);
  if (problems.length > 0) throw new GatewaySpecError(`WireGuard interface ${ref.ifname}`, problems);
  const { netns, ifname } = ref;
  const removed: string[] = [];
  if (ref.routes?.length) {
    await removeTunnelRoutes(netns, ifname, ref.routes);
  }
  const records = [ref.process, await findWireguardProcess(netns, ifname)].filter(
    (r): r is ProcessRecord => r !== undefined,
  );
  for (const record of records) {
    if (isRunning(record)) {
      await stopProcess(record, 5000);
      removed.push(`wireguard-go ${ifname} (pid ${record.pid})`);
    }
  }
  if (await linkExistsIn(netns, ifname)) {
    await runIn(netns, "ip", ["link", "del", "dev", ifname]).catch((error: unknown) => {
      if (!isMissing(error)) throw error;
    });
    removed.push(`link ${ifname} in ${describeNamespace(netns)}`);
  }
  const socket = wireguardSocketPath(ifname);
  if (existsSync(socket) && !(await socketIsLive(socket))) {
    unlinkSync(socket);
    removed.push(`socket ${socket}`);
  }
  return removed;
}
