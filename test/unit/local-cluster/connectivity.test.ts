/**
 * profileRules: the iptables rules of each connectivity profile. Rules are checked by what they do
 * to packets, with a small first-match evaluator of the subset of iptables syntax they use.
 */
import {
  PROFILES,
  profileRules,
  type ConnectivityProfile,
  type PortRange,
} from "../../../local-cluster/connectivity.js";

const HOST = "172.29.1.1";
const OTHER_CLUSTER = "172.29.1.11";
const API_PORT = 6443;
const GATEWAY: PortRange = { from: 51820, to: 51830 };

interface Packet {
  readonly source: string;
  readonly protocol: "tcp" | "udp";
  readonly port: number;
  /** A reply to a connection this cluster opened. */
  readonly established?: boolean;
}

type Verdict = "RETURN" | "DROP" | "no rule";

/** Whether one rule's matches all hold for `packet`; throws on syntax it does not know. */
function matches(rule: readonly string[], packet: Packet): boolean {
  for (let i = 0; i < rule.length; i += 2) {
    const [flag, value] = [rule[i]!, rule[i + 1]!];
    switch (flag) {
      case "-m":
        if (value !== "conntrack") throw new Error(`unknown match module ${value}`);
        break;
      case "--ctstate":
        if (!(packet.established && value.split(",").includes("ESTABLISHED"))) return false;
        break;
      case "-s":
        if (packet.source !== value) return false;
        break;
      case "-p":
        if (packet.protocol !== value) return false;
        break;
      case "--dport": {
        const [low, high] = value.split(":").map(Number);
        if (packet.port < low! || packet.port > (high ?? low!)) return false;
        break;
      }
      case "-j":
        break;
      default:
        throw new Error(`unknown flag ${flag} in ${rule.join(" ")}`);
    }
  }
  return true;
}

/** The verdict of the first matching rule, as iptables evaluates a chain. */
function verdict(rules: readonly (readonly string[])[], packet: Packet): Verdict {
  for (const rule of rules) {
    if (matches(rule, packet)) return rule[rule.indexOf("-j") + 1] as Verdict;
  }
  return "no rule";
}

const gatewayOnly = (): string[][] => profileRules("gateway-only", HOST, API_PORT, GATEWAY);

describe("profileRules", () => {
  test.each(["open", "nat"] as const)(
    "GIVEN the %s profile WHEN its rules are made THEN there are none",
    (profile: ConnectivityProfile) => {
      expect(profileRules(profile, HOST, API_PORT, GATEWAY)).toEqual([]);
    },
  );

  test("GIVEN the list of profiles WHEN read THEN it holds open, gateway-only and nat", () => {
    expect([...PROFILES].sort()).toEqual(["gateway-only", "nat", "open"]);
  });

  test("GIVEN gateway-only WHEN its rules are made THEN the first lets established and related traffic through", () => {
    const [first] = gatewayOnly();
    expect(first).toEqual(expect.arrayContaining(["--ctstate", "-j", "RETURN"]));
    expect(first![first!.indexOf("--ctstate") + 1]!.split(",").sort()).toEqual(["ESTABLISHED", "RELATED"]);
  });

  test("GIVEN gateway-only WHEN its rules are made THEN the last drops everything left", () => {
    expect(gatewayOnly().at(-1)).toEqual(["-j", "DROP"]);
  });

  test("GIVEN gateway-only WHEN its rules are made THEN the host's API port is allowed before the host's DROP", () => {
    const rules = gatewayOnly();
    const allowApi = rules.findIndex((r) => r.includes(HOST) && r.includes(String(API_PORT)) && r.at(-1) === "RETURN");
    const dropHost = rules.findIndex((r) => r.includes(HOST) && r.at(-1) === "DROP");
    expect(allowApi).toBeGreaterThanOrEqual(0);
    expect(dropHost).toBeGreaterThan(allowApi);
  });

  test("GIVEN gateway-only WHEN its rules are made THEN one opens the gateway UDP range as from:to", () => {
    expect(gatewayOnly()).toContainEqual(["-p", "udp", "--dport", `${GATEWAY.from}:${GATEWAY.to}`, "-j", "RETURN"]);
  });

  test("GIVEN gateway-only WHEN rules are made for another host, API port and range THEN they use those values", () => {
    const rules = profileRules("gateway-only", "10.9.9.1", 16443, { from: 4000, to: 4000 });
    expect(verdict(rules, { source: "10.9.9.1", protocol: "tcp", port: 16443 })).toBe("RETURN");
    expect(verdict(rules, { source: "10.9.9.1", protocol: "tcp", port: API_PORT })).toBe("DROP");
    expect(verdict(rules, { source: OTHER_CLUSTER, protocol: "udp", port: 4000 })).toBe("RETURN");
    expect(verdict(rules, { source: OTHER_CLUSTER, protocol: "udp", port: 4001 })).toBe("DROP");
  });

  test("GIVEN gateway-only WHEN rules are made THEN every argument is a non-empty string", () => {
    for (const rule of gatewayOnly())
      for (const arg of rule) expect(typeof arg === "string" && arg.length > 0).toBe(true);
  });
});

describe("profileRules gateway-only, by what happens to packets", () => {
  const rules = gatewayOnly();

  test("GIVEN the host WHEN it connects to the API server port THEN the packet passes", () => {
    expect(verdict(rules, { source: HOST, protocol: "tcp", port: API_PORT })).toBe("RETURN");
  });

  test.each([
    ["tcp", 10250],
    ["tcp", 7070],
    ["udp", GATEWAY.from],
  ] as const)("GIVEN the host WHEN it sends %s to port %p THEN the packet is dropped", (protocol, port) => {
    expect(verdict(rules, { source: HOST, protocol, port })).toBe("DROP");
  });

  test.each([GATEWAY.from, (GATEWAY.from + GATEWAY.to) >> 1, GATEWAY.to])(
    "GIVEN another cluster WHEN it sends UDP to gateway port %p THEN the packet passes",
    (port) => {
      expect(verdict(rules, { source: OTHER_CLUSTER, protocol: "udp", port })).toBe("RETURN");
    },
  );

  test.each([
    ["udp", GATEWAY.from - 1],
    ["udp", GATEWAY.to + 1],
    ["tcp", GATEWAY.from],
    ["tcp", API_PORT],
    ["tcp", 10250],
  ] as const)("GIVEN another cluster WHEN it sends %s to port %p THEN the packet is dropped", (protocol, port) => {
    expect(verdict(rules, { source: OTHER_CLUSTER, protocol, port })).toBe("DROP");
  });

  test.each([HOST, OTHER_CLUSTER])(
    "GIVEN a reply from %s to a connection the cluster opened WHEN it arrives on any port THEN it passes",
    (source) => {
      expect(verdict(rules, { source, protocol: "tcp", port: 40123, established: true })).toBe("RETURN");
    },
  );

  test("GIVEN any packet WHEN evaluated THEN some rule decides it, so nothing falls through the chain", () => {
    for (const source of [HOST, OTHER_CLUSTER, "203.0.113.9"]) {
      for (const protocol of ["tcp", "udp"] as const) {
        for (const port of [1, 22, API_PORT, GATEWAY.from, GATEWAY.to, 65535]) {
          expect(verdict(rules, { source, protocol, port })).not.toBe("no rule");
        }
      }
    }
  });
});

describe("profileRules gateway-only: the order matters", () => {
  const rules = gatewayOnly();
  const moved = (from: number, to: number): string[][] => {
    const copy = [...rules];
    const [rule] = copy.splice(from, 1);
    copy.splice(to, 0, rule!);
    return copy;
  };
  const indexOf = (predicate: (rule: string[]) => boolean): number => rules.findIndex(predicate);
  const apiAllow = indexOf((r) => r.includes(String(API_PORT)));
  const hostDrop = indexOf((r) => r.includes(HOST) && r.at(-1) === "DROP");
  const established = indexOf((r) => r.includes("--ctstate"));

  test("GIVEN the host's DROP placed before its API port rule WHEN the host reaches the API server THEN it would be cut off", () => {
    const swapped = moved(hostDrop, apiAllow);
    expect(verdict(rules, { source: HOST, protocol: "tcp", port: API_PORT })).toBe("RETURN");
    expect(verdict(swapped, { source: HOST, protocol: "tcp", port: API_PORT })).toBe("DROP");
  });

  test("GIVEN the host's DROP placed after the gateway range rule WHEN the host sends UDP to a gateway port THEN it would pass", () => {
    const gatewayAllow = indexOf((r) => r.includes("udp"));
    const late = moved(hostDrop, gatewayAllow);
    expect(verdict(rules, { source: HOST, protocol: "udp", port: GATEWAY.from })).toBe("DROP");
    expect(verdict(late, { source: HOST, protocol: "udp", port: GATEWAY.from })).toBe("RETURN");
  });

  test("GIVEN the established rule placed last but one WHEN a reply arrives from the host THEN it would be dropped", () => {
    const late = moved(established, rules.length - 2);
    const reply: Packet = { source: HOST, protocol: "tcp", port: 40123, established: true };
    expect(verdict(rules, reply)).toBe("RETURN");
    expect(verdict(late, reply)).toBe("DROP");
  });

  test("GIVEN the final DROP placed first WHEN a gateway packet arrives THEN it would be dropped", () => {
    const first = moved(rules.length - 1, 0);
    expect(verdict(rules, { source: OTHER_CLUSTER, protocol: "udp", port: GATEWAY.from })).toBe("RETURN");
    expect(verdict(first, { source: OTHER_CLUSTER, protocol: "udp", port: GATEWAY.from })).toBe("DROP");
  });
});
