/** The route agent's masquerade exemptions (agent/route/masquerade-plan.ts). */
import {
  EXEMPTION_CHAIN,
  exemptionRules,
  EXEMPTION_JUMP_COMMENT,
  parseExemptionState,
  planExemptions,
} from "../../../../agent/route/masquerade-plan.js";

describe("masquerade exemptions toward the remote clusters", () => {
  test("GIVEN remote ranges and a tunnel address WHEN the rules are made THEN each range is accepted both ways, canonical, once", () => {
    expect(exemptionRules(["10.142.0.0/16", "10.9.0.1", "10.142.0.0/16", "not a range"])).toEqual([
      "-d 10.142.0.0/16 -j ACCEPT",
      "-s 10.142.0.0/16 -j ACCEPT",
      "-d 10.9.0.1/32 -j ACCEPT",
      "-s 10.9.0.1/32 -j ACCEPT",
    ]);
    expect(exemptionRules([])).toEqual([]);
  });

  test("GIVEN a listing of the nat table WHEN parsed THEN the chain, the jump to it and only the chain's own rules are read", () => {
    const listing = [
      "-P POSTROUTING ACCEPT",
      `-N ${EXEMPTION_CHAIN}`,
      `-A POSTROUTING -m comment --comment "${EXEMPTION_JUMP_COMMENT}" -j ${EXEMPTION_CHAIN}`,
      `-A ${EXEMPTION_CHAIN} -d 10.142.0.0/16 -j ACCEPT`,
      `-A ${EXEMPTION_CHAIN}-OTHER -d 10.1.0.0/16 -j ACCEPT`,
      "-A FLANNEL-POSTRTG -s 10.100.0.0/16 ! -d 224.0.0.0/4 -j MASQUERADE --random-fully",
    ].join("\n");
    expect(parseExemptionState(listing)).toEqual({
      exists: true,
      jumped: true,
      rules: ["-d 10.142.0.0/16 -j ACCEPT"],
    });
    expect(parseExemptionState("-P POSTROUTING ACCEPT")).toEqual({ exists: false, jumped: false, rules: [] });
  });

  test("GIVEN a peer gone and another come WHEN planned THEN the new ranges are added and the old removed, nothing else touched", () => {
    const present = ["-d 10.142.0.0/16 -j ACCEPT", "-s 10.142.0.0/16 -j ACCEPT", "-d 10.143.0.0/16 -j ACCEPT"];
    const wanted = exemptionRules(["10.142.0.0/16", "10.150.0.0/16"]);
    expect(planExemptions(wanted, present)).toEqual({
      add: ["-d 10.150.0.0/16 -j ACCEPT", "-s 10.150.0.0/16 -j ACCEPT"],
      remove: ["-d 10.143.0.0/16 -j ACCEPT"],
    });
    expect(planExemptions(wanted, [...wanted])).toEqual({ add: [], remove: [] });
  });
});
