import {
  defaultVirtualNodeName,
  isReady,
  peeringUpdateOf,
  readyStatus,
  recordOf,
  statusAfterRead,
  type PeeringState,
} from "../../../../core/peering/peering-plan.js";

const offer = { cpu: "2", memory: "4Gi", pods: 20 };
const noPods = { cpu: "2", memory: "4Gi", pods: 0 };
const record = {
  consumerClusterId: "00000000000000bb",
  providerClusterId: "00000000000000aa",
  providerClusterName: "a",
  tenantNamespace: "liqo-tenant-00000000000000bb",
  requestName: "00000000000000bb",
  virtualNodeName: "liqo-a",
  offer,
  providerApiServerUrl: "https://10.0.0.1:6443",
};
const resources = { cpu: "2", memory: "4Gi", pods: 20 };
const standing: PeeringState = { ...record, resources, status: "Ready" };

describe("a peering's status", () => {
  test("GIVEN an offer WHEN the status is made THEN it is Ready, with why when the node can run no pod, and both count as standing", () => {
    expect(readyStatus(offer)).toBe("Ready");
    expect(readyStatus(noPods)).toMatch(/^Ready, with an empty offer: /);
    expect([readyStatus(offer), readyStatus(noPods)].map(isReady)).toEqual([true, true]);
    expect(["incomplete", "node liqo-a is gone", undefined].map(isReady)).toEqual([false, false, false]);
  });

  test("GIVEN what refresh found WHEN the status is made THEN problems come first, then the offer's state", () => {
    expect(statusAfterRead(["identity revoked", "node gone"], offer)).toBe("identity revoked; node gone");
    expect(statusAfterRead([], noPods)).toBe(readyStatus(noPods));
    expect(statusAfterRead([], undefined)).toBe("Ready");
  });

  test("GIVEN a provider's name WHEN no node name is given THEN the node is liqo-<name>", () => {
    expect(defaultVirtualNodeName("a")).toBe("liqo-a");
  });
});

describe("recordOf", () => {
  test("GIVEN outputs that hold every part of the record WHEN read THEN the record, and nothing else of the outputs", () => {
    expect(recordOf({ ...standing, force: true })).toEqual(record);
  });

  test("GIVEN outputs of a create that stopped half-way WHEN read THEN no record", () => {
    const { offer: _offer, ...withoutOffer } = record;
    expect(recordOf(withoutOffer)).toBeUndefined();
    expect(recordOf({ consumerClusterId: record.consumerClusterId, status: "incomplete" })).toBeUndefined();
  });
});

describe("peeringUpdateOf", () => {
  test("GIVEN force turned on WHEN updated THEN it is only recorded, whatever else changed", () => {
    const news = { ...standing, force: true, resources: { ...resources, cpu: "3" } };
    expect(peeringUpdateOf(standing, news)).toEqual({ kind: "record force" });
    expect(peeringUpdateOf({ consumerClusterId: "x", status: "incomplete" }, { ...news })).toEqual({
      kind: "record force",
    });
  });

  test("GIVEN force already on WHEN updated with it on THEN the update goes on as any other", () => {
    const olds = { ...standing, force: true };
    expect(peeringUpdateOf(olds, { ...olds }).kind).toBe("renegotiate");
  });

  test("GIVEN no record, a broken one, or an in-band peering WHEN updated THEN the peering's steps run again", () => {
    expect(peeringUpdateOf({ consumerClusterId: "x", status: "incomplete" }, standing)).toEqual({ kind: "peer again" });
    expect(peeringUpdateOf({ ...standing, status: "identity revoked" }, standing)).toEqual({ kind: "peer again" });
    const inBand = { ...standing, approach: "in-band" };
    expect(peeringUpdateOf(inBand, inBand)).toEqual({ kind: "peer again" });
  });

  test("GIVEN an out-of-band peering that stands WHEN updated THEN it is renegotiated only if the resources changed", () => {
    expect(peeringUpdateOf(standing, standing)).toEqual({ kind: "renegotiate", record, resize: false });
    expect(peeringUpdateOf(standing, { ...standing, resources: { ...resources, cpu: "3" } })).toEqual({
      kind: "renegotiate",
      record,
      resize: true,
    });
    const empty = { ...standing, offer: noPods, status: readyStatus(noPods) };
    expect(peeringUpdateOf(empty, empty).kind).toBe("renegotiate");
  });
});
