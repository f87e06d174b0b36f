/**
 * Gateway NAT rules and routes for remapped peers: their shape, their order, their deletion, and
 * (through a small netfilter simulator that runs the forged arguments) that packets really get
 * through with identical pod CIDRs on both sides.
 */
import { Cidr } from "../../../../provider/net/cidr.js";
import {
  FABRIC_MARK_MASK,
  FABRIC_RULE_PRIORITY,
  forgeNatRuleDeletions,
  forgeNatRuleDeletionsFromListing,
  forgeNatRules,
  forgePeerMarks,
  forgeRouteDeletions,
  forgeRoutes,
  forgeRelayRule,
  forgeServerReplyRule,
  type GatewayPlan,
  GatewayPlanError,
  type IptablesRule,
  peerRouteTable,
} from "../../../../provider/network-fabric/gateway-nat.js";
import { chooseRemoteView, type RemoteView } from "../../../../provider/network-fabric/remap.js";

const c = (text: string): Cidr => Cidr.parse(text);
/** The pod CIDR both simulated clusters use. */
const POD_CIDR = c("10.100.0.0/16");

/** B's view from A when both use 10.100.0.0/16 for pods and 10.70.0.0/16 as external CIDR. */
function identicalView(withExternal: boolean): RemoteView {
  return chooseRemoteView({
    localPodCidr: c("10.100.0.0/16"),
    remotePodCidr: c("10.100.0.0/16"),
    ...(withExternal ? { localExternalCidr: c("10.70.0.0/16"), remoteExternalCidr: c("10.70.0.0/16") } : {}),
    reserved: [c("10.200.0.0/16")],
  });
}

const plan = (view: RemoteView, overrides: Partial<GatewayPlan> = {}): GatewayPlan => ({
  peerId: "cluster-b",
  tunnelInterface: "liqo-b",
  view,
  slot: 3,
  ...overrides,
});

describe("forgeNatRules", () => {
  test("GIVEN a peer seen as is WHEN forging THEN there are no NAT rules and only a main-table route", () => {
    const view = chooseRemoteView({
      localPodCidr: c("10.100.0.0/16"),
      remotePodCidr: c("10.101.0.0/16"),
      reserved: [],
    });
    expect(forgeNatRules(plan(view))).toEqual([]);
    expect(forgeNatRuleDeletions(plan(view))).toEqual([]);
    expect(forgeRoutes(plan(view))).toEqual([["route", "replace", "10.101.0.0/16", "dev", "liqo-b"]]);
  });

  test("GIVEN a remapped pod CIDR WHEN forging THEN the rules mark in mangle first, then NETMAP in nat, in this exact order", () => {
    const m = "-m comment --comment pulumi-liqo:cluster-b";
    const expected = [
      `-t mangle -A PREROUTING -d 10.64.0.0/16 ${m} -j MARK --set-xmark 0x30000/0x1ff0000`,
      `-t mangle -A OUTPUT -d 10.64.0.0/16 ${m} -j MARK --set-xmark 0x30000/0x1ff0000`,
      `-t mangle -A PREROUTING -s 10.100.0.0/16 -i liqo-b ${m} -j MARK --set-xmark 0x1030000/0x1ff0000`,
      `-t nat -A PREROUTING -d 10.64.0.0/16 ${m} -j NETMAP --to 10.100.0.0/16`,
      `-t nat -A OUTPUT -d 10.64.0.0/16 ${m} -j NETMAP --to 10.100.0.0/16`,
      `-t nat -A POSTROUTING -s 10.100.0.0/16 -m mark --mark 0x1030000/0x1ff0000 ${m} -j NETMAP --to 10.64.0.0/16`,
      `-t nat -A INPUT -s 10.100.0.0/16 -i liqo-b ${m} -j NETMAP --to 10.64.0.0/16`,
    ];
    const rules = forgeNatRules(plan(identicalView(false)));
    expect(rules.map((r) => r.args.join(" "))).toEqual(expected);
    for (const r of rules) expect(r.args).toEqual(["-t", r.table, "-A", r.chain, ...r.spec]);
  });

  test("GIVEN remapped pod and external CIDRs WHEN forging THEN each range gets its seven rules, pod first", () => {
    const rules = forgeNatRules(plan(identicalView(true)));
    expect(rules).toHaveLength(14);
    expect(rules.slice(0, 7).every((r) => r.spec.some((t) => t.startsWith("10.64.") || t.startsWith("10.100.")))).toBe(
      true,
    );
    expect(rules.slice(7).every((r) => r.spec.some((t) => t.startsWith("10.65.") || t.startsWith("10.70.")))).toBe(
      true,
    );
  });

  test("GIVEN any remapped plan WHEN forging THEN every rule carries its peer's comment once and sits in a chain where its target is valid", () => {
    for (const r of forgeNatRules(plan(identicalView(true)))) {
      expect(r.spec.filter((t) => t === "--comment")).toHaveLength(1);
      expect(r.spec[r.spec.indexOf("--comment") + 1]).toBe("pulumi-liqo:cluster-b");
      const target = r.spec[r.spec.indexOf("-j") + 1];
      if (target === "MARK") expect(r.table).toBe("mangle");
      if (target === "NETMAP") {
        expect(r.table).toBe("nat");
        // NETMAP maps destinations in PREROUTING/OUTPUT and sources in POSTROUTING/INPUT.
        const mapsDestination = r.chain === "PREROUTING" || r.chain === "OUTPUT";
        expect(r.spec.includes(mapsDestination ? "-d" : "-s")).toBe(true);
      }
      // iptables refuses an input-interface match in POSTROUTING and OUTPUT.
      if (r.chain === "POSTROUTING" || r.chain === "OUTPUT") expect(r.spec).not.toContain("-i");
    }
  });

  test("GIVEN slots 1 to 255 WHEN forging marks THEN every mark lies in the fabric mask and no two are equal", () => {
    const seen = new Set<string>();
    for (let slot = 1; slot <= 255; slot++) {
      const marks = forgePeerMarks(slot);
      for (const mark of [marks.toPeer, marks.fromPeer]) {
        const [value, mask] = mark.split("/").map(Number) as [number, number];
        expect(mask).toBe(FABRIC_MARK_MASK);
        expect((value & ~FABRIC_MARK_MASK) >>> 0).toBe(0);
        expect(value).not.toBe(0);
        seen.add(mark);
      }
    }
    expect(seen.size).toBe(510);
  });

  test("GIVEN a bad peer id, interface and slot WHEN forging THEN one branded error lists all three, quoting each", () => {
    const error = (() => {
      try {
        forgeNatRules(
          plan(identicalView(false), { peerId: "b c", tunnelInterface: "a-very-long-interface", slot: 256 }),
        );
      } catch (e) {
        return e as GatewayPlanError;
      }
      throw new Error("expected a throw");
    })();
    expect(error.isGatewayPlanError).toBe(true);
    expect(error.problems).toHaveLength(3);
    expect(error.message).toContain('"b c"');
    expect(error.message).toContain('"a-very-long-interface"');
    expect(error.message).toContain("slot 256");
    expect(() => forgeRoutes(plan(identicalView(false), { slot: 0 }))).toThrow(/slot 0/);
    expect(() => forgePeerMarks(1.5)).toThrow(/slot 1.5/);
  });
});

describe("forgeNatRuleDeletions", () => {
  test.each([false, true])(
    "GIVEN a remapped plan (external CIDR: %s) WHEN forging deletions THEN they mirror the creations in reverse",
    (withExternal) => {
      const p = plan(identicalView(withExternal));
      const creations = forgeNatRules(p);
      const deletions = forgeNatRuleDeletions(p);
      expect(deletions).toHaveLength(creations.length);
      deletions.forEach((d, i) => {
        const created = creations[creations.length - 1 - i]!;
        expect(d).toEqual(created.args.map((t, j) => (j === 2 ? "-D" : t)));
      });
    },
  );

  test(
    "GIVEN a listing with this peer's rules, a peer with a longer id and foreign rules WHEN deleting from the listing " +
      "THEN only this peer's rules go, last first",
    () => {
      const own = forgeNatRules(plan(identicalView(true)));
      const other = forgeNatRules(plan(identicalView(true), { peerId: "cluster-b2", slot: 4 }));
      const listed = (table: IptablesRule["table"]): string =>
        [
          `-P PREROUTING ACCEPT`,
          `-N KUBE-SERVICES`,
          `-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
          `-A POSTROUTING -m comment --comment "pulumi-liqo:cluster-b is mentioned here" -j RETURN`,
          ...[...own, ...other].filter((r) => r.table === table).map((r) => ["-A", r.chain, ...r.spec].join(" ")),
        ].join("\n");
      for (const table of ["mangle", "nat"] as const) {
        const expected = forgeNatRuleDeletions(plan(identicalView(true))).filter((d) => d[1] === table);
        expect(forgeNatRuleDeletionsFromListing(table, listed(table), "cluster-b")).toEqual(expected);
      }
      expect(forgeNatRuleDeletionsFromListing("nat", listed("nat"), "cluster")).toEqual([]);
    },
  );
});

describe("forgeServerReplyRule", () => {
  test("GIVEN a server on port 51820 of a node at 192.168.1.7 WHEN forged THEN its replies from any other address leave untracked", () => {
    const rule = forgeServerReplyRule("liqo-b", 51820, "192.168.1.7");
    expect(rule.args).toEqual([
      ...["-t", "raw", "-A", "OUTPUT", "!", "-s", "192.168.1.7/32", "-p", "udp", "-m", "udp", "--sport", "51820"],
      ...["-m", "comment", "--comment", "pulumi-liqo:liqo-b", "-j", "NOTRACK"],
    ]);
  });

  test("GIVEN no node address (the gateway's namespace is the one peers dial) WHEN forged THEN every reply from the port", () => {
    expect(forgeServerReplyRule("liqo-b", 51821).spec.slice(0, 6)).toEqual([
      "-p",
      "udp",
      "-m",
      "udp",
      "--sport",
      "51821",
    ]);
  });

  test("GIVEN the rule as iptables lists it WHEN deleting the peer's rules from the listing THEN it goes, and only it", () => {
    const own = forgeServerReplyRule("liqo-b", 51820, "192.168.1.7");
    const listing = [
      "-P OUTPUT ACCEPT",
      ["-A", own.chain, ...own.spec].join(" "),
      ["-A", "OUTPUT", ...forgeServerReplyRule("liqo-b2", 51821).spec].join(" "),
    ].join("\n");
    expect(forgeNatRuleDeletionsFromListing("raw", listing, "liqo-b")).toEqual([
      ["-t", "raw", "-D", "OUTPUT", ...own.spec],
    ]);
  });

  test("GIVEN a bad peer id, port and address WHEN forged THEN one error names all three", () => {
    expect(() => forgeServerReplyRule("b c", 70000, "10.0.0")).toThrow(
      /peerId "b c".*listenPort 70000.*nodeAddress "10\.0\.0"/,
    );
  });
});

describe("forgeRelayRule", () => {
  test(
    "GIVEN a tunnel address relaying ports 6443 and 8443 WHEN forged THEN connections from the tunnel to them skip nat " +
      "PREROUTING, inserted first (ahead of kube-proxy's NodePort DNAT)",
    () => {
      const rule = forgeRelayRule("lqw1", "lqw1", "169.254.1.1", [6443, 8443]);
      expect(rule.args).toEqual([
        ...["-t", "nat", "-I", "PREROUTING", "1", "-d", "169.254.1.1/32", "-i", "lqw1", "-p", "tcp"],
        ...[
          "-m",
          "multiport",
          "--dports",
          "6443,8443",
          "-m",
          "comment",
          "--comment",
          "pulumi-liqo:lqw1",
          "-j",
          "ACCEPT",
        ],
      ]);
      // Listed like the peer's other nat rules, so its removal takes it and leaves the others' alone.
      const listing = ["-A", rule.chain, ...rule.spec].join(" ");
      expect(forgeNatRuleDeletionsFromListing("nat", listing, "lqw1")).toEqual([
        ["-t", "nat", "-D", "PREROUTING", ...rule.spec],
      ]);
      expect(forgeNatRuleDeletionsFromListing("nat", listing, "lqw2")).toEqual([]);
    },
  );

  test("GIVEN the same port twice WHEN forged THEN it is matched once", () => {
    const { spec } = forgeRelayRule("lqw1", "lqw1", "169.254.1.1", [443, 443]);
    expect(spec[spec.indexOf("--dports") + 1]).toBe("443");
  });

  test("GIVEN a bad interface, address and port WHEN forged THEN one error names all three", () => {
    expect(() => forgeRelayRule("lqw1", "a b", "169.254.1", [0])).toThrow(
      /tunnelInterface "a b".*address "169\.254\.1".*port 0/,
    );
  });
});

describe("forgeRoutes", () => {
  test(
    "GIVEN remapped pod and external CIDRs WHEN forging routes THEN as-seen ranges go to the tunnel, real ranges to the " +
      "peer table, then the mark rule",
    () => {
      const table = String(peerRouteTable(3));
      expect(forgeRoutes(plan(identicalView(true)))).toEqual([
        ["route", "replace", "10.64.0.0/16", "dev", "liqo-b"],
        ["route", "replace", "10.65.0.0/16", "dev", "liqo-b"],
        ["route", "replace", "10.100.0.0/16", "dev", "liqo-b", "table", table],
        ["route", "replace", "10.70.0.0/16", "dev", "liqo-b", "table", table],
        ["rule", "add", "fwmark", forgePeerMarks(3).toPeer, "lookup", table, "priority", String(FABRIC_RULE_PRIORITY)],
      ]);
    },
  );

  test.each([false, true])(
    "GIVEN a remapped plan (external CIDR: %s) WHEN forging route deletions THEN they mirror the routes in reverse",
    (withExternal) => {
      const p = plan(identicalView(withExternal));
      const routes = forgeRoutes(p);
      const deletions = forgeRouteDeletions(p);
      expect(deletions).toEqual([...routes].reverse().map((r) => [r[0], "del", ...r.slice(2)]));
      expect(deletions[0]![0]).toBe("rule");
    },
  );
});

// ---------------------------------------------------------------------------------------------
// A netfilter simulator: just enough of mangle/nat hooks, conntrack, policy routing and NETMAP
// to run the forged arguments. Ports are ignored; a connection is its address pair.

interface Packet {
  readonly src: string;
  readonly dst: string;
}

const toNumber = (address: string): number => address.split(".").reduce((acc, p) => acc * 256 + Number(p), 0);
const toAddress = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");
const inCidr = (address: string, cidr: string): boolean => Cidr.parse(cidr).contains(address);
/** NETMAP, written independently of translateAddress: keep the host bits, take the network bits of `to`. */
const netmap = (address: string, to: string): string => {
  const block = Cidr.parse(to);
  return toAddress(block.network + (toNumber(address) % block.size));
};
const markValue = (text: string): [number, number] => text.split("/").map(Number) as [number, number];

interface SimRule {
  readonly table: string;
  readonly chain: string;
  readonly args: readonly string[];
}

interface Route {
  readonly cidr: string;
  readonly dev: string;
}

/** One gateway: its rules, routes, own addresses and conntrack table. */
class SimGateway {
  readonly rules: SimRule[] = [];
  readonly tables = new Map<string, Route[]>([["main", []]]);
  readonly ipRules: { mark: string; table: string; priority: number }[] = [];
  /** Each connection: the tuple as first seen and as finally sent. */
  readonly conntrack: { original: Packet; translated: Packet }[] = [];

  constructor(
    readonly ownAddresses: readonly string[],
    mainRoutes: readonly Route[],
  ) {
    this.tables.get("main")!.push(...mainRoutes);
  }

  /** Runs `iptables` arguments as a kernel would store them. */
  iptables(args: readonly string[]): void {
    const [, table, action, chain, ...spec] = args as [string, string, string, string, ...string[]];
    if (action === "-A") this.rules.push({ table, chain, args: spec });
    else if (action === "-D") {
      const i = this.rules.findIndex(
        (r) => r.table === table && r.chain === chain && r.args.join(" ") === spec.join(" "),
      );
      if (i < 0) throw new Error(`iptables: no such rule: ${args.join(" ")}`);
      this.rules.splice(i, 1);
    } else throw new Error(`unsupported iptables action ${action}`);
  }

  /** Runs `ip` arguments. */
  ip(args: readonly string[]): void {
    const [object, action, ...rest] = args as [string, string, ...string[]];
    const option = (name: string): string | undefined =>
      rest.includes(name) ? rest[rest.indexOf(name) + 1] : undefined;
    if (object === "route") {
      const table = option("table") ?? "main";
      const routes = this.tables.get(table) ?? [];
      this.tables.set(table, routes);
      const i = routes.findIndex((r) => r.cidr === rest[0]);
      if (action === "replace") {
        if (i >= 0) routes.splice(i, 1);
        routes.push({ cidr: rest[0]!, dev: option("dev")! });
      } else if (i >= 0) routes.splice(i, 1);
      else throw new Error(`ip: no such route ${args.join(" ")}`);
    } else {
      const entry = { mark: option("fwmark")!, table: option("lookup")!, priority: Number(option("priority")) };
      if (action === "add") this.ipRules.push(entry);
      else
        this.ipRules.splice(
          this.ipRules.findIndex((r) => JSON.stringify(r) === JSON.stringify(entry)),
          1,
        );
    }
  }

  /** Longest-prefix match in a table. */
  private lookup(table: string, dst: string): Route | undefined {
    return (this.tables.get(table) ?? [])
      .filter((r) => inCidr(dst, r.cidr))
      .sort((a, b) => Cidr.parse(b.cidr).prefixLength - Cidr.parse(a.cidr).prefixLength)[0];
  }

  /** Policy routing: fwmark rules by priority, then main; undefined means deliver locally. */
  route(dst: string, mark: number): string | undefined {
    if (this.ownAddresses.includes(dst)) return undefined;
    for (const r of [...this.ipRules].sort((a, b) => a.priority - b.priority)) {
      const [value, mask] = markValue(r.mark);
      const found = (mark & mask) >>> 0 === value ? this.lookup(r.table, dst) : undefined;
      if (found) return found.dev;
    }
    const found = this.lookup("main", dst);
    if (!found) throw new Error(`no route to ${dst}`);
    return found.dev;
  }

  /** Runs one chain on a packet; returns the NETMAP target of the first matching NAT rule. */
  private chain(
    table: string,
    chain: string,
    packet: Packet,
    state: { mark: number; iif?: string },
  ): string | undefined {
    for (const rule of this.rules.filter((r) => r.table === table && r.chain === chain)) {
      const a = rule.args;
      const opt = (name: string): string | undefined => (a.includes(name) ? a[a.indexOf(name) + 1] : undefined);
      const s = opt("-s");
      const d = opt("-d");
      const i = opt("-i");
      const m = opt("--mark");
      if (s && !inCidr(packet.src, s)) continue;
      if (d && !inCidr(packet.dst, d)) continue;
      if (i && i !== state.iif) continue;
      if (m) {
        const [value, mask] = markValue(m);
        if ((state.mark & mask) >>> 0 !== value) continue;
      }
      const target = opt("-j");
      if (target === "MARK") {
        const [value, mask] = markValue(opt("--set-xmark")!);
        state.mark = ((state.mark & ~mask) ^ value) >>> 0;
      } else if (target === "NETMAP") return opt("--to");
    }
    return undefined;
  }

  /** The connection a packet belongs to, and in which direction. */
  private connection(p: Packet): { original: Packet; translated: Packet; reply: boolean } | undefined {
    for (const ct of this.conntrack) {
      if (ct.original.src === p.src && ct.original.dst === p.dst) return { ...ct, reply: false };
      if (ct.translated.dst === p.src && ct.translated.src === p.dst) return { ...ct, reply: true };
    }
    return undefined;
  }

  /** Destination and source manipulations of an established connection, in packet direction. */
  private established(ct: { original: Packet; translated: Packet; reply: boolean }): { dst: string; src: string } {
    return ct.reply
      ? { dst: ct.original.src, src: ct.original.dst }
      : { dst: ct.translated.dst, src: ct.translated.src };
  }

  /** A packet arriving on `iif`: delivered locally or sent out of an interface. */
  receive(packet: Packet, iif: string): { packet: Packet; out: string | "local" } {
    const state: { mark: number; iif?: string } = { mark: 0, iif };
    this.chain("mangle", "PREROUTING", packet, state);
    const ct = this.connection(packet);
    let p = packet;
    if (ct) p = { ...p, dst: this.established(ct).dst };
    else {
      const to = this.chain("nat", "PREROUTING", p, state);
      if (to) p = { ...p, dst: netmap(p.dst, to) };
    }
    const oif = this.route(p.dst, state.mark);
    const hook = oif === undefined ? "INPUT" : "POSTROUTING";
    if (ct) p = { ...p, src: this.established(ct).src };
    else {
      const to = this.chain("nat", hook, p, state);
      if (to) p = { ...p, src: netmap(p.src, to) };
      this.conntrack.push({ original: packet, translated: p });
    }
    return { packet: p, out: oif ?? "local" };
  }

  /** A packet generated on the gateway host itself. */
  send(packet: Packet): { packet: Packet; out: string } {
    const state = { mark: 0 };
    this.route(packet.dst, 0); // the first lookup, before any mark: it must find a route
    this.chain("mangle", "OUTPUT", packet, state);
    const ct = this.connection(packet);
    let p = packet;
    if (ct) p = { ...p, dst: this.established(ct).dst };
    else {
      const to = this.chain("nat", "OUTPUT", p, state);
      if (to) p = { ...p, dst: netmap(p.dst, to) };
    }
    const oif = this.route(p.dst, state.mark)!; // rerouted after the mark and NETMAP
    if (ct) p = { ...p, src: this.established(ct).src };
    if (!ct) this.conntrack.push({ original: packet, translated: p });
    return { packet: p, out: oif };
  }
}

/** Two clusters, A and B, both with pods in 10.100.0.0/16, joined by one tunnel. */
function identicalClusters(options: { policyRouting: boolean } = { policyRouting: true }) {
  const pods = POD_CIDR;
  const external = c("10.70.0.0/16");
  const make = (peerId: string, tun: string, tunAddress: string, peerTunAddress: string) => {
    const view = chooseRemoteView({
      localPodCidr: pods,
      localExternalCidr: external,
      remotePodCidr: pods,
      remoteExternalCidr: external,
      reserved: [c("10.200.0.0/16")],
    });
    const gw = new SimGateway(
      [tunAddress, "172.29.1.2"],
      [
        { cidr: "10.100.0.0/16", dev: "pods" },
        { cidr: `${peerTunAddress}/32`, dev: tun },
        { cidr: "0.0.0.0/0", dev: "eth0" },
      ],
    );
    const p = { peerId, tunnelInterface: tun, view, slot: 1 };
    for (const args of forgeRoutes(p)) if (options.policyRouting || args[0] !== "rule") gw.ip(args);
    for (const r of forgeNatRules(p)) gw.iptables(r.args);
    return { gw, view, plan: p };
  };
  return { a: make("b", "liqo-b", "169.254.0.1", "169.254.0.2"), b: make("a", "liqo-a", "169.254.0.2", "169.254.0.1") };
}

describe("the forged rules in a netfilter simulator", () => {
  test(
    "GIVEN identical pod CIDRs WHEN A's pods reach many of B's pods at their remapped addresses THEN each packet reaches " +
      "the real pod and each reply comes from the remapped address",
    () => {
      const { a, b } = identicalClusters();
      const seenB = a.view.remotePodCidrAsSeen; // B's pods as A sees them
      const seenA = b.view.remotePodCidrAsSeen; // A's pods as B sees them
      for (let i = 0; i < 200; i++) {
        const client = `10.100.${(i * 37) % 256}.${(i * 11 + 1) % 256}`;
        const server = `10.100.${(i * 53 + 7) % 256}.${(i * 29 + 3) % 256}`;
        const serverAsSeen = seenB.nth(toNumber(server) - POD_CIDR.network);
        // A pod in A sends to B's pod at its as-seen address; A's gateway forwards it.
        const leavingA = a.gw.receive({ src: client, dst: serverAsSeen }, "pods");
        expect(leavingA).toEqual({ packet: { src: client, dst: server }, out: "liqo-b" });
        // B's gateway receives it from the tunnel and delivers it to its pod.
        const atB = b.gw.receive(leavingA.packet, "liqo-a");
        const clientAsSeenByB = seenA.nth(toNumber(client) - POD_CIDR.network);
        expect(atB).toEqual({ packet: { src: clientAsSeenByB, dst: server }, out: "pods" });
        // The reply goes back the same way; each conntrack undoes its own gateway's translation.
        const replyLeavingB = b.gw.receive({ src: server, dst: clientAsSeenByB }, "pods");
        expect(replyLeavingB).toEqual({ packet: { src: server, dst: client }, out: "liqo-a" });
        const replyAtA = a.gw.receive(replyLeavingB.packet, "liqo-b");
        expect(replyAtA).toEqual({ packet: { src: serverAsSeen, dst: client }, out: "pods" });
      }
    },
  );

  test(
    "GIVEN identical pod CIDRs WHEN the gateway host of A probes a remapped address THEN the probe reaches B's real pod " +
      "and the reply comes from the remapped address",
    () => {
      const { a, b } = identicalClusters();
      const probe = a.gw.send({ src: "169.254.0.1", dst: "10.64.3.9" });
      expect(probe).toEqual({ packet: { src: "169.254.0.1", dst: "10.100.3.9" }, out: "liqo-b" });
      const atB = b.gw.receive(probe.packet, "liqo-a");
      expect(atB).toEqual({ packet: { src: "169.254.0.1", dst: "10.100.3.9" }, out: "pods" });
      const reply = b.gw.receive({ src: "10.100.3.9", dst: "169.254.0.1" }, "pods");
      expect(reply.out).toBe("liqo-a");
      expect(a.gw.receive(reply.packet, "liqo-b")).toEqual({
        packet: { src: "10.64.3.9", dst: "169.254.0.1" },
        out: "local",
      });
    },
  );

  test(
    "GIVEN identical pod CIDRs WHEN a B pod opens a connection to A's gateway host THEN the host sees it from the " +
      "remapped address and its reply returns through the tunnel",
    () => {
      const { a } = identicalClusters();
      expect(a.gw.receive({ src: "10.100.8.8", dst: "169.254.0.1" }, "liqo-b")).toEqual({
        packet: { src: "10.64.8.8", dst: "169.254.0.1" },
        out: "local",
      });
      expect(a.gw.send({ src: "169.254.0.1", dst: "10.64.8.8" })).toEqual({
        packet: { src: "169.254.0.1", dst: "10.100.8.8" },
        out: "liqo-b",
      });
    },
  );

  test("GIVEN identical external CIDRs WHEN A's pods reach B's remapped external range THEN the packet reaches B's real external address", () => {
    const { a } = identicalClusters();
    const seen = a.view.remoteExternalCidrAsSeen!.nth(0x0102);
    expect(a.gw.receive({ src: "10.100.0.7", dst: seen }, "pods")).toEqual({
      packet: { src: "10.100.0.7", dst: "10.70.1.2" },
      out: "liqo-b",
    });
  });

  test("GIVEN a local pod in the remote's real range WHEN it sends to the internet THEN its source is left alone", () => {
    const { a } = identicalClusters();
    expect(a.gw.receive({ src: "10.100.0.7", dst: "1.1.1.1" }, "pods")).toEqual({
      packet: { src: "10.100.0.7", dst: "1.1.1.1" },
      out: "eth0",
    });
  });

  test("GIVEN the routes without the mark rule WHEN A's pod sends to a remapped address THEN the packet loops back to local pods (why the rule exists)", () => {
    const { a } = identicalClusters({ policyRouting: false });
    expect(a.gw.receive({ src: "10.100.0.7", dst: "10.64.0.5" }, "pods").out).toBe("pods");
  });

  test("GIVEN installed rules and routes WHEN running the forged deletions THEN the gateway is back to its bare state", () => {
    const { a } = identicalClusters();
    for (const args of forgeNatRuleDeletions(a.plan)) a.gw.iptables(args);
    for (const args of forgeRouteDeletions(a.plan)) a.gw.ip(args);
    expect(a.gw.rules).toEqual([]);
    expect(a.gw.ipRules).toEqual([]);
    expect(a.gw.tables.get("main")!.map((r) => r.cidr)).toEqual(["10.100.0.0/16", "169.254.0.2/32", "0.0.0.0/0"]);
    expect(a.gw.tables.get(String(peerRouteTable(1)))).toEqual([]);
  });
});
