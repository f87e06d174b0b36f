/**
 * Messages from a resource's provider to the Pulumi engine, which prints them with the resource in
 * `pulumi preview` and `pulumi up`: why a diff updates or replaces it, and, as the resource's live
 * status, the step its create, update or delete is at.
 *
 * The engine starts Pulumi's dynamic provider host with its own gRPC address as first argument;
 * `pulumi.log` cannot be used in that process (the SDK never learns the address there), so the
 * message goes to the engine's `Log` call directly, through the gRPC client and protocol classes
 * of the very `@pulumi/pulumi` copy that runs the host. Anywhere else (a test calling `diff`
 * directly) nothing is sent. Delivery is best effort: it never throws and never waits long.
 *
 * This is the Pulumi layer's I/O edge, beside the shims that use it (`host/` is the
 * machine's network namespaces and processes).
 */
import type * as pulumi from "@pulumi/pulumi";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { liveStatus, type Progress } from "../operation/progress.js";
import { explainChanges, labelOf, urnOf, type FoundChanges } from "./diff-rules.js";

/** How long a diff waits for the engine to take a message. */
const DEFAULT_TIMEOUT_MS = 2_000;

/** The host's script: `…/node_modules/@pulumi/pulumi/cmd/dynamic-provider[/index.js]`. */
const HOST_SCRIPT = /[\\/]@pulumi[\\/]pulumi[\\/]cmd[\\/]dynamic-provider(?:[\\/]index\.js)?$/;

/** The engine this process reports to, when it is the dynamic provider host. */
export interface EngineAddress {
  /** The host's script, from which its own `@pulumi/pulumi` is loaded. */
  readonly hostScript: string;
  /** The engine's gRPC address, e.g. `127.0.0.1:40123`. */
  readonly address: string;
}

/** Where the engine is, read from the process's arguments; undefined outside the dynamic provider host. */
export function engineAddressOf(argv: readonly string[]): EngineAddress | undefined {
  const [, hostScript, address] = argv;
  return hostScript && address && HOST_SCRIPT.test(hostScript) ? { hostScript, address } : undefined;
}

/** The few parts of the generated gRPC client and `LogRequest` used here. */
interface LogRequest {
  setSeverity(value: number): void;
  setMessage(value: string): void;
  setUrn(value: string): void;
  setEphemeral(value: boolean): void;
}
interface EngineClient {
  log(request: LogRequest, options: { deadline: number }, callback: (error: Error | null) => void): void;
}
interface Engine {
  readonly client: EngineClient;
  readonly forgeRequest: () => LogRequest;
  readonly info: number;
  readonly warning: number;
}

/**
 * The engine of this process when it is the provider plugin, which learns the address from its
 * arguments and its Handshake (the dynamic provider host's is read from the host's arguments).
 */
let pluginEngine: EngineAddress | undefined;

/**
 * Makes this process (the provider plugin) report to the engine at `address`: its own
 * `@pulumi/pulumi` copy speaks the protocol. A plugin's stdout and stderr are hidden from users,
 * so everything it has to say goes there.
 */
export function reportToEngine(address: string): void {
  pluginEngine = { hostScript: require.resolve("@pulumi/pulumi/cmd/dynamic-provider/index.js"), address };
}

/** One client per engine address, made on first use. */
const engines = new Map<string, Engine>();

function engineAt(at: EngineAddress): Engine {
  const known = engines.get(at.address);
  if (known) return known;
  const load = createRequire(at.hostScript);
  const grpc = load("@grpc/grpc-js") as { credentials: { createInsecure(): unknown } };
  const services = load("../../proto/engine_grpc_pb") as {
    EngineClient: new (address: string, credentials: unknown) => EngineClient;
  };
  const messages = load("../../proto/engine_pb") as {
    LogRequest: new () => LogRequest;
    LogSeverity: { INFO: number; WARNING: number };
  };
  const engine = {
    client: new services.EngineClient(at.address, grpc.credentials.createInsecure()),
    forgeRequest: () => new messages.LogRequest(),
    info: messages.LogSeverity.INFO,
    warning: messages.LogSeverity.WARNING,
  };
  engines.set(at.address, engine);
  return engine;
}

/** Where to send and how long to wait; both default to this process's. */
export interface EngineLogOptions {
  /** The process's arguments. @default process.argv */
  readonly argv?: readonly string[];
  /** How long to wait for the engine to take the message. @default 2000 */
  readonly timeoutMs?: number;
  /** A warning shows in the engine's summary as well as with the resource. @default "info" */
  readonly severity?: "info" | "warning";
  /**
   * A status rather than a message: the display shows it in the resource's row while the
   * operation runs, until the next one replaces it (`""` clears it), and neither prints it under
   * Diagnostics nor counts it among the resource's messages, nor keeps it in the stack's history.
   * @default false
   */
  readonly ephemeral?: boolean;
}

/**
 * Sends `message` to the engine as information (or a warning) about resource `urn` ("" for none: the engine then
 * shows it with the stack). Resolves once the engine took it, or after the timeout, or at once
 * outside the dynamic provider host; never rejects.
 */
export async function logToEngine(message: string, urn: string, options: EngineLogOptions = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    const at = options.argv ? engineAddressOf(options.argv) : (pluginEngine ?? engineAddressOf(process.argv));
    if (!at) return;
    const engine = engineAt(at);
    const request = engine.forgeRequest();
    request.setSeverity(options.severity === "warning" ? engine.warning : engine.info);
    request.setMessage(message);
    request.setUrn(urn);
    if (options.ephemeral) request.setEphemeral(true);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      engine.client.log(request, { deadline: Date.now() + timeoutMs }, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  } catch {
    // An explanation the engine cannot take must not fail the diff it explains.
  }
}

/**
 * Tells the engine why resource `kind` changes (when it does): one line per changed input, with
 * its rule's reason, attached to the resource's URN. Then hands back the diff's result.
 */
export async function explainedDiff(
  kind: string,
  reasons: Readonly<Record<string, { readonly reason: string }>>,
  id: string,
  news: object,
  found: FoundChanges,
  deleteBeforeReplace: boolean,
): Promise<pulumi.dynamic.DiffResult> {
  if (found.changed.length > 0) {
    const lines = explainChanges({ kind, label: labelOf(news, id), ...found, deleteBeforeReplace, reasons });
    await logToEngine(lines.join("\n"), urnOf(news));
  }
  return { changes: found.changed.length > 0, replaces: [...found.replaces], deleteBeforeReplace };
}

/**
 * Runs `operation` with a Progress that shows each step as the live status of the resource whose
 * inputs (or outputs) are `inputs`, on its own row of `pulumi up`, and clears it when the
 * operation ends, failed or not. Steps go to the engine only: the provider's stderr would show
 * them on the stack's row (the engine prints a plugin's stderr there, as messages), and the
 * engine's own log keeps every status at `-v=5`. Without a URN (state written before the SDK
 * passed one) the steps are not shown: the stack's row is no place for them.
 */
export async function showingSteps<T>(
  inputs: object,
  operation: (progress: Progress) => Promise<T>,
  options: Omit<EngineLogOptions, "ephemeral" | "severity"> = {},
): Promise<T> {
  const urn = urnOf(inputs);
  const status = liveStatus((line) =>
    urn ? logToEngine(line, urn, { ...options, ephemeral: true }) : Promise.resolve(),
  );
  try {
    return await operation(status);
  } finally {
    await status.end();
  }
}

/** A process as /proc tells it: its parent, its command name and its start time (against PID reuse). */
interface ProcStat {
  readonly ppid: number;
  readonly comm: string;
  readonly startTicks: string;
}

function procStat(pid: number): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return {
      ppid: Number(fields[1]),
      comm: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
      startTicks: fields[19] ?? "",
    };
  } catch {
    return undefined;
  }
}

/** How often the dynamic provider host looks for its engine. */
const ENGINE_WATCH_MS = 1_000;

/**
 * Ends the dynamic provider host once the engine that started it is gone (a killed `pulumi up`):
 * its waits would otherwise run on for minutes, changing clusters for nobody, since no result can
 * be recorded any more; the next `pulumi up` converges from what the clusters hold. The engine is
 * the first ancestor that is not one of the `sh` wrappers through which it starts the host.
 * Outside the host (a test calling a provider directly) it does nothing.
 */
export function exitWhenEngineGoes(argv: readonly string[] = process.argv): void {
  if (engineAddressOf(argv)) exitWithEngine("the dynamic provider");
}

/**
 * Ends this process once the engine that started it (its first ancestor that is not an `sh`
 * wrapper) is gone, saying so as `what` stops: a killed `pulumi up` leaves no one to record what
 * the process would go on doing.
 */
export function exitWithEngine(what: string): void {
  let pid = process.ppid;
  let stat = procStat(pid);
  while (stat && stat.comm === "sh" && stat.ppid > 1) {
    pid = stat.ppid;
    stat = procStat(pid);
  }
  if (!stat) return;
  const engine = { pid, startTicks: stat.startTicks };
  setInterval(() => {
    if (procStat(engine.pid)?.startTicks === engine.startTicks) return;
    process.stderr.write(`pulumi-liqo: the engine (pid ${engine.pid}) is gone; ${what} stops\n`);
    process.exit(1);
  }, ENGINE_WATCH_MS).unref();
}

// Started once, when the first resource shim is loaded in the host.
exitWhenEngineGoes();
