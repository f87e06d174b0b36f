/**
 * Validation shared by the resources' `check()`: pure functions that report every problem at
 * once, each naming its input.
 *
 * Failures never carry a `property`. For a failure that names one, the engine prints the value
 * the program gave that property, secret or not (`<type> resource '<name>': property <p> value
 * <v> has a problem: <reason>`: a whole kubeconfig, or the token inside `provider`); for a failure
 * without one it prints only the reason (`<type> resource '<name>' has a problem: <reason>`). A
 * dynamic provider is never told which inputs are secret (the engine unwraps them before `check`),
 * so every failure goes without, and its reason starts with the input's name instead.
 */
import { readKubeconfig } from "../kube/kubeconfig-text.js";
import { tunnelSettingsProblems, type TunnelSettingsInput } from "../network-fabric/tunnel-plan.js";
import { Cidr } from "../net/cidr.js";
import { parseCpuMillis, parseMemoryBytes } from "../negotiation/quantity.js";
import type { ResourceAsk } from "../api/index.js";
import { loadBalancerSettingsProblems, type LoadBalancerSettings } from "../cluster/exposure-plan.js";

/** One check failure, as the engine takes it. */
export interface CheckFailure {
  /** Always empty: see the module's comment. */
  readonly property: string;
  /** `<input>: <what is wrong>`, quoting the bad value only where the input is never secret. */
  readonly reason: string;
}

/** During preview, unknown inputs arrive as this string, whatever their type. */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** Whether a value is not known yet (preview of a value computed by another resource). */
export function isUnknown(value: unknown): boolean {
  return value === UNKNOWN;
}

/** Collects failures; each `check*` adds to it and returns nothing. */
export class Failures {
  readonly list: CheckFailure[] = [];
  /** Adds what is wrong with `input` (a property path, e.g. `resources.cpu`). */
  add(input: string, reason: string): void {
    this.list.push({ property: "", reason: `${input}: ${reason}` });
  }
}

/** A kubeconfig input must parse and name a cluster and a user; the reason never quotes it. */
export function checkKubeconfig(failures: Failures, property: string, value: unknown): void {
  if (isUnknown(value)) return;
  if (typeof value !== "string") return failures.add(property, "must be the text of a kubeconfig");
  try {
    readKubeconfig(value, property);
  } catch (error) {
    failures.add(property, (error as { reason?: string }).reason ?? "not a usable kubeconfig");
  }
}

/**
 * A secret pasted as text (a token), trimmed: pasted from a terminal or a file it often brings its
 * line's end, which its receiver would refuse like a wrong secret. Whitespace left inside, or
 * nothing left at all, is a failure that says so without quoting the secret. A value not known
 * yet is handed back as it is.
 */
export function trimmedSecret(failures: Failures, property: string, value: string): string {
  if (isUnknown(value)) return value;
  const trimmed = value.trim();
  if (trimmed === "") failures.add(property, "is empty");
  else if (/\s/.test(trimmed))
    failures.add(property, "has whitespace inside it (pasted across lines?): give it exactly as its source holds it");
  return trimmed;
}

/** A CIDR input must parse as an IPv4 CIDR. */
export function checkCidr(failures: Failures, property: string, value: unknown): void {
  if (isUnknown(value)) return;
  try {
    Cidr.parse(String(value));
  } catch (error) {
    failures.add(property, (error as Error).message);
  }
}

/** A port input must be an integer from 1 to 65535. */
export function checkPort(failures: Failures, property: string, value: unknown): void {
  if (value === undefined || isUnknown(value)) return;
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > 65535)
    failures.add(property, `${JSON.stringify(value)} is not a port (1-65535)`);
}

/** The exposures each deployed endpoint takes: `hostPort` is the gateway's only (the auth service is a Service). */
const EXPOSURES = {
  agent: ["LoadBalancer", "NodePort"],
  gateway: ["LoadBalancer", "NodePort", "hostPort"],
} as const;

/**
 * The inputs of a deployed agent: `agent.image` an image reference (no whitespace), each
 * `exposure` one of its endpoint's, each `nodePort` a port and given only with `NodePort`.
 */
export function checkAgentDeployment(failures: Failures, agent: unknown, gateway: unknown): void {
  const image = (agent as { image?: unknown } | undefined)?.image;
  if (image !== undefined && !isUnknown(image) && (typeof image !== "string" || !/^\S+$/.test(image)))
    failures.add(
      "agent.image",
      `${JSON.stringify(image)} is not an image reference (e.g. registry.example.com/pulumi-liqo/agent:0.1.0)`,
    );
  for (const [input, value] of [
    ["agent", agent],
    ["gateway", gateway],
  ] as const) {
    const { exposure, nodePort } = (value ?? {}) as { exposure?: unknown; nodePort?: unknown };
    const allowed: readonly unknown[] = EXPOSURES[input];
    if (exposure !== undefined && !isUnknown(exposure) && !allowed.includes(exposure))
      failures.add(`${input}.exposure`, `${JSON.stringify(exposure)} is not one of ${allowed.join(", ")}`);
    checkPort(failures, `${input}.nodePort`, nodePort);
    const settings = value as LoadBalancerSettings | undefined;
    if (
      settings &&
      ![exposure, settings.annotations, settings.loadBalancerClass, settings.loadBalancerSourceRanges].some(isUnknown)
    )
      for (const problem of loadBalancerSettingsProblems(settings, (exposure as string | undefined) ?? "LoadBalancer"))
        failures.add(`${input}.${problem.field}`, problem.reason);
    if (nodePort !== undefined && !isUnknown(exposure) && exposure !== "NodePort")
      failures.add(
        `${input}.nodePort`,
        `a node port is taken only with ${input}.exposure "NodePort" (it is ${JSON.stringify(exposure ?? "LoadBalancer")})`,
      );
  }
}

/** Resources asked for: either a share of free capacity or fixed amounts, never both. */
export function checkResourceAsk(failures: Failures, property: string, value: unknown): void {
  if (isUnknown(value)) return;
  const ask = (value ?? {}) as ResourceAsk;
  const fixed = ask.cpu !== undefined || ask.memory !== undefined || ask.pods !== undefined;
  if (ask.sharePercent === undefined && !fixed)
    return failures.add(
      property,
      "ask for a sharePercent of the provider's free capacity, or for fixed cpu, memory and pods",
    );
  if (ask.sharePercent !== undefined && fixed)
    failures.add(property, "sharePercent and fixed amounts (cpu, memory, pods) exclude each other");
  if (
    ask.sharePercent !== undefined &&
    !(Number.isInteger(ask.sharePercent) && ask.sharePercent >= 1 && ask.sharePercent <= 100)
  ) {
    failures.add(
      `${property}.sharePercent`,
      `${JSON.stringify(ask.sharePercent)} is not a whole percentage from 1 to 100`,
    );
  }
  const quantity = (name: "cpu" | "memory", parse: (text: string) => number): void => {
    const text = ask[name];
    if (text === undefined || isUnknown(text)) return;
    try {
      parse(String(text));
    } catch (error) {
      failures.add(`${property}.${name}`, (error as Error).message);
    }
  };
  quantity("cpu", parseCpuMillis);
  quantity("memory", parseMemoryBytes);
  if (ask.pods !== undefined && !isUnknown(ask.pods) && !(Number.isInteger(ask.pods) && ask.pods >= 1))
    failures.add(`${property}.pods`, `${JSON.stringify(ask.pods)} is not a positive whole number`);
}

/** One of `allowed` (an enum input), or absent. */
export function checkOneOf(failures: Failures, property: string, value: unknown, allowed: readonly string[]): void {
  if (value === undefined || isUnknown(value) || allowed.includes(value as string)) return;
  failures.add(property, `must be ${allowed.map((a) => `"${a}"`).join(", ")}, not ${JSON.stringify(value)}`);
}

/** A timeout in seconds: a positive number. */
export function checkSeconds(failures: Failures, property: string, value: unknown): void {
  if (value === undefined || isUnknown(value)) return;
  if (typeof value !== "number" || !(value > 0))
    failures.add(property, `${JSON.stringify(value)} is not a positive number of seconds`);
}

/**
 * The names of the top-level properties whose values differ. With `unknownIsUnchanged`, a value
 * not known yet (another resource's output during preview) counts as unchanged: the engine diffs
 * again with the value before it updates, so a real change still happens, and an upstream
 * update that leaves the value as it was does not show this resource as changing.
 */
export function changedProperties<T extends object>(
  olds: T,
  news: T,
  keys: readonly (keyof T & string)[],
  options: { readonly unknownIsUnchanged?: boolean } = {},
): string[] {
  return keys.filter(
    (key) =>
      !(options.unknownIsUnchanged && isUnknown(news[key])) &&
      JSON.stringify(olds[key] ?? null) !== JSON.stringify(news[key] ?? null),
  );
}

/**
 * Checks tunnel settings as given (values unknown in preview are not judged), each failure under
 * `prefix` + its input's name. Both sides behind NAT, or the server behind NAT, are refused here,
 * so `pulumi preview` already says why.
 */
export function checkTunnelSettings(
  failures: Failures,
  prefix: string,
  settings: Partial<TunnelSettingsInput> | undefined,
): void {
  const known = <T>(value: T): T | undefined => (isUnknown(value) ? undefined : value);
  const address = known(settings?.serverAddress);
  if (address !== undefined && (typeof address !== "string" || address.trim() === "")) {
    failures.add(
      `${prefix}serverAddress`,
      "give the address (IP or DNS name) at which the serving side's gateway is reached, or leave it out to dial where that gateway says it is reached",
    );
  }
  const behindNat = known(settings?.behindNat);
  const given = {
    server: known(settings?.server) ?? "provider",
    ...(known(settings?.port) !== undefined ? { port: settings!.port! } : {}),
    ...(known(settings?.mtu) !== undefined ? { mtu: settings!.mtu! } : {}),
    ...(known(settings?.keepaliveSeconds) !== undefined ? { keepaliveSeconds: settings!.keepaliveSeconds! } : {}),
    ...(Array.isArray(behindNat) && !behindNat.some(isUnknown) ? { behindNat } : {}),
  };
  for (const problem of tunnelSettingsProblems(given)) failures.add(`${prefix}${problem.input}`, problem.reason);
}
