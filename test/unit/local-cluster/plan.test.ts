/** planLab: every name, address and CIDR of a lab, decided and validated before anything exists. */
import { join } from "node:path";
import { Cidr } from "../../../core/net/cidr.js";
import {
  LabPlanError,
  LOAD_BALANCER_RANGE_SIZE,
  planLab,
  type ClusterRequest,
  type LabPlan,
  type PlanSettings,
} from "../../../local-cluster/plan.js";

const DIR = "/tmp/labs/t1";
const NAT_CIDR = "192.168.100.0/24";

const settings = (overrides: Partial<PlanSettings> = {}): PlanSettings => ({
  profile: "open",
  natForwards: [{ protocol: "udp", port: 51820 }],
  gatewayPorts: { from: 51820, to: 51830 },
  usedSubnetIndexes: [],
  ...overrides,
});

const named = (...names: string[]): ClusterRequest[] => names.map((name) => ({ name }));

/** Runs planLab expecting a LabPlanError and returns it. */
function planError(...args: Parameters<typeof planLab>): LabPlanError {
  try {
    planLab(...args);
  } catch (error) {
    expect(error).toBeInstanceOf(LabPlanError);
    return error as LabPlanError;
  }
  throw new Error("expected planLab to throw a LabPlanError");
}

/** Whether some problem matches `pattern`. */
const hasProblem = (error: LabPlanError, pattern: RegExp): boolean => error.problems.some((p) => pattern.test(p));

const labSubnetOf = (plan: LabPlan): Cidr => Cidr.parse(`172.29.${plan.subnetIndex}.0/24`);

describe("planLab: addresses and CIDRs", () => {
  test("GIVEN clusters without CIDRs WHEN planned THEN cluster i gets pod CIDR 10.(100+i).0.0/16 and service CIDR 10.(200+i).0.0/16", () => {
    const plan = planLab("t1", DIR, named("a", "b", "c"), settings());
    plan.clusters.forEach((cluster, i) => {
      expect(cluster.index).toBe(i);
      expect(cluster.podCidr).toBe(`10.${100 + i}.0.0/16`);
      expect(cluster.serviceCidr).toBe(`10.${200 + i}.0.0/16`);
    });
  });

  test("GIVEN the most clusters allowed without CIDRs WHEN planned THEN no two default CIDRs overlap", () => {
    const plan = planLab(
      "t1",
      DIR,
      Array.from({ length: 40 }, (_, i) => ({ name: `c${i}` })),
      settings(),
    );
    const cidrs = plan.clusters.flatMap((c) => [Cidr.parse(c.podCidr), Cidr.parse(c.serviceCidr)]);
    for (const [i, a] of cidrs.entries())
      for (const b of cidrs.slice(i + 1))
        expect([a.toString(), b.toString(), a.overlaps(b)]).toEqual([a.toString(), b.toString(), false]);
  });

  test("GIVEN explicit CIDRs WHEN planned THEN they are kept", () => {
    const plan = planLab("t1", DIR, [{ name: "a", podCidr: "10.50.0.0/16", serviceCidr: "10.96.0.0/12" }], settings());
    expect(plan.clusters[0]).toMatchObject({ podCidr: "10.50.0.0/16", serviceCidr: "10.96.0.0/12" });
  });

  test("GIVEN no subnet in use WHEN planned THEN the lab takes 172.29.1.0/24", () => {
    expect(planLab("t1", DIR, named("a"), settings()).subnetIndex).toBe(1);
  });

  test("GIVEN some subnets in use WHEN planned THEN the lab takes the lowest index not in use", () => {
    expect(planLab("t1", DIR, named("a"), settings({ usedSubnetIndexes: [1, 2, 4] })).subnetIndex).toBe(3);
    expect(planLab("t1", DIR, named("a"), settings({ usedSubnetIndexes: [2, 3] })).subnetIndex).toBe(1);
    expect(
      planLab("t1", DIR, named("a"), settings({ usedSubnetIndexes: [...Array(249).keys()].map((i) => i + 1) }))
        .subnetIndex,
    ).toBe(250);
  });

  test("GIVEN a lab WHEN planned THEN the host is .1 and cluster i is .(10+i) of the lab subnet", () => {
    const plan = planLab("t1", DIR, named("a", "b", "c"), settings({ usedSubnetIndexes: [1, 2] }));
    expect(plan.hostAddress).toBe(`172.29.${plan.subnetIndex}.1`);
    plan.clusters.forEach((cluster, i) => {
      expect(cluster.address).toBe(`172.29.${plan.subnetIndex}.${10 + i}`);
      expect(cluster.publicAddress).toBe(cluster.address);
    });
  });

  test("GIVEN many clusters WHEN planned THEN every address is distinct, in the lab subnet and not the host's", () => {
    const plan = planLab(
      "t1",
      DIR,
      Array.from({ length: 40 }, (_, i) => ({ name: `c${i}` })),
      settings({ usedSubnetIndexes: [1] }),
    );
    const subnet = labSubnetOf(plan);
    const addresses = plan.clusters.map((c) => c.publicAddress);
    expect(new Set(addresses).size).toBe(addresses.length);
    expect(addresses).not.toContain(plan.hostAddress);
    for (const address of [plan.hostAddress, ...addresses]) expect(subnet.contains(address)).toBe(true);
  });

  test("GIVEN a cluster asking for its own node count and maxPods WHEN planned THEN it gets them, the others the lab's", () => {
    const plan = planLab("t1", DIR, [{ name: "x", nodes: 3, maxPods: 250 }, { name: "y" }], settings({ nodes: 1 }));
    expect(plan.clusters.map((c) => [c.nodes.length, c.maxPods])).toEqual([
      [3, 250],
      [1, undefined],
    ]);
    const error = planError(
      "t1",
      DIR,
      [
        { name: "x", maxPods: 251 },
        { name: "y", maxPods: 0 },
      ],
      settings(),
    );
    expect(hasProblem(error, /cluster x: maxPods 251; expected 1 to 250/)).toBe(true);
    expect(hasProblem(error, /cluster y: maxPods 0; expected 1 to 250/)).toBe(true);
  });

  test("GIVEN two clusters asked for the same pod CIDR WHEN planned THEN both get it", () => {
    const plan = planLab(
      "t1",
      DIR,
      [
        { name: "x", podCidr: "10.50.0.0/16" },
        { name: "y", podCidr: "10.50.0.0/16" },
      ],
      settings(),
    );
    expect(plan.clusters.map((c) => c.podCidr)).toEqual(["10.50.0.0/16", "10.50.0.0/16"]);
  });

  test("GIVEN the settings WHEN planned THEN profile, gateway ports and NAT forwards are carried into the plan", () => {
    const s = settings({ profile: "gateway-only", gatewayPorts: { from: 40000, to: 40010 } });
    const plan = planLab("t1", DIR, named("a"), s);
    expect(plan.profile).toBe("gateway-only");
    expect(plan.gatewayPorts).toEqual(s.gatewayPorts);
    expect(plan.natForwards).toEqual(s.natForwards);
  });
});

describe("planLab: names", () => {
  test("GIVEN lab t1 WHEN planned THEN its bridge is lq-t1", () => {
    const plan = planLab("t1", DIR, named("a"), settings());
    expect(plan.name).toBe("t1");
    expect(plan.bridge).toBe("lq-t1");
  });

  test("GIVEN a cluster WHEN planned THEN its netns is liqo-<lab>-<cluster>, its host link lq-<lab>-<index> and its dir under the lab's", () => {
    const plan = planLab("t1", DIR, named("a", "bee"), settings());
    plan.clusters.forEach((cluster, i) => {
      expect(cluster.netns).toBe(`liqo-t1-${cluster.name}`);
      expect(cluster.hostLink).toBe(`lq-t1-${i}`);
      expect(cluster.dir).toBe(join(DIR, cluster.name));
    });
    expect(plan.clusters.map((c) => c.name)).toEqual(["a", "bee"]);
  });

  test("GIVEN the longest lab name and the most clusters WHEN planned THEN every interface name fits Linux's 15 characters", () => {
    const plan = planLab(
      "abcd1234",
      DIR,
      Array.from({ length: 40 }, (_, i) => ({ name: `c${i}` })),
      settings(),
    );
    for (const name of [plan.bridge, ...plan.clusters.map((c) => c.hostLink)])
      expect(name.length).toBeLessThanOrEqual(15);
  });

  test("GIVEN many clusters WHEN planned THEN netns, host links and dirs are all distinct", () => {
    const plan = planLab(
      "t1",
      DIR,
      Array.from({ length: 12 }, (_, i) => ({ name: `c${i}` })),
      settings({ profile: "nat", behindNat: ["c1", "c11"] }),
    );
    for (const key of ["netns", "hostLink", "dir"] as const) {
      const values = plan.clusters.map((c) => c[key]);
      expect(new Set(values).size).toBe(values.length);
    }
    const routers = plan.clusters.flatMap((c) => (c.routerNetns ? [c.routerNetns] : []));
    expect(routers.filter((r) => plan.clusters.some((c) => c.netns === r))).toEqual([]);
  });

  test.each(["a", "12345678", "lab1"])("GIVEN the valid lab name %j WHEN planned THEN it is accepted", (name) => {
    expect(planLab(name, DIR, named("a"), settings()).name).toBe(name);
  });

  test.each(["", "123456789", "Lab", "lab-1", "lab_1", "lab 1"])(
    "GIVEN the invalid lab name %j WHEN planned THEN it is refused by name",
    (name) => {
      const error = planError(name, DIR, named("a"), settings());
      expect(error.problems).toEqual([expect.stringContaining(`lab name "${name}"`)]);
    },
  );

  test.each(["a", "abcdefghijkl", "a-1", "z9"])(
    "GIVEN the valid cluster name %j WHEN planned THEN it is accepted",
    (name) => {
      expect(planLab("t1", DIR, named(name), settings()).clusters[0]!.name).toBe(name);
    },
  );

  test.each(["", "1a", "-a", "A", "a_b", "a.b", "abcdefghijklm"])(
    "GIVEN the invalid cluster name %j WHEN planned THEN it is refused by name",
    (name) => {
      const error = planError("t1", DIR, named(name), settings());
      expect(error.problems).toEqual([expect.stringContaining(`cluster name "${name}"`)]);
    },
  );
});

describe("planLab: NAT", () => {
  test("GIVEN the nat profile and no choice WHEN planned THEN only the last cluster is behind NAT", () => {
    const plan = planLab("t1", DIR, named("a", "b", "c"), settings({ profile: "nat" }));
    expect(plan.clusters.map((c) => c.routerNetns !== undefined)).toEqual([false, false, true]);
  });

  test("GIVEN a cluster behind NAT WHEN planned THEN it has a router netns and sits at .2 of the private network behind the router at .1", () => {
    const plan = planLab("t1", DIR, named("a", "b"), settings({ profile: "nat" }));
    const natted = plan.clusters[1]!;
    expect(natted.routerNetns).toBe("liqo-t1-b-nat");
    expect(natted.privateCidr).toBe(NAT_CIDR);
    expect(natted.address).toBe("192.168.100.2");
    expect(natted.gatewayAddress).toBe("192.168.100.1");
    expect(Cidr.parse(natted.privateCidr!).contains(natted.address)).toBe(true);
    expect(Cidr.parse(natted.privateCidr!).contains(natted.gatewayAddress!)).toBe(true);
  });

  test("GIVEN a cluster behind NAT WHEN planned THEN its public address is on the lab subnet at its own slot and not its private address", () => {
    const plan = planLab("t1", DIR, named("a", "b"), settings({ profile: "nat", usedSubnetIndexes: [1] }));
    const natted = plan.clusters[1]!;
    expect(labSubnetOf(plan).contains(natted.publicAddress)).toBe(true);
    expect(natted.publicAddress).toBe(`172.29.${plan.subnetIndex}.11`);
    expect(natted.publicAddress).not.toBe(natted.address);
  });

  test("GIVEN the nat profile WHEN planned THEN the clusters not behind NAT have no router, gateway or private network", () => {
    const plan = planLab("t1", DIR, named("a", "b"), settings({ profile: "nat" }));
    const open = plan.clusters[0]!;
    expect(open).not.toHaveProperty("routerNetns");
    expect(open).not.toHaveProperty("gatewayAddress");
    expect(open).not.toHaveProperty("privateCidr");
    expect(open.address).toBe(open.publicAddress);
  });

  test("GIVEN the nat profile and chosen clusters WHEN planned THEN exactly those are behind NAT", () => {
    const plan = planLab("t1", DIR, named("a", "b", "c"), settings({ profile: "nat", behindNat: ["a", "c"] }));
    expect(plan.clusters.filter((c) => c.routerNetns).map((c) => c.name)).toEqual(["a", "c"]);
  });

  test("GIVEN the nat profile and an empty choice WHEN planned THEN the last cluster is behind NAT, as by default", () => {
    const plan = planLab("t1", DIR, named("a", "b"), settings({ profile: "nat", behindNat: [] }));
    expect(plan.clusters.filter((c) => c.routerNetns).map((c) => c.name)).toEqual(["b"]);
  });

  test.each(["open", "gateway-only"] as const)(
    "GIVEN the %s profile WHEN planned THEN no cluster is behind NAT",
    (profile) => {
      const plan = planLab("t1", DIR, named("a", "b"), settings({ profile }));
      expect(plan.clusters.every((c) => c.routerNetns === undefined && c.address === c.publicAddress)).toBe(true);
    },
  );
});

describe("planLab: load balancer", () => {
  test("GIVEN no load balancer asked WHEN planned THEN the lab has none and no cluster a range", () => {
    const plan = planLab("t1", DIR, named("a", "b"), settings());
    expect(plan.loadBalancer).toBe("none");
    expect(plan.clusters.map((c) => c.loadBalancerAddresses)).toEqual([undefined, undefined]);
  });

  test("GIVEN metallb WHEN planned THEN cluster i gets .(64+4i) to .(67+4i) of the lab subnet", () => {
    const plan = planLab("t1", DIR, named("a", "b"), settings({ loadBalancer: "metallb", usedSubnetIndexes: [1] }));
    expect(plan.loadBalancer).toBe("metallb");
    expect(plan.clusters.map((c) => c.loadBalancerAddresses)).toEqual([
      "172.29.2.64-172.29.2.67",
      "172.29.2.68-172.29.2.71",
    ]);
  });

  test("GIVEN metallb and the most clusters WHEN planned THEN the ranges are disjoint, in the lab subnet, and hold no cluster's or the host's address", () => {
    const plan = planLab(
      "t1",
      DIR,
      Array.from({ length: 40 }, (_, i) => ({ name: `c${i}` })),
      settings({ loadBalancer: "metallb" }),
    );
    const subnet = labSubnetOf(plan);
    const taken = new Set([plan.hostAddress, ...plan.clusters.map((c) => c.publicAddress)]);
    const seen = new Set<string>();
    for (const cluster of plan.clusters) {
      const [first, last] = cluster.loadBalancerAddresses!.split("-") as [string, string];
      const from = Number(first.split(".")[3]);
      const to = Number(last.split(".")[3]);
      expect(to - from + 1).toBe(LOAD_BALANCER_RANGE_SIZE);
      for (let octet = from; octet <= to; octet++) {
        const address = subnet.nth(octet);
        expect(subnet.contains(address)).toBe(true);
        expect(taken.has(address) || seen.has(address)).toBe(false);
        seen.add(address);
      }
      expect(to).toBeLessThan(255);
    }
  });

  test("GIVEN metallb and a cluster behind NAT WHEN planned THEN it gets no range (no interface on the lab subnet), the others keep theirs", () => {
    const plan = planLab("t1", DIR, named("a", "b"), settings({ loadBalancer: "metallb", profile: "nat" }));
    expect(plan.clusters.map((c) => c.loadBalancerAddresses)).toEqual(["172.29.1.64-172.29.1.67", undefined]);
  });
});

describe("planLab: validation", () => {
  test("GIVEN every kind of mistake at once WHEN planned THEN one LabPlanError lists each of them", () => {
    const error = planError(
      "Bad_Lab",
      DIR,
      [
        { name: "9bad" },
        { name: "dup" },
        { name: "dup" },
        { name: "p", podCidr: "10.1.0.0/16", serviceCidr: "10.1.128.0/17" },
        { name: "l", podCidr: "192.168.0.0/16" },
        { name: "c", serviceCidr: "not-a-cidr" },
      ],
      settings({
        profile: "nat",
        behindNat: ["ghost"],
        gatewayPorts: { from: 60000, to: 50000 },
        usedSubnetIndexes: [...Array(250).keys()].map((i) => i + 1),
      }),
    );
    const expected = [
      /lab name "Bad_Lab"/,
      /cluster name "9bad"/,
      /cluster name "dup" is given more than once/,
      /cluster p: pod CIDR 10\.1\.0\.0\/16 overlaps service CIDR 10\.1\.128\.0\/17/,
      /cluster l: pod CIDR 192\.168\.0\.0\/16 overlaps the NAT network/,
      /cluster l: pod CIDR 192\.168\.0\.0\/16 overlaps the node network/,
      /cluster c: service CIDR: .*"not-a-cidr"/,
      /--behind-nat "ghost" is not one of the clusters/,
      /gateway ports 60000-50000/,
      /every lab subnet .* is in use/,
    ];
    for (const pattern of expected) expect([pattern, hasProblem(error, pattern)]).toEqual([pattern, true]);
    expect(error.problems).toHaveLength(expected.length);
  });

  test("GIVEN several problems WHEN thrown THEN the message lists every one of them", () => {
    const error = planError("BAD", DIR, named("1x", "2y"), settings({ gatewayPorts: { from: 0, to: 0 } }));
    expect(error.problems.length).toBeGreaterThanOrEqual(4);
    for (const problem of error.problems) expect(error.message).toContain(problem);
    expect(error.name).toBe("LabPlanError");
  });

  test("GIVEN no clusters WHEN planned THEN it is refused", () => {
    expect(hasProblem(planError("t1", DIR, [], settings()), /no clusters requested/)).toBe(true);
  });

  test("GIVEN more than 40 clusters WHEN planned THEN it is refused, and 40 is accepted", () => {
    const requests = Array.from({ length: 41 }, (_, i) => ({ name: `c${i}` }));
    expect(planError("t1", DIR, requests, settings()).problems).toEqual([
      expect.stringMatching(/41 clusters requested; at most 40/),
    ]);
    expect(planLab("t1", DIR, requests.slice(0, 40), settings()).clusters).toHaveLength(40);
  });

  test("GIVEN a name given three times WHEN planned THEN the duplicate is reported", () => {
    expect(
      hasProblem(planError("t1", DIR, named("a", "a", "a"), settings()), /cluster name "a" is given more than once/),
    ).toBe(true);
  });

  test("GIVEN a pod CIDR overlapping the service CIDR WHEN planned THEN it is refused naming both", () => {
    const error = planError(
      "t1",
      DIR,
      [{ name: "a", podCidr: "10.96.0.0/12", serviceCidr: "10.100.0.0/16" }],
      settings(),
    );
    expect(error.problems).toEqual([
      expect.stringMatching(/cluster a: pod CIDR 10\.96\.0\.0\/12 overlaps service CIDR 10\.100\.0\.0\/16/),
    ]);
  });

  test("GIVEN a pod CIDR inside the subnet the lab will take WHEN planned THEN it is refused as overlapping the lab network", () => {
    const error = planError("t1", DIR, [{ name: "a", podCidr: "172.29.2.0/23" }], settings({ usedSubnetIndexes: [1] }));
    expect(error.problems).toEqual([
      expect.stringMatching(/cluster a: pod CIDR 172\.29\.2\.0\/23 overlaps the lab network 172\.29\.2\.0\/24/),
    ]);
  });

  test("GIVEN a CIDR inside another lab's subnet WHEN planned THEN the lab network check does not refuse it", () => {
    expect(planLab("t1", DIR, [{ name: "a", podCidr: "172.29.2.0/23" }], settings()).subnetIndex).toBe(1);
  });

  test("GIVEN a service CIDR overlapping the NAT private network WHEN planned THEN it is refused naming that network", () => {
    const error = planError("t1", DIR, [{ name: "a", serviceCidr: "192.168.100.0/25" }], settings());
    expect(error.problems).toEqual([
      expect.stringMatching(
        /cluster a: service CIDR 192\.168\.100\.0\/25 overlaps the NAT network 192\.168\.100\.0\/24/,
      ),
    ]);
  });

  test.each(["10.0.0.0", "10.1.2.3/16", "10.0.0.0/40", "ten/8"])(
    "GIVEN the bad pod CIDR %j WHEN planned THEN the problem names the cluster and quotes the text",
    (podCidr) => {
      const error = planError("t1", DIR, [{ name: "a", podCidr }], settings());
      expect(error.problems).toEqual([expect.stringContaining(`cluster a: pod CIDR: "${podCidr}"`)]);
    },
  );

  test("GIVEN --behind-nat naming an unknown cluster WHEN planned THEN it is refused listing the known clusters", () => {
    const error = planError("t1", DIR, named("a", "b"), settings({ profile: "nat", behindNat: ["a", "zz"] }));
    expect(error.problems).toEqual([expect.stringMatching(/--behind-nat "zz" is not one of the clusters \(a, b\)/)]);
  });

  test.each(["open", "gateway-only"] as const)(
    "GIVEN behindNat with the %s profile WHEN planned THEN it is refused for needing the nat profile",
    (profile) => {
      const error = planError("t1", DIR, named("a", "b"), settings({ profile, behindNat: ["b"] }));
      expect(error.problems).toEqual([
        expect.stringMatching(new RegExp(`--behind-nat needs --profile nat \\(profile is ${profile}\\)`)),
      ]);
    },
  );

  test.each([
    [0, 10],
    [10, 5],
    [1, 65536],
    [1.5, 2],
    [Number.NaN, 10],
    [-1, 10],
  ])("GIVEN the gateway port range %p-%p WHEN planned THEN it is refused", (from, to) => {
    const error = planError("t1", DIR, named("a"), settings({ gatewayPorts: { from, to } }));
    expect(error.problems).toEqual([expect.stringContaining(`gateway ports ${from}-${to}`)]);
  });

  test.each([
    [1, 1],
    [1, 65535],
    [65535, 65535],
  ])("GIVEN the gateway port range %p-%p WHEN planned THEN it is accepted", (from, to) => {
    expect(planLab("t1", DIR, named("a"), settings({ gatewayPorts: { from, to } })).gatewayPorts).toEqual({ from, to });
  });

  test("GIVEN every subnet 1-250 in use WHEN planned THEN it is refused", () => {
    const used = [...Array(250).keys()].map((i) => i + 1);
    expect(planError("t1", DIR, named("a"), settings({ usedSubnetIndexes: used })).problems).toEqual([
      expect.stringMatching(/every lab subnet 172\.29\.1-250\.0\/24 is in use/),
    ]);
  });
});
