import { gatewayNodeOf, parseNodeRoutes, planNodeRoutes, type GatewayPodFacts } from "../../../../agent/route/plan.js";

const gateway = { nodeName: "a-n1", internalIp: "192.168.101.1" };
const remotes = ["10.200.0.0/16", "10.90.0.0/16"];

const pod = (facts: Partial<GatewayPodFacts>): GatewayPodFacts => ({
  nodeName: "a-n1",
  deleting: false,
  phase: "Running",
  createdAt: "2026-11-23T10:00:00.000Z",
  ...facts,
});

describe("route agent plan", () => {
  test("GIVEN a node that is not the gateway's WHEN it holds nothing THEN every remote range goes via the gateway node's InternalIP", () => {
    expect(planNodeRoutes({ nodeName: "a-n2", gateway, remoteCidrs: remotes, present: [] })).toEqual({
      add: [
        { destination: "10.200.0.0/16", via: "192.168.101.1" },
        { destination: "10.90.0.0/16", via: "192.168.101.1" },
      ],
      remove: [],
    });
  });

  test("GIVEN the gateway's own node WHEN it holds routes of ours THEN it keeps none (the gateway's routes lead into the tunnel there)", () => {
    const present = [{ destination: "10.200.0.0/16", via: "192.168.101.2" }];
    expect(planNodeRoutes({ nodeName: "a-n1", gateway, remoteCidrs: remotes, present })).toEqual({
      add: [],
      remove: ["10.200.0.0/16"],
    });
  });

  test("GIVEN the routes in place WHEN nothing changed THEN the plan is empty", () => {
    const present = remotes.map((destination) => ({ destination, via: "192.168.101.1" }));
    expect(planNodeRoutes({ nodeName: "a-n2", gateway, remoteCidrs: remotes, present })).toEqual({
      add: [],
      remove: [],
    });
  });

  test("GIVEN the gateway moved WHEN routes point at its old node THEN they are replaced in place, not removed", () => {
    const present = remotes.map((destination) => ({ destination, via: "192.168.101.3" }));
    const plan = planNodeRoutes({ nodeName: "a-n2", gateway, remoteCidrs: remotes, present });
    expect(plan.add.map((r) => r.via)).toEqual(["192.168.101.1", "192.168.101.1"]);
    expect(plan.remove).toEqual([]);
  });

  test("GIVEN a tunnel gone, or no gateway at all WHEN routes of ours remain THEN they are removed", () => {
    const present = remotes.map((destination) => ({ destination, via: "192.168.101.1" }));
    expect(planNodeRoutes({ nodeName: "a-n2", gateway, remoteCidrs: ["10.90.0.0/16"], present }).remove).toEqual([
      "10.200.0.0/16",
    ]);
    expect(planNodeRoutes({ nodeName: "a-n2", gateway: undefined, remoteCidrs: remotes, present })).toEqual({
      add: [],
      remove: ["10.200.0.0/16", "10.90.0.0/16"],
    });
  });

  test("GIVEN a /32 listed as a bare address and a duplicate or broken range WHEN planned THEN each network counts once", () => {
    const plan = planNodeRoutes({
      nodeName: "a-n2",
      gateway,
      remoteCidrs: ["10.9.9.9/32", "10.90.0.0/16", "10.90.0.0/16", "not-a-cidr"],
      present: [{ destination: "10.9.9.9", via: "192.168.101.1" }],
    });
    expect(plan).toEqual({ add: [{ destination: "10.90.0.0/16", via: "192.168.101.1" }], remove: [] });
  });

  test("GIVEN an ip route listing WHEN parsed THEN routes with a next hop are read and others left alone", () => {
    const listing = [
      "10.200.0.0/16 via 192.168.101.1 dev nodes proto 173 ",
      "10.9.9.9 via 192.168.101.1 dev nodes proto 173 ",
      "10.8.0.0/16 dev lqw0 proto 173 scope link ",
      "",
    ].join("\n");
    expect(parseNodeRoutes(listing)).toEqual([
      { destination: "10.200.0.0/16", via: "192.168.101.1" },
      { destination: "10.9.9.9", via: "192.168.101.1" },
    ]);
  });

  test("GIVEN gateway pods WHEN one is picked THEN a scheduled, live, Running, newest one wins", () => {
    expect(gatewayNodeOf([])).toBeUndefined();
    expect(gatewayNodeOf([pod({ nodeName: undefined })])).toBeUndefined();
    expect(gatewayNodeOf([pod({ deleting: true })])).toBeUndefined();
    expect(
      gatewayNodeOf([
        pod({ nodeName: "a-n1", phase: "Pending" }),
        pod({ nodeName: "a-n2", createdAt: "2026-11-23T09:00:00Z" }),
      ]),
    ).toBe("a-n2");
    expect(
      gatewayNodeOf([
        pod({ nodeName: "a-n1", phase: "Pending", createdAt: "2026-11-23T09:00:00Z" }),
        pod({ nodeName: "a-n2", phase: "Pending", createdAt: "2026-11-23T11:00:00Z" }),
      ]),
    ).toBe("a-n2");
    expect(
      gatewayNodeOf([pod({ nodeName: "a-n1", deleting: true }), pod({ nodeName: "a-n3", phase: "Pending" })]),
    ).toBe("a-n3");
  });
});
