/**
 * One firewall rule a test puts in a local cluster's network namespace to cut a path (the rules
 * die with the namespace, and a test removes its own in `finally`).
 */
import { runIn } from "../../host/exec.js";

/** A rule (iptables arguments after the action, chain first) in the namespace `netns`. */
export interface FirewallRule {
  /** Inserts it first in its chain. */
  insert(): Promise<void>;
  /** Removes it, if it is there. */
  remove(): Promise<void>;
  /** Whether it is there. */
  present(): Promise<boolean>;
}

/** The rule `spec` (e.g. `["INPUT", "-s", addr, "-j", "DROP"]`) in `netns`. */
export function firewallRule(netns: string, spec: readonly string[]): FirewallRule {
  const present = (): Promise<boolean> =>
    runIn(netns, "iptables", ["-w", "-C", ...spec]).then(
      () => true,
      () => false,
    );
  return {
    insert: async () => void (await runIn(netns, "iptables", ["-w", "-I", ...spec])),
    remove: async () => {
      if (await present()) await runIn(netns, "iptables", ["-w", "-D", ...spec]);
    },
    present,
  };
}
