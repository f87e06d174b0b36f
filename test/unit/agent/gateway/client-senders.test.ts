import { isIpv4Endpoint, nextSenderToDial, udpSendersTo } from "../../../../agent/gateway/client-senders.js";

test("GIVEN endpoints WHEN checked THEN only a.b.c.d:port with octets to 255 and ports 1-65535 pass", () => {
  expect(["10.0.0.1:1", "255.255.255.255:65535"].every(isIpv4Endpoint)).toBe(true);
  expect(["10.0.0.1:65536", "256.0.0.1:80", "10.0.0:80", "[::1]:80", " 10.0.0.1:80"].some(isIpv4Endpoint)).toBe(false);
});

describe("where a server gateway's client sends from now (conntrack of its node)", () => {
  const line = (timeLeft: number, original: string, reply: string, flags = "[UNREPLIED] "): string =>
    `ipv4     2 udp      17 ${timeLeft} ${original} ${flags}${reply} mark=0 zone=0 use=2`;
  const listing = [
    // The client's flow, DNATed here by the Service on another node and masqueraded there.
    line(
      29,
      "src=192.168.101.1 dst=192.168.101.2 sport=17093 dport=51820",
      "src=192.168.101.2 dst=192.168.101.1 sport=51820 dport=17093",
    ),
    // The client's flow arriving straight at this node's NodePort (DNAT only): answers go to the client itself.
    line(
      12,
      "src=172.29.1.11 dst=172.29.1.10 sport=46323 dport=30820",
      "src=192.168.101.2 dst=172.29.1.11 sport=51820 dport=46323",
      "[ASSURED] ",
    ),
    // A flow this node started from the port (a dial): not a sender.
    line(
      25,
      "src=192.168.101.2 dst=172.29.1.11 sport=51820 dport=51820",
      "src=172.29.1.11 dst=192.168.101.2 sport=51820 dport=51820",
    ),
    // Another port, and TCP: not the interface's.
    line(
      28,
      "src=172.29.1.11 dst=172.29.1.10 sport=40000 dport=51821",
      "src=172.29.1.10 dst=172.29.1.11 sport=51821 dport=40000",
    ),
    "ipv4     2 tcp      6 86395 ESTABLISHED src=10.64.1.2 dst=10.150.1.2 sport=53086 dport=51820 " +
      "src=10.150.1.2 dst=10.64.1.2 sport=51820 dport=53086 [ASSURED] mark=0 zone=0 use=2",
    "",
  ].join("\n");

  test("GIVEN this node's conntrack WHEN read for the listen port THEN the flows' senders come, as answers reach them, newest first", () => {
    expect(udpSendersTo(listing, 51820)).toEqual(["192.168.101.1:17093", "172.29.1.11:46323"]);
  });

  test("GIVEN a flow this node forwards to the gateway's former node, masqueraded to its own address THEN it is no sender", () => {
    // Node 192.168.101.1, where the new gateway pod runs; its former pod ran on 192.168.101.2.
    const here = [
      // Still forwarded to the former pod, answers to this node's own address: longer-lived, listed first.
      line(
        118,
        "src=172.29.1.11 dst=192.168.101.1 sport=46323 dport=30820",
        "src=192.168.101.2 dst=192.168.101.1 sport=51820 dport=17093",
        "[ASSURED] ",
      ),
      // The client's new flow, brought to this node's gateway.
      line(
        29,
        "src=172.29.1.11 dst=192.168.101.1 sport=46323 dport=30820",
        "src=192.168.101.1 dst=172.29.1.11 sport=51820 dport=46323",
      ),
    ].join("\n");
    expect(udpSendersTo(here, 51820)).toEqual(["192.168.101.1:17093", "172.29.1.11:46323"]);
    expect(udpSendersTo(here, 51820, ["192.168.101.1"])).toEqual(["172.29.1.11:46323"]);
  });

  test("GIVEN no flow to the port, or a garbled listing WHEN read THEN there is no sender", () => {
    expect(udpSendersTo(listing, 51999)).toEqual([]);
    expect(udpSendersTo("ipv4 2 udp 17 29 src=1.2.3.4 garbage sport=51820", 51820)).toEqual([]);
    expect(udpSendersTo("", 51820)).toEqual([]);
  });
});

describe("whom a server gateway dials while its tunnel is down", () => {
  const client = "172.29.1.11:46323";
  const strangers = ["172.29.9.1:40001", "172.29.9.1:40002"];

  test("GIVEN strangers whose packets stay newer than the client's WHEN dialed in turn THEN the client comes within as many turns as senders", () => {
    let dialed: readonly string[] = [];
    const turns: string[] = [];
    for (let turn = 0; turn < 3; turn += 1) {
      const next = nextSenderToDial([...strangers, client], dialed)!;
      turns.push(next.sender);
      dialed = next.dialed;
    }
    expect(turns).toEqual([...strangers, client]);
    // All dialed: the turn starts over from the newest.
    expect(nextSenderToDial([...strangers, client], dialed)).toEqual({ sender: strangers[0], dialed: [strangers[0]] });
  });

  test("GIVEN only the sender already dialed, or none WHEN asked THEN nobody is dialed again", () => {
    expect(nextSenderToDial([client], [client])).toBeUndefined();
    expect(nextSenderToDial([], [client])).toBeUndefined();
    expect(nextSenderToDial([client], [])).toEqual({ sender: client, dialed: [client] });
  });
});
