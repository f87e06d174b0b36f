import { UNKNOWN } from "../../../core/resources/inputs.js";
import {
  compact,
  containsSecret,
  field,
  isSecret,
  reveal,
  secret,
  secretKeysOf,
  SECRET_SIG,
  SIG_KEY,
  valueAt,
  withSecrets,
} from "../../../plugin/values.js";

const envelope = (value: unknown) => ({ [SIG_KEY]: SECRET_SIG, value });

describe("secret envelopes", () => {
  test("GIVEN a value WHEN made secret twice THEN it is one envelope, in the engine's wire form", () => {
    expect(secret(secret("k"))).toEqual(envelope("k"));
    expect(isSecret(envelope("k"))).toBe(true);
    expect(isSecret({ value: "k" })).toBe(false);
  });

  test("GIVEN secrets at several depths and inputs left out as null WHEN revealed THEN plain values, the null ones dropped", () => {
    const given = { a: envelope({ b: envelope("x"), c: null }), list: [envelope(1), 2], gone: null };
    expect(reveal(given)).toEqual({ a: { b: "x" }, list: [1, 2] });
  });

  test("GIVEN properties WHEN asked which hold a secret THEN the top-level names of those holding one at any depth", () => {
    const properties = { consumer: { kubeconfig: envelope("k"), clusterId: "c" }, resources: { cpu: "2" } };
    expect(secretKeysOf(properties)).toEqual(["consumer"]);
    expect(containsSecret([{ x: envelope(1) }])).toBe(true);
  });

  test("GIVEN outputs WHEN keys are made secret THEN only present values are wrapped", () => {
    expect(withSecrets({ token: "t", other: "o", absent: undefined }, ["token", "absent"])).toEqual({
      token: envelope("t"),
      other: "o",
      absent: undefined,
    });
    expect(compact({ a: 1, b: undefined, c: null })).toEqual({ a: 1 });
  });
});

describe("paths through secrets and unknowns", () => {
  test("GIVEN a whole object secret WHEN a field is taken THEN the field stays secret", () => {
    expect(field(envelope({ kubeconfig: "k", clusterId: "c" }), "clusterId")).toEqual(envelope("c"));
    expect(field(envelope({ kubeconfig: "k" }), "clusterId")).toBeUndefined();
  });

  test("GIVEN a value not known yet WHEN a path is taken through it THEN the result is not known either", () => {
    expect(valueAt({ consumer: UNKNOWN }, "consumer.clusterId")).toBe(UNKNOWN);
    expect(valueAt({ peerings: UNKNOWN }, "peerings.*.virtualNodeName")).toBe(UNKNOWN);
  });

  test("GIVEN a list of objects WHEN a field of each is taken THEN the list of those fields", () => {
    const peerings = [{ virtualNodeName: "liqo-a" }, { virtualNodeName: UNKNOWN }];
    expect(valueAt({ peerings }, "peerings.*.virtualNodeName")).toEqual(["liqo-a", UNKNOWN]);
    expect(valueAt({ p: { q: { r: 1 } } }, "p.q.r")).toBe(1);
  });
});
