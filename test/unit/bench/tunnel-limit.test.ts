/** What the tunnel benchmark says bounds the gateway's throughput, from the CPU figures of its runs. */
import { tunnelLimit } from "../../../bench/tunnel.js";

describe("tunnelLimit", () => {
  test("GIVEN every core busy WHEN judged THEN the machine is the bound, even with a wireguard-go at a whole core", () => {
    expect(tunnelLimit({ machinePercent: 97, busiestWireguardPercent: 99 }, 2)).toMatch(
      /^the machine: its 2 cores were 97% busy/,
    );
  });

  test("GIVEN cores to spare and one wireguard-go at a whole core WHEN judged THEN that wireguard-go is the bound", () => {
    expect(tunnelLimit({ machinePercent: 55, busiestWireguardPercent: 98 }, 8)).toMatch(
      /^one wireguard-go at 98% of a core/,
    );
  });

  test("GIVEN neither WHEN judged THEN it says so, with both figures", () => {
    expect(tunnelLimit({ machinePercent: 40, busiestWireguardPercent: 30 }, 4)).toMatch(
      /^neither CPU bound shows \(cores 40% busy, busiest wireguard-go 30% of a core\)/,
    );
  });
});
