/** Endpoints another cluster announces: what is dialed, and what is refused without being quoted. */
import { joinHostPort, readAnnouncedEndpoint, unreachableAddressReason } from "../../../../core/net/endpoint.js";

describe("an endpoint another cluster announces", () => {
  test.each([
    ["203.0.113.7:51820", { host: "203.0.113.7", port: 51820 }],
    ["gw.example.com:4500", { host: "gw.example.com", port: 4500 }],
    ["a1b2.elb.eu-west-1.amazonaws.com.:51820", { host: "a1b2.elb.eu-west-1.amazonaws.com.", port: 51820 }],
    ["[2001:db8::7]:51820", { host: "2001:db8::7", port: 51820 }],
  ])("GIVEN %s WHEN read THEN it is the endpoint dialed", (text, endpoint) => {
    expect(readAnnouncedEndpoint(text)).toEqual({ endpoint });
  });

  test.each([
    [undefined, "it is not text"],
    [51820, "it is not text"],
    ["", "it is not host:port (an IPv6 address in brackets)"],
    ["203.0.113.7", "it is not host:port (an IPv6 address in brackets)"],
    ["2001:db8::7:51820", "it is not host:port (an IPv6 address in brackets)"],
    ["gw.example.com:51820\nx", "it is not host:port (an IPv6 address in brackets)"],
    ["gw.example.com:51820/path", "it is not host:port (an IPv6 address in brackets)"],
    ["user@gw.example.com:51820", "its host is neither an IP address nor a DNS name"],
    ["-gw.example.com:51820", "its host is neither an IP address nor a DNS name"],
    ["[203.0.113.7]:51820", "its host is neither an IP address nor a DNS name"],
    ["gw.example.com:0", "its port is not 1-65535"],
    ["gw.example.com:65536", "its port is not 1-65535"],
    ["gw.example.com:999999", "it is not host:port (an IPv6 address in brackets)"],
    ["127.0.0.1:51820", "it is a loopback address"],
    ["0.0.0.0:51820", "it is an unspecified (0.0.0.0/8) address"],
    ["169.254.12.1:51820", "it is a link-local address"],
    ["224.0.0.1:51820", "it is a multicast or reserved address"],
    ["[::1]:51820", "it is the unspecified or loopback address"],
    ["[fe80::1]:51820", "it is a link-local address"],
    ["localhost:51820", "it names this machine"],
    [`${"a".repeat(300)}:51820`, "it is longer than 262 characters"],
  ])("GIVEN %j WHEN read THEN it is refused (%s), quoting nothing of it", (text, refused) => {
    const read = readAnnouncedEndpoint(text);
    expect(read).toEqual({ refused });
    if (typeof text === "string" && text !== "") expect(refused).not.toContain(text);
  });

  test("GIVEN a DNS name WHEN judged as an address THEN it is left to whoever resolves it", () => {
    expect(unreachableAddressReason("gw.example.com")).toBeUndefined();
    expect(unreachableAddressReason("10.0.0.1")).toBeUndefined();
  });

  test("GIVEN hosts WHEN joined with a port THEN IPv6 is bracketed once", () => {
    expect(joinHostPort("10.0.0.1", 1)).toBe("10.0.0.1:1");
    expect(joinHostPort("2001:db8::1", 51820)).toBe("[2001:db8::1]:51820");
    expect(joinHostPort("[2001:db8::1]", 51820)).toBe("[2001:db8::1]:51820");
  });
});
