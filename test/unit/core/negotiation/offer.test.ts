import {
  computeFreeCapacity,
  computeOffer,
  emptyOfferReason,
  offerChanged,
} from "../../../../core/negotiation/offer.js";

let nodeCount = 0;
const node = (cpu: string, memory: string, pods: string, virtual = false, schedulable = true) => ({
  name: `n${++nodeCount}`,
  allocatable: { cpu, memory, pods },
  virtual,
  schedulable,
});
const pod = (nodeName: string, requests: { cpu?: string; memory?: string } = {}) => ({ nodeName, requests });

describe("computeFreeCapacity", () => {
  test("GIVEN real nodes and bound pods WHEN computed THEN it is allocatable less requests, one pod slot per pod", () => {
    const [first, second] = [node("4", "8Gi", "110"), node("2", "4Gi", "110")];
    const free = computeFreeCapacity(
      [first, second],
      [pod(first.name, { cpu: "500m", memory: "1Gi" }), pod(second.name)],
    );
    expect(free).toEqual({ cpuMillis: 5500, memoryBytes: 11 * 2 ** 30, pods: 218 });
  });

  test("GIVEN a virtual node WHEN computed THEN its capacity is never counted (no re-offering)", () => {
    expect(computeFreeCapacity([node("4", "8Gi", "110"), node("100", "100Gi", "1000", true)], [])).toEqual({
      cpuMillis: 4000,
      memoryBytes: 8 * 2 ** 30,
      pods: 110,
    });
  });

  test("GIVEN requests above capacity WHEN computed THEN free capacity stops at zero", () => {
    const small = node("1", "1Gi", "1");
    expect(computeFreeCapacity([small], [pod(small.name, { cpu: "2", memory: "2Gi" }), pod(small.name)])).toEqual({
      cpuMillis: 0,
      memoryBytes: 0,
      pods: 0,
    });
  });

  test("GIVEN a cordoned or NotReady node WHEN computed THEN neither it nor its pods count", () => {
    const open = node("4", "8Gi", "110");
    const cordoned = node("8", "16Gi", "110", false, false);
    expect(
      computeFreeCapacity([open, cordoned], [pod(open.name, { cpu: "1" }), pod(cordoned.name, { cpu: "2" })]),
    ).toEqual({
      cpuMillis: 3000,
      memoryBytes: 8 * 2 ** 30,
      pods: 109,
    });
    expect(computeFreeCapacity([cordoned], [])).toEqual({ cpuMillis: 0, memoryBytes: 0, pods: 0 });
  });
});

describe("computeOffer", () => {
  const free = { cpuMillis: 4000, memoryBytes: 8 * 2 ** 30, pods: 110 };

  test("GIVEN fixed amounts WHEN offered THEN they are offered as asked, normalised", () => {
    expect(computeOffer({ cpu: "2000m", memory: "4096Mi", pods: 20 }, free)).toEqual({
      cpu: "2",
      memory: "4Gi",
      pods: 20,
    });
  });

  test("GIVEN a share WHEN offered THEN it is that share of free capacity, rounded down", () => {
    expect(computeOffer({ sharePercent: 50 }, free)).toEqual({ cpu: "2", memory: "4Gi", pods: 55 });
    expect(computeOffer({ sharePercent: 33 }, free)).toEqual({ cpu: "1320m", memory: "2703Mi", pods: 36 });
  });
});

describe("offerChanged", () => {
  const base = { cpu: "2", memory: "4Gi", pods: 100 };
  test("GIVEN moves within the threshold WHEN compared THEN unchanged", () => {
    expect(offerChanged(base, { cpu: "2100m", memory: "4Gi", pods: 105 }, 10)).toBe(false);
  });
  test("GIVEN any dimension beyond the threshold WHEN compared THEN changed", () => {
    expect(offerChanged(base, { cpu: "2", memory: "4Gi", pods: 89 }, 10)).toBe(true);
    expect(offerChanged(base, { cpu: "2300m", memory: "4Gi", pods: 100 }, 10)).toBe(true);
  });
  test("GIVEN a dimension leaving zero WHEN compared THEN changed", () => {
    expect(offerChanged({ cpu: "0", memory: "0", pods: 0 }, { cpu: "1m", memory: "0", pods: 0 }, 10)).toBe(true);
  });
});

describe("emptyOfferReason", () => {
  test("GIVEN a share of a provider with no free capacity WHEN the offer is judged THEN it is empty, naming each zero dimension", () => {
    const offer = computeOffer({ sharePercent: 50 }, computeFreeCapacity([], []));
    expect(emptyOfferReason(offer)).toMatch(
      /^the provider offers no cpu, no memory, no pods \(cpu 0, memory 0, pods 0\): the virtual node can run no pod/,
    );
    expect(emptyOfferReason({ cpu: "2", memory: "4Gi", pods: 0 })).toMatch(/^the provider offers no pods \(/);
  });

  test("GIVEN an offer with some of everything WHEN judged THEN it is not empty", () => {
    expect(emptyOfferReason({ cpu: "100m", memory: "1Mi", pods: 1 })).toBeUndefined();
  });
});
