/** The compatibility matrix's combinations and table (bench/matrix/table.ts). */
import { combinations, formatMatrix } from "../../../bench/matrix/table.js";

describe("the compatibility matrix", () => {
  test(
    "GIVEN three releases WHEN the default combinations are made THEN every consumer × provider pair runs once, " +
      "the modes taking turns and the CNIs every second pair",
    () => {
      const made = combinations(["1.35", "1.36", "1.37"], ["iptables", "nftables"], ["bridge", "flannel"], false);
      expect(made.map((c) => `${c.consumer}>${c.provider}:${c.kubeProxy}:${c.cni}`)).toEqual([
        "1.35>1.35:iptables:bridge",
        "1.35>1.36:nftables:bridge",
        "1.35>1.37:iptables:flannel",
        "1.36>1.35:nftables:flannel",
        "1.36>1.36:iptables:bridge",
        "1.36>1.37:nftables:bridge",
        "1.37>1.35:iptables:flannel",
        "1.37>1.36:nftables:flannel",
        "1.37>1.37:iptables:bridge",
      ]);
      expect(combinations(["1.35", "1.36"], ["iptables", "nftables"], ["bridge", "flannel"], true)).toHaveLength(16);
    },
  );

  test("GIVEN a passed and a failed run WHEN tabled THEN each row names its combination, result, time, placement and the failed step", () => {
    const table = formatMatrix([
      {
        combination: { consumer: "1.35", provider: "1.37", kubeProxy: "nftables", cni: "bridge" },
        passed: true,
        seconds: 312.4,
        steps: [],
        podPlacement: "MutatingWebhook",
      },
      {
        combination: { consumer: "1.37", provider: "1.35", kubeProxy: "iptables", cni: "bridge" },
        passed: false,
        seconds: 95,
        steps: [],
        failed: { step: "pulumi up", error: "a: timed out" },
      },
    ]).split("\n");
    expect(table[0]).toMatch(
      /^\| combination \(consumer → provider, kube-proxy, CNI\) +\| result +\| time +\| b places pods by +\| failed step +\|$/,
    );
    expect(table[2]).toMatch(
      /^\| b 1\.35 → a 1\.37, nftables, bridge +\| passed +\| 312 s +\| MutatingWebhook +\| +\|$/,
    );
    expect(table[3]).toMatch(
      /^\| b 1\.37 → a 1\.35, iptables, bridge +\| FAILED +\| 95 s +\| - +\| pulumi up: a: timed out \|$/,
    );
  });
});
