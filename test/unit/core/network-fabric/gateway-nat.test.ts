/**
 * Gateway translation and routes for remapped peers: their shape, their deletion, and (through a
 * small netfilter simulator that runs the forged arguments) that packets really get through with
 * identical pod CIDRs on both sides, through a Service on the gateway's node, and across a move of
 * the gateway to another node.
 */
import { Cidr } from "../../../../core/net/cidr.js";
import {
  forgeNatRuleDeletionsFromListing,
  forgeNatTable,
  forgeNatTableDeletion,
  forgeRouteDeletions,
  forgeRoutes,
  forgeRelayRule,
  forgeServerReplyRule,
  forgeTranslations,
  type GatewayPlan,
  GatewayPlanError,
  natTableName,
} from "../../../../core/network-fabric/gateway-nat.js";
import { chooseRemoteView, type RemoteView } from "../../../../core/network-fabric/remap.js";

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

describe("forgeNatTable", () => {
  test("GIVEN a peer seen as is WHEN forging THEN there is no table and only a main-table route", () => {
    const view = chooseRemoteView({
      localPodCidr: c("10.100.0.0/16"),
      remotePodCidr: c("10.101.0.0/16"),
      reserved: [],
    });
    expect(forgeTranslations(plan(view))).toEqual([]);
    expect(forgeNatTable(plan(view))).toBeUndefined();
    expect(forgeRoutes(plan(view))).toEqual([["route", "replace", "10.101.0.0/16", "dev", "liqo-b"]]);
  });

  test(
    "GIVEN a remapped pod CIDR WHEN forging THEN one nft transaction replaces the peer's table: destinations rewritten " +
      "after routing on the way into the tunnel, sources before conntrack on the way out of it",
    () => {
      const t = "ip pulumi-liqo-cluster-b";
      expect(forgeNatTable(plan(identicalView(false)))).toEqual([
        [
          `add table ${t}`,
          `delete table ${t}`,
          `add table ${t}`,
          `add chain ${t} to-peer { type filter hook postrouting priority 300; policy accept; }`,
          `add chain ${t} from-peer { type filter hook prerouting priority -300; policy accept; }`,
          `add rule ${t} to-peer oifname "liqo-b" ip daddr 10.64.0.0/16 ip daddr set ip daddr & 0.0.255.255 | 10.100.0.0`,
          `add rule ${t} from-peer iifname "liqo-b" ip saddr 10.100.0.0/16 ip saddr set ip saddr & 0.0.255.255 | 10.64.0.0`,
        ].join("; "),
      ]);
    },
  );

  test("GIVEN remapped pod and external CIDRs WHEN forging THEN each range is translated both ways, pod first", () => {
    expect(forgeTranslations(plan(identicalView(true))).map((t) => `${t.direction} ${t.match} ${t.to}`)).toEqual([
      "to-peer 10.64.0.0/16 10.100.0.0/16",
      "from-peer 10.100.0.0/16 10.64.0.0/16",
      "to-peer 10.65.0.0/16 10.70.0.0/16",
      "from-peer 10.70.0.0/16 10.65.0.0/16",
    ]);
  });

  test("GIVEN a peer WHEN forging the table's deletion THEN it names the same table", () => {
    expect(forgeNatTableDeletion("cluster-b")).toEqual(["delete", "table", "ip", natTableName("cluster-b")]);
    expect(natTableName("cluster-b")).toBe("pulumi-liqo-cluster-b");
  });

  test("GIVEN a bad peer id, interface and slot WHEN forging THEN one branded error lists all three, quoting each", () => {
    const error = (() => {
      try {
        forgeNatTable(
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
    expect(() => forgeNatTableDeletion("b;c")).toThrow(/peerId "b;c"/);
  });
});

describe("forgeNatRuleDeletionsFromListing", () => {
  test(
    "GIVEN the marks and NETMAP rules of a gateway before the stateless translation, a peer with a longer id and " +
      "foreign rules WHEN deleting from the listing THEN only this peer's rules go, last first",
    () => {
      const m = (peer: string): string => `-m comment --comment pulumi-liqo:${peer}`;
      const listing = [
        `-P PREROUTING ACCEPT`,
        `-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
        `-A PREROUTING -d 10.64.0.0/16 ${m("cluster-b")} -j NETMAP --to 10.100.0.0/16`,
        `-A PREROUTING -d 10.64.0.0/16 ${m("cluster-b2")} -j NETMAP --to 10.100.0.0/16`,
        `-A POSTROUTING -m comment --comment "pulumi-liqo:cluster-b is mentioned here" -j RETURN`,
        `-A POSTROUTING -s 10.100.0.0/16 -m mark --mark 0x1030000/0x1ff0000 ${m("cluster-b")} -j NETMAP --to 10.64.0.0/16`,
      ].join("\n");
      expect(forgeNatRuleDeletionsFromListing("nat", listing, "cluster-b")).toEqual([
        [
          "-t",
          "nat",
          "-D",
          "POSTROUTING",
          ...`-s 10.100.0.0/16 -m mark --mark 0x1030000/0x1ff0000 ${m("cluster-b")} -j NETMAP --to 10.64.0.0/16`.split(
            " ",
          ),
        ],
        [
          "-t",
          "nat",
          "-D",
          "PREROUTING",
          ...`-d 10.64.0.0/16 ${m("cluster-b")} -j NETMAP --to 10.100.0.0/16`.split(" "),
        ],
      ]);
      expect(forgeNatRuleDeletionsFromListing("nat", listing, "cluster")).toEqual([]);
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
  test("GIVEN remapped pod and external CIDRs WHEN forging routes THEN the as-seen ranges go into the tunnel in the main table", () => {
    expect(forgeRoutes(plan(identicalView(true)))).toEqual([
      ["route", "replace", "10.64.0.0/16", "dev", "liqo-b"],
      ["route", "replace", "10.65.0.0/16", "dev", "liqo-b"],
    ]);
  });

  test.each([false, true])(
    "GIVEN a remapped plan (external CIDR: %s) WHEN forging route deletions THEN they mirror the routes",
    (withExternal) => {
      const p = plan(identicalView(withExternal));
      expect(forgeRouteDeletions(p)).toEqual(forgeRoutes(p).map((r) => [r[0], "del", ...r.slice(2)]));
    },
  );
});

// ---------------------------------------------------------------------------------------------
// A netfilter simulator: just enough of the prerouting and postrouting hooks, conntrack, kube-proxy's
// DNAT and routing to run the forged arguments. Ports are ignored; a connection is its address pair.

interface Packet {
  readonly src: string;
  readonly dst: string;
}

const toNumber = (address: string): number => address.split(".").reduce((acc, p) => acc * 256 + Number(p), 0);
const toAddress = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");
const inCidr = (address: string, cidr: string): boolean => Cidr.parse(cidr).contains(address);

interface Route {
  readonly cidr: string;
  readonly dev: string;
}

/** One forged nft rule, read back from its text: on which interface, which field, from where, with which mask and network. */
interface SimTranslation {
  readonly table: string;
  readonly chain: "to-peer" | "from-peer";
  readonly dev: string;
  readonly field: "saddr" | "daddr";
  readonly match: string;
  readonly hostmask: string;
  readonly network: string;
}

/** One node's stack: its routes, nft tables, kube-proxy's Services and conntrack table. */
class SimNode {
  readonly routes: Route[];
  readonly nft: SimTranslation[] = [];
  readonly tables = new Set<string>();
  /** Each connection: the tuple as first seen by conntrack and as sent on after DNAT. */
  readonly conntrack: { original: Packet; translated: Packet }[] = [];

  constructor(
    readonly ownAddresses: readonly string[],
    mainRoutes: readonly Route[],
    /** kube-proxy's ClusterIP Services: ClusterIP to the endpoint it DNATs to. */
    readonly services: ReadonlyMap<string, string> = new Map(),
  ) {
    this.routes = [...mainRoutes];
  }

  /** Runs `ip route` arguments of the main table. */
  ip(args: readonly string[]): void {
    const [object, action, cidr, , dev] = args as [string, string, string, string, string];
    if (object !== "route") throw new Error(`unsupported ip object ${object}`);
    const i = this.routes.findIndex((r) => r.cidr === cidr);
    if (action === "replace") {
      if (i >= 0) this.routes.splice(i, 1);
      this.routes.push({ cidr, dev });
    } else if (i >= 0) this.routes.splice(i, 1);
    else throw new Error(`ip: no such route ${args.join(" ")}`);
  }

  /** Runs `nft` arguments: a batch of the commands the forgers write, or a table's deletion. */
  nftRun(args: readonly string[]): void {
    // Commands end at "; " outside braces: a chain's own declarations inside them use ";" too.
    for (const command of args.join(" ").split(/; (?![^{]*\})/)) {
      const words = command.split(" ");
      if (words[0] === "add" && words[1] === "table") this.tables.add(words[3]!);
      else if (words[0] === "delete" && words[1] === "table") {
        if (!this.tables.delete(words[3]!)) throw new Error(`nft: No such file or directory: ${command}`);
        this.nft.splice(0, this.nft.length, ...this.nft.filter((t) => t.table !== words[3]));
      } else if (words[0] === "add" && words[1] === "chain") continue;
      else {
        const m =
          /^add rule ip (\S+) (to-peer|from-peer) (?:oifname|iifname) "(\S+)" ip (saddr|daddr) (\S+) ip \4 set ip \4 & (\S+) \| (\S+)$/.exec(
            command,
          );
        if (!m) throw new Error(`nft: cannot read ${command}`);
        this.nft.push({
          table: m[1]!,
          chain: m[2] as SimTranslation["chain"],
          dev: m[3]!,
          field: m[4] as SimTranslation["field"],
          match: m[5]!,
          hostmask: m[6]!,
          network: m[7]!,
        });
      }
    }
  }

  /** The nft chain `chain` on a packet on interface `dev`: the rewrite, computed from the mask and network as the kernel does. */
  private translate(chain: SimTranslation["chain"], dev: string, packet: Packet): Packet {
    for (const t of this.nft.filter((x) => x.chain === chain && x.dev === dev)) {
      const address = packet[t.field === "saddr" ? "src" : "dst"];
      if (!inCidr(address, t.match)) continue;
      const rewritten = toAddress((((toNumber(address) & toNumber(t.hostmask)) | toNumber(t.network)) >>> 0) >>> 0);
      return t.field === "saddr" ? { ...packet, src: rewritten } : { ...packet, dst: rewritten };
    }
    return packet;
  }

  /** Longest-prefix match in the main table; undefined means deliver locally. */
  private route(dst: string): string | undefined {
    if (this.ownAddresses.includes(dst)) return undefined;
    const found = this.routes
      .filter((r) => inCidr(dst, r.cidr))
      .sort((a, b) => Cidr.parse(b.cidr).prefixLength - Cidr.parse(a.cidr).prefixLength)[0];
    if (!found) throw new Error(`no route to ${dst}`);
    return found.dev;
  }

  /** Conntrack and kube-proxy's DNAT: the packet with its destination translated, and the source to restore on a reply. */
  private track(packet: Packet): { packet: Packet; replySource?: string } {
    for (const ct of this.conntrack) {
      if (ct.original.src === packet.src && ct.original.dst === packet.dst)
        return { packet: { ...packet, dst: ct.translated.dst } };
      if (ct.translated.dst === packet.src && ct.translated.src === packet.dst)
        return { packet, replySource: ct.original.dst };
    }
    const translated = { ...packet, dst: this.services.get(packet.dst) ?? packet.dst };
    this.conntrack.push({ original: packet, translated });
    return { packet: translated };
  }

  /** A packet arriving on `iif`: delivered locally or sent out of an interface. */
  receive(packet: Packet, iif: string): { packet: Packet; out: string } {
    const arrived = this.translate("from-peer", iif, packet); // prerouting, -300: before conntrack
    const { packet: p, replySource } = this.track(arrived);
    const oif = this.route(p.dst);
    const restored = replySource ? { ...p, src: replySource } : p;
    if (oif === undefined) return { packet: restored, out: "local" };
    return { packet: this.translate("to-peer", oif, restored), out: oif }; // postrouting, 300
  }

  /** A packet generated on the node itself. */
  send(packet: Packet): { packet: Packet; out: string } {
    const { packet: p } = this.track(packet);
    const oif = this.route(p.dst)!;
    return { packet: this.translate("to-peer", oif, p), out: oif };
  }
}

/** The main routes of a node of a cluster whose pods are in 10.100.0.0/16: its own /24 on `pods`, the rest via `eth0`. */
const nodeRoutes = (peerTunAddress: string, tun: string): Route[] => [
  { cidr: "10.100.0.0/24", dev: "pods" },
  { cidr: "10.100.0.0/16", dev: "eth0" },
  { cidr: `${peerTunAddress}/32`, dev: tun },
  { cidr: "0.0.0.0/0", dev: "eth0" },
];

/** Two clusters, A and B, both with pods in 10.100.0.0/16, joined by one tunnel. */
function identicalClusters(services: ReadonlyMap<string, string> = new Map()) {
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
    const gw = new SimNode([tunAddress, "172.29.1.2"], nodeRoutes(peerTunAddress, tun), services);
    const p = { peerId, tunnelInterface: tun, view, slot: 1 };
    install(gw, p);
    return { gw, view, plan: p };
  };
  return { a: make("b", "liqo-b", "169.254.0.1", "169.254.0.2"), b: make("a", "liqo-a", "169.254.0.2", "169.254.0.1") };
}

/** What applyPeerFabric runs, on a simulated node. */
function install(node: SimNode, p: GatewayPlan): void {
  for (const args of forgeRoutes(p)) node.ip(args);
  const table = forgeNatTable(p);
  if (table) node.nftRun(table);
}

describe("the forged translation in a netfilter simulator", () => {
  test(
    "GIVEN identical pod CIDRs WHEN A's pods reach many of B's pods at their remapped addresses THEN each packet reaches " +
      "the real pod and each reply comes from the remapped address",
    () => {
      const { a, b } = identicalClusters();
      const seenB = a.view.remotePodCidrAsSeen; // B's pods as A sees them
      const seenA = b.view.remotePodCidrAsSeen; // A's pods as B sees them
      for (let i = 0; i < 200; i++) {
        const client = `10.100.0.${(i * 11 + 1) % 256}`;
        const server = `10.100.0.${(i * 29 + 3) % 256}`;
        const serverAsSeen = seenB.nth(toNumber(server) - POD_CIDR.network);
        const clientAsSeenByB = seenA.nth(toNumber(client) - POD_CIDR.network);
        // A pod in A sends to B's pod at its as-seen address; A's gateway forwards it.
        const leavingA = a.gw.receive({ src: client, dst: serverAsSeen }, "pods");
        expect(leavingA).toEqual({ packet: { src: client, dst: server }, out: "liqo-b" });
        // B's gateway receives it from the tunnel and delivers it to its pod, from A's pod as B sees it.
        const atB = b.gw.receive(leavingA.packet, "liqo-a");
        expect(atB).toEqual({ packet: { src: clientAsSeenByB, dst: server }, out: "pods" });
        // The reply goes back the same way; each gateway undoes its own translation, statelessly.
        const replyLeavingB = b.gw.receive({ src: server, dst: clientAsSeenByB }, "pods");
        expect(replyLeavingB).toEqual({ packet: { src: server, dst: client }, out: "liqo-a" });
        const replyAtA = a.gw.receive(replyLeavingB.packet, "liqo-b");
        expect(replyAtA).toEqual({ packet: { src: serverAsSeen, dst: client }, out: "pods" });
      }
      // Conntrack on both gateways holds no real address of the other side.
      expect(a.gw.conntrack.length).toBeGreaterThan(0);
      for (const ct of a.gw.conntrack)
        expect([ct.original.dst, ct.translated.dst]).toEqual([ct.original.dst, ct.original.dst]);
      for (const ct of a.gw.conntrack) expect(ct.original.dst).toMatch(/^10\.64\./);
    },
  );

  test(
    "GIVEN a pod on the gateway's node and a ClusterIP Service whose endpoint is a remote pod at its remapped address " +
      "WHEN the pod connects to the Service THEN kube-proxy's DNAT and the translation both apply, and the reply comes " +
      "back from the ClusterIP",
    () => {
      const services = new Map([["10.200.0.10", "10.64.0.9"]]);
      const { a, b } = identicalClusters(services);
      const request = a.gw.receive({ src: "10.100.0.7", dst: "10.200.0.10" }, "pods");
      expect(request).toEqual({ packet: { src: "10.100.0.7", dst: "10.100.0.9" }, out: "liqo-b" });
      const atB = b.gw.receive(request.packet, "liqo-a");
      expect(atB.out).toBe("pods");
      const reply = b.gw.receive({ src: "10.100.0.9", dst: atB.packet.src }, "pods");
      expect(a.gw.receive(reply.packet, "liqo-b")).toEqual({
        packet: { src: "10.200.0.10", dst: "10.100.0.7" },
        out: "pods",
      });
    },
  );

  test(
    "GIVEN a connection opened through node N1 while the gateway ran on N2 WHEN the gateway moves to N1 THEN the next " +
      "packet of the same connection leaves N1 into the tunnel with the real address, and the reply gets back",
    () => {
      const { a, b } = identicalClusters();
      const n1 = new SimNode(
        ["192.168.0.11"],
        [
          { cidr: "10.100.0.0/24", dev: "pods" },
          { cidr: "0.0.0.0/0", dev: "eth0" },
          { cidr: "10.64.0.0/16", dev: "eth0" }, // the route agent's: the remote via N2
        ],
      );
      const before = n1.receive({ src: "10.100.0.7", dst: "10.64.0.9" }, "pods");
      expect(before).toEqual({ packet: { src: "10.100.0.7", dst: "10.64.0.9" }, out: "eth0" });
      // The gateway moves: the route agent removes its route, the gateway sets up N1 as A's gateway did.
      n1.ip(["route", "del", "10.64.0.0/16"]);
      n1.ip(["route", "replace", "169.254.0.2/32", "dev", "liqo-b"]);
      install(n1, a.plan);
      const after = n1.receive({ src: "10.100.0.7", dst: "10.64.0.9" }, "pods");
      expect(after).toEqual({ packet: { src: "10.100.0.7", dst: "10.100.0.9" }, out: "liqo-b" });
      const reply = b.gw.receive({ src: "10.100.0.9", dst: b.gw.receive(after.packet, "liqo-a").packet.src }, "pods");
      expect(n1.receive(reply.packet, "liqo-b")).toEqual({
        packet: { src: "10.64.0.9", dst: "10.100.0.7" },
        out: "pods",
      });
    },
  );

  test(
    "GIVEN identical pod CIDRs WHEN the gateway host of A probes a remapped address THEN the probe reaches B's real pod " +
      "and the reply comes from the remapped address",
    () => {
      const { a, b } = identicalClusters();
      const probe = a.gw.send({ src: "169.254.0.1", dst: "10.64.0.9" });
      expect(probe).toEqual({ packet: { src: "169.254.0.1", dst: "10.100.0.9" }, out: "liqo-b" });
      const atB = b.gw.receive(probe.packet, "liqo-a");
      expect(atB).toEqual({ packet: { src: "169.254.0.1", dst: "10.100.0.9" }, out: "pods" });
      const reply = b.gw.receive({ src: "10.100.0.9", dst: "169.254.0.1" }, "pods");
      expect(reply.out).toBe("liqo-a");
      expect(a.gw.receive(reply.packet, "liqo-b")).toEqual({
        packet: { src: "10.64.0.9", dst: "169.254.0.1" },
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

  test("GIVEN a local pod in the remote's real range WHEN it sends to the internet or another node THEN its addresses are left alone", () => {
    const { a } = identicalClusters();
    expect(a.gw.receive({ src: "10.100.0.7", dst: "1.1.1.1" }, "pods")).toEqual({
      packet: { src: "10.100.0.7", dst: "1.1.1.1" },
      out: "eth0",
    });
    expect(a.gw.receive({ src: "10.100.0.7", dst: "10.100.3.4" }, "pods")).toEqual({
      packet: { src: "10.100.0.7", dst: "10.100.3.4" },
      out: "eth0",
    });
  });

  test("GIVEN installed translation and routes WHEN running the forged deletions THEN the gateway is back to its bare state", () => {
    const { a } = identicalClusters();
    a.gw.nftRun(forgeNatTableDeletion(a.plan.peerId));
    for (const args of forgeRouteDeletions(a.plan)) a.gw.ip(args);
    expect(a.gw.nft).toEqual([]);
    expect(a.gw.tables.size).toBe(0);
    expect(a.gw.routes.map((r) => r.cidr)).toEqual(["10.100.0.0/24", "10.100.0.0/16", "169.254.0.2/32", "0.0.0.0/0"]);
    expect(() => a.gw.nftRun(forgeNatTableDeletion(a.plan.peerId))).toThrow(/No such file or directory/);
  });
});
