/** Which of the agent's Services an install reads back, and what a Service's load-balancer status says (exposure-plan.ts). */
import type * as k8s from "@kubernetes/client-node";
import { exposedHostsOf, loadBalancerAddressOf, servicesToReadBack } from "../../../../core/cluster/exposure-plan.js";
import { clusterEndpointsOf } from "../../../../core/cluster/install-plan.js";

const service = (type: string, ingress?: k8s.V1LoadBalancerIngress[]): k8s.V1Service => ({
  spec: { type },
  ...(ingress ? { status: { loadBalancer: { ingress } } } : {}),
});

describe("servicesToReadBack", () => {
  test("GIVEN an image and no exposure WHEN planned THEN both Services are read back (LoadBalancer is the default)", () => {
    expect(servicesToReadBack({ agent: { image: "agent:1" } })).toEqual([
      { endpoint: "auth", name: "pulumi-liqo-agent" },
      { endpoint: "gateway", name: "pulumi-liqo-gateway" },
    ]);
  });

  test("GIVEN addresses given by hand, NodePort or hostPort, or no image WHEN planned THEN those endpoints are not read back", () => {
    expect(servicesToReadBack({ agent: { image: "agent:1" }, authService: { address: "auth.example.com" } })).toEqual([
      { endpoint: "gateway", name: "pulumi-liqo-gateway" },
    ]);
    expect(
      servicesToReadBack({ agent: { image: "agent:1", exposure: "NodePort" }, gateway: { exposure: "hostPort" } }),
    ).toEqual([]);
    expect(servicesToReadBack({ agent: { exposure: "LoadBalancer" } })).toEqual([]);
  });
});

describe("loadBalancerAddressOf", () => {
  test("GIVEN an ingress with an IP or only a host name WHEN read THEN that address", () => {
    expect(loadBalancerAddressOf(service("LoadBalancer", [{ ip: "203.0.113.7" }]))).toEqual({ address: "203.0.113.7" });
    expect(loadBalancerAddressOf(service("LoadBalancer", [{ hostname: "a1.elb.example.com" }]))).toEqual({
      address: "a1.elb.example.com",
    });
  });

  test("GIVEN a pending load balancer, another type or no Service WHEN read THEN what is missing, naming the field", () => {
    expect(loadBalancerAddressOf(service("LoadBalancer"))).toEqual({
      missing: expect.stringContaining("no address in status.loadBalancer.ingress (EXTERNAL-IP <pending>)"),
    });
    expect(loadBalancerAddressOf(service("LoadBalancer", [{}]))).toEqual({ missing: expect.any(String) });
    expect(loadBalancerAddressOf(service("NodePort"))).toEqual({ missing: "the Service is of type NodePort" });
    expect(loadBalancerAddressOf(undefined)).toEqual({ missing: "the Service does not exist" });
  });

  test("GIVEN the agent's Services as deployed WHEN their hosts are taken THEN only those with an address count", () => {
    const services = servicesToReadBack({ agent: { image: "agent:1" } });
    expect(
      exposedHostsOf(services, {
        authService: service("LoadBalancer", [{ ip: "203.0.113.7" }]),
        gatewayService: service("LoadBalancer"),
      }),
    ).toEqual({ auth: "203.0.113.7" });
  });
});

describe("clusterEndpointsOf with load-balancer addresses", () => {
  const server = "https://10.0.0.1:6443";

  test("GIVEN addresses read back WHEN resolved THEN the endpoints are at them, on the Services' own ports", () => {
    expect(
      clusterEndpointsOf({ agent: { image: "agent:1" }, gateway: { port: 51830 } }, server, {
        auth: "auth.lb.example.com",
        gateway: "203.0.113.8",
      }),
    ).toEqual({
      apiServerUrl: server,
      authHost: "auth.lb.example.com",
      authUrl: "https://auth.lb.example.com:8443",
      gatewayEndpoint: "203.0.113.8:51830",
    });
  });

  test("GIVEN an address given by hand WHEN a load balancer's is read back too THEN the one given wins", () => {
    const endpoints = clusterEndpointsOf(
      { agent: { image: "agent:1" }, authService: { address: "peer.example.com" } },
      server,
      { auth: "203.0.113.7" },
    );
    expect(endpoints.authUrl).toBe("https://peer.example.com:8443");
  });
});
