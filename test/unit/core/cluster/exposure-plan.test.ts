/** Which of the agent's Services an install reads back, and what a Service's load-balancer status says (exposure-plan.ts). */
import type * as k8s from "@kubernetes/client-node";
import {
  exposedHostsOf,
  loadBalancerAddressOf,
  loadBalancerSettingsProblems,
  nodeAddressOf,
  nodePortOf,
  servicesToReadBack,
} from "../../../../core/cluster/exposure-plan.js";
import { agentDeploymentOf, askedOfDeployment, clusterEndpointsOf } from "../../../../core/cluster/install-plan.js";
import { forgeAgentDeployment } from "../../../../core/cluster/agent-deployment.js";
import { mustRecreateService } from "../../../../core/cluster/agent-workloads.js";

const service = (type: string, ingress?: k8s.V1LoadBalancerIngress[]): k8s.V1Service => ({
  spec: { type },
  ...(ingress ? { status: { loadBalancer: { ingress } } } : {}),
});

describe("servicesToReadBack", () => {
  test("GIVEN an image and no exposure WHEN planned THEN both Services are read back (LoadBalancer is the default)", () => {
    expect(servicesToReadBack({ agent: { image: "agent:1" } })).toEqual([
      { endpoint: "auth", name: "pulumi-liqo-agent", reads: "address" },
      { endpoint: "gateway", name: "pulumi-liqo-gateway", reads: "address" },
    ]);
  });

  test("GIVEN addresses given by hand, fixed node ports or hostPort, or no image WHEN planned THEN those endpoints are not read back", () => {
    expect(servicesToReadBack({ agent: { image: "agent:1" }, authService: { address: "auth.example.com" } })).toEqual([
      { endpoint: "gateway", name: "pulumi-liqo-gateway", reads: "address" },
    ]);
    expect(
      servicesToReadBack({
        agent: { image: "agent:1", exposure: "NodePort", nodePort: 8443 },
        gateway: { exposure: "hostPort" },
      }),
    ).toEqual([]);
    expect(servicesToReadBack({ agent: { exposure: "LoadBalancer" } })).toEqual([]);
  });

  test("GIVEN NodePort with no port fixed WHEN planned THEN its node port is read back, an address given by hand or not", () => {
    expect(
      servicesToReadBack({
        agent: { image: "agent:1", exposure: "NodePort" },
        gateway: { exposure: "NodePort", address: "gw.example.com" },
      }),
    ).toEqual([
      { endpoint: "auth", name: "pulumi-liqo-agent", reads: "nodePort" },
      { endpoint: "gateway", name: "pulumi-liqo-gateway", reads: "nodePort" },
    ]);
  });

  test("GIVEN node ports and nodes WHEN read THEN the picked port, and a Ready node's external address or none", () => {
    expect(nodePortOf({ spec: { type: "NodePort", ports: [{ port: 8443, nodePort: 31443 }] } })).toEqual({
      port: 31443,
    });
    expect(nodePortOf({ spec: { type: "ClusterIP", ports: [{ port: 8443 }] } })).toEqual({
      missing: "no node port in spec.ports (the Service is of type ClusterIP)",
    });
    const node = (ready: string, addresses: k8s.V1NodeAddress[]): k8s.V1Node => ({
      status: { conditions: [{ type: "Ready", status: ready }], addresses },
    });
    const internal = { type: "InternalIP", address: "10.0.0.5" };
    expect(nodeAddressOf([node("True", [internal])])).toBeUndefined();
    expect(
      nodeAddressOf([
        node("False", [{ type: "ExternalIP", address: "198.51.100.1" }]),
        node("True", [internal, { type: "ExternalIP", address: "198.51.100.2" }]),
      ]),
    ).toBe("198.51.100.2");
    expect(
      clusterEndpointsOf({ agent: { exposure: "NodePort" } }, "https://10.0.0.1:6443", {
        authPort: 31443,
        gatewayPort: 30820,
      }),
    ).toMatchObject({ authUrl: "https://10.0.0.1:31443", gatewayEndpoint: "10.0.0.1:30820" });
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

describe("a cloud's load-balancer settings on the agent's Services", () => {
  const nlb = { "service.beta.kubernetes.io/aws-load-balancer-type": "nlb" };
  const asked = {
    agent: { image: "agent:1", annotations: nlb, loadBalancerClass: "example.com/internal" },
    gateway: { loadBalancerSourceRanges: ["203.0.113.0/24", "2001:db8::/32"] },
  };
  const services = (request: Parameters<typeof agentDeploymentOf>[0]) =>
    forgeAgentDeployment(agentDeploymentOf(request, "agent:1")).filter(
      (object): object is k8s.V1Service => object.kind === "Service",
    );

  test("GIVEN annotations, a class and source ranges WHEN forged THEN each Service carries its own, and an import reads class and ranges back", () => {
    const [auth, gateway] = services(asked);
    expect(auth!.metadata!.annotations).toEqual(nlb);
    expect(auth!.spec).toMatchObject({ type: "LoadBalancer", loadBalancerClass: "example.com/internal" });
    expect(auth!.spec!.loadBalancerSourceRanges).toBeUndefined();
    expect(gateway!.metadata!.annotations).toBeUndefined();
    expect(gateway!.spec!.loadBalancerSourceRanges).toEqual(["203.0.113.0/24", "2001:db8::/32"]);
    const objects = forgeAgentDeployment(agentDeploymentOf(asked, "agent:1"));
    const [control, gatewayPods] = objects.filter((object) => object.kind === "Deployment") as k8s.V1Deployment[];
    const read = askedOfDeployment({ control, gateway: gatewayPods, authService: auth!, gatewayService: gateway! });
    expect(read).toEqual({
      agent: { image: "agent:1", loadBalancerClass: "example.com/internal" },
      gateway: { loadBalancerSourceRanges: ["203.0.113.0/24", "2001:db8::/32"] },
    });
  });

  test("GIVEN a NodePort Service WHEN forged THEN it carries the annotations and no class or ranges", () => {
    const [auth] = services({ agent: { ...asked.agent, exposure: "NodePort" } });
    expect(auth!.metadata!.annotations).toEqual(nlb);
    expect(auth!.spec!.loadBalancerClass).toBeUndefined();
  });

  test.each([
    [{ annotations: { "bad key!": "x" } }, "LoadBalancer", "annotations"],
    [{ loadBalancerClass: "internal" }, "LoadBalancer", "loadBalancerClass"],
    [{ loadBalancerSourceRanges: ["203.0.113.0"] }, "LoadBalancer", "loadBalancerSourceRanges"],
    [{ loadBalancerSourceRanges: ["10.0.0.0/33"] }, "LoadBalancer", "loadBalancerSourceRanges"],
    [{ loadBalancerClass: "example.com/x" }, "NodePort", "loadBalancerClass"],
    [{ loadBalancerSourceRanges: ["10.0.0.0/8"] }, "hostPort", "loadBalancerSourceRanges"],
  ] as const)("GIVEN %j under %s WHEN checked THEN %s is named", (settings, exposure, field) => {
    expect(loadBalancerSettingsProblems(settings, exposure).map((problem) => problem.field)).toEqual([field]);
  });

  test("GIVEN good settings WHEN checked THEN nothing is said", () => {
    expect(loadBalancerSettingsProblems({ ...asked.agent, ...asked.gateway }, "LoadBalancer")).toEqual([]);
    expect(loadBalancerSettingsProblems({ annotations: nlb }, "NodePort")).toEqual([]);
  });

  test("GIVEN a Service whose class changes WHEN applied again THEN it is made anew; the same class, or a first apply, is not", () => {
    const [classed] = services(asked);
    const [plain] = services({ agent: { image: "agent:1" } });
    expect(mustRecreateService(plain, classed!)).toBe(true);
    expect(mustRecreateService(classed, plain!)).toBe(true);
    expect(mustRecreateService(classed, classed!)).toBe(false);
    expect(mustRecreateService(undefined, classed!)).toBe(false);
  });
});
