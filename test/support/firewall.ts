/**
 * One firewall rule a test puts in a local cluster's network namespace to cut a path (the rules
 * die with the namespace, and a test removes its own in `finally`). The host's own firewall is left
 * alone, as the connectivity profiles leave it: a rule there would reach every lab of the machine,
 * and lab-teardown.test.ts compares the host's rules before and after a lab's life.
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
  /**
   * The packets it has matched since it was inserted, found by its `-m comment --comment` tag (so
   * an identical rule someone else put there is never counted); throws for a rule without one.
   */
  packets(): Promise<number>;
}

/**
 * The rule `spec` (e.g. `["INPUT", "-s", addr, "-j", "DROP"]`) in `netns`, in table `table`
 * (`raw` sees a packet before any DNAT: a NodePort's by the port it was sent to).
 */
export function firewallRule(netns: string, spec: readonly string[], table = "filter"): FirewallRule {
  const iptables = (action: string[]): Promise<string> => runIn(netns, "iptables", ["-w", "-t", table, ...action]);
  const present = (): Promise<boolean> =>
    iptables(["-C", ...spec]).then(
      () => true,
      () => false,
    );
  return {
    insert: async () => void (await iptables(["-I", ...spec])),
    remove: async () => {
      if (await present()) await iptables(["-D", ...spec]);
    },
    present,
    packets: async () => {
      const tag = spec[spec.indexOf("--comment") + 1];
      if (!spec.includes("--comment") || !tag)
        throw new Error(`test: rule ${spec.join(" ")} has no comment to find it by`);
      // `-S -v` lists each rule with its counters: `… --comment <tag> -c <packets> <bytes> -j DROP`.
      const listed = (await iptables(["-S", spec[0]!, "-v"]))
        .split("\n")
        .find((line) => line.includes(`--comment ${tag} `));
      const counters = listed && / -c (\d+) \d+/.exec(listed);
      if (!counters) throw new Error(`test: rule tagged ${tag} is not in chain ${spec[0]} of ${table} in ${netns}`);
      return Number(counters[1]);
    },
  };
}
