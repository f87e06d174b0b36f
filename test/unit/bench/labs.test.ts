/** Which requests of a benchmark section the suite's shared lab serves (clusters a and b as they are). */
import { sharedLabServes } from "../../../bench/labs.js";

describe("sharedLabServes", () => {
  test("GIVEN plain clusters a and b, or a alone, with no options WHEN asked THEN the shared lab serves them", () => {
    expect(sharedLabServes([{ name: "a" }, { name: "b" }], {})).toBe(true);
    expect(sharedLabServes([{ name: "a" }], {})).toBe(true);
  });

  test("GIVEN a third cluster, a CIDR of its own or lab options WHEN asked THEN a private lab is made instead", () => {
    expect(sharedLabServes([{ name: "a" }, { name: "b" }, { name: "c" }], {})).toBe(false);
    expect(sharedLabServes([{ name: "a", podCidr: "10.150.0.0/16" }, { name: "b" }], {})).toBe(false);
    expect(sharedLabServes([{ name: "a" }, { name: "b" }], { nodes: 2 })).toBe(false);
  });
});
