/**
 * Services across a peering: what a consumer asks for one Service of an offloaded namespace, and
 * what a provider refuses, the consumer's own identity attacking it (a Service type or field that
 * reaches past the remote namespace, an endpoint pointing at the provider's API server or nodes).
 */
import type { V1Endpoint, V1EndpointSlice, V1Service } from "@kubernetes/client-node";
import { Cidr } from "../../../../core/net/cidr.js";
import {
  forgeOutsideSlice,
  forgeReflectedService,
  keptClusterIP,
  refuseServiceRequest,
  serviceRequestOf,
  withTunnelDown,
  type ServiceRequest,
} from "../../../../core/offloading/service-reflection.js";

/** The consumer's pods are 10.150.0.0/16; the provider, whose own pods share that range, sees them as 10.71.0.0/16. */
const view = { real: Cidr.parse("10.150.0.0/16"), asSeen: Cidr.parse("10.71.0.0/16") };

const echo: V1Service = {
  metadata: { name: "echo", namespace: "shop" },
  spec: { clusterIP: "10.96.4.2", ports: [{ name: "http", port: 80, targetPort: 8080 }], selector: { app: "echo" } },
};
const slice: V1EndpointSlice = {
  addressType: "IPv4",
  endpoints: [
    { addresses: ["10.150.1.5"], conditions: { ready: true }, targetRef: { kind: "Pod", name: "echo-here" } },
    { addresses: ["10.150.2.9"], conditions: { ready: false }, targetRef: { kind: "Pod", name: "echo-starting" } },
    // Offloaded to this provider: shown on the consumer at an address of the provider's range.
    {
      addresses: ["10.71.3.3"],
      conditions: { ready: true },
      nodeName: "liqo-provider",
      targetRef: { kind: "Pod", name: "echo-offloaded" },
    },
  ],
};
const offloaded = (endpoint: V1Endpoint): boolean => endpoint.nodeName === "liqo-provider";

describe("a consumer's Service, as it asks a provider to hold it", () => {
  const keeps =
    "GIVEN a Service with endpoints here and on the provider WHEN asked for THEN it keeps ports and selector " +
    "and lists the ones here at their own addresses";
  test(keeps, () => {
    expect(serviceRequestOf(echo, [slice], offloaded, view.real)).toEqual({
      name: "echo",
      headless: false,
      ports: [{ name: "http", protocol: "TCP", port: 80, targetPort: 8080 }],
      selector: { app: "echo" },
      outside: [
        { address: "10.150.1.5", ready: true, podName: "echo-here" },
        { address: "10.150.2.9", ready: false, podName: "echo-starting" },
      ],
      clusterIP: "10.96.4.2",
    });
  });

  test("GIVEN ClientIP session affinity WHEN asked for THEN the request carries it and its timeout", () => {
    const sticky = {
      ...echo,
      spec: { ...echo.spec, sessionAffinity: "ClientIP", sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } },
    };
    expect(serviceRequestOf(sticky, [], offloaded, view.real)).toMatchObject({
      sessionAffinity: "ClientIP",
      sessionAffinityTimeoutSeconds: 60,
    });
  });

  const kinds =
    "GIVEN no own range yet (no tunnel), a headless Service, an ExternalName WHEN asked for THEN none lists endpoints, " +
    "headless stays headless, ExternalName is asked for as its host alone";
  test(kinds, () => {
    expect(serviceRequestOf(echo, [slice], offloaded, undefined)).toMatchObject({ outside: [] });
    const headless = { ...echo, spec: { ...echo.spec, clusterIP: "None" } };
    expect(serviceRequestOf(headless, [], offloaded, view.real)).toMatchObject({ headless: true });
    expect(serviceRequestOf(headless, [], offloaded, view.real)).not.toHaveProperty("clusterIP");
    expect(
      serviceRequestOf(
        { metadata: { name: "db" }, spec: { type: "ExternalName", externalName: "db.example" } },
        [],
        offloaded,
        view.real,
      ),
    ).toEqual({ name: "db", headless: false, ports: [], outside: [], externalName: "db.example" });
  });

  test("GIVEN the tunnel down WHEN the request is made not ready THEN every outside endpoint is", () => {
    const request = serviceRequestOf(echo, [slice], offloaded, view.real) as ServiceRequest;
    expect(withTunnelDown(request).outside.map((e) => e.ready)).toEqual([false, false]);
  });
});

describe("what a provider holds for a consumer's Service (the consumer attacking)", () => {
  const consumerPods = view.real;
  const request = serviceRequestOf(echo, [slice], offloaded, view.real) as ServiceRequest;

  const accepted =
    "GIVEN the consumer's own request WHEN checked THEN it is accepted and becomes a ClusterIP of the provider's " +
    "and a slice at the addresses its tunnel reaches";
  test(accepted, () => {
    expect(refuseServiceRequest(request, consumerPods)).toBeUndefined();
    const service = forgeReflectedService(request, "shop-b1", "b1");
    expect(service.metadata?.labels).toEqual({
      "app.kubernetes.io/managed-by": "pulumi-liqo",
      "peering.pulumi-liqo.dev/remote-cluster-id": "b1",
    });
    expect(service.spec).toEqual({
      type: "ClusterIP",
      sessionAffinity: "None",
      ports: [{ name: "http", protocol: "TCP", port: 80, targetPort: 8080 }],
      selector: { app: "echo" },
    });
    expect(forgeReflectedService(request, "shop-b1", "b1", "10.96.4.2").spec?.clusterIP).toBe("10.96.4.2");
    expect(
      forgeReflectedService({ ...request, sessionAffinity: "ClientIP" }, "shop-b1", "b1").spec?.sessionAffinityConfig,
    ).toEqual({ clientIP: { timeoutSeconds: 10_800 } });
    const outside = forgeOutsideSlice(request, "shop-b1", "b1", view);
    expect(outside.metadata?.labels).toEqual({
      "app.kubernetes.io/managed-by": "pulumi-liqo",
      "peering.pulumi-liqo.dev/remote-cluster-id": "b1",
      "kubernetes.io/service-name": "echo",
      "endpointslice.kubernetes.io/managed-by": "peering.pulumi-liqo.dev",
    });
    expect(outside.endpoints!.map((e) => [e.addresses[0], e.conditions?.ready])).toEqual([
      ["10.71.1.5", true],
      ["10.71.2.9", false],
    ]);
  });

  test.each([
    ["the provider's API server", "10.200.0.1"],
    ["a provider node", "192.168.101.1"],
    [
      "an address already in the provider's view of the consumer (used untranslated: another tenant's pod)",
      "10.71.1.5",
    ],
    ["not an address", "10.150.1.5; rm -rf /"],
  ])("GIVEN an endpoint at %s WHEN checked THEN it is refused, naming the field", (_what, address) => {
    const forged = { ...request, outside: [{ address, ready: true }] };
    expect(refuseServiceRequest(forged, consumerPods)).toMatchObject({
      reason: "EndpointOutsideConsumer",
      message: expect.stringContaining("outside[0].address") as unknown as string,
    });
  });

  test.each([
    ["type", { type: "NodePort" }, "ServiceType"],
    ["externalIPs", { externalIPs: ["10.200.0.1"] }, "ServiceType"],
    // An ExternalName carries nothing else: with a selector and ports it is no ExternalName.
    ["externalName", { externalName: "kubernetes.default" }, "Invalid"],
    ["loadBalancerIP", { loadBalancerIP: "1.2.3.4" }, "ServiceType"],
    ["something else", { sessionAffinityConfig: {} }, "Invalid"],
    ["a clusterIP that is not an address", { clusterIP: "10.96.4.2/12" }, "Invalid"],
    ["a clusterIP on a headless Service", { headless: true, clusterIP: "10.96.4.2" }, "Invalid"],
    ["an affinity Kubernetes has not", { sessionAffinity: "Cookie" }, "Invalid"],
    [
      "an affinity of more than a day",
      { sessionAffinity: "ClientIP", sessionAffinityTimeoutSeconds: 86_401 },
      "Invalid",
    ],
    ["an affinity timeout without affinity", { sessionAffinityTimeoutSeconds: 60 }, "Invalid"],
  ])("GIVEN a request with %s WHEN checked THEN it is refused", (_what, extra, reason) => {
    expect(refuseServiceRequest({ ...request, ...extra }, consumerPods)?.reason).toBe(reason);
  });

  test("GIVEN an ExternalName WHEN checked THEN a DNS name alone is accepted, anything else refused naming the field", () => {
    const external = { name: "db", headless: false, ports: [], outside: [], externalName: "db.example.com" };
    expect(refuseServiceRequest(external, undefined)).toBeUndefined();
    for (const [extra, field] of [
      [{ externalName: "db.example.com; rm -rf /" }, "externalName"],
      [{ externalName: "DB..example" }, "externalName"],
      [{ externalName: `${"a".repeat(64)}.example` }, "externalName"],
      [{ externalName: 53 }, "externalName"],
      [{ clusterIP: "10.96.0.1" }, "clusterIP"],
      [{ selector: { app: "db" } }, "selector"],
      [{ outside: [{ address: "10.71.1.5", ready: true }] }, "outside"],
      [{ ports: [{ protocol: "TCP", port: 80, targetPort: 80 }] }, "ports"],
      [{ headless: true }, "headless"],
    ] as const)
      expect(refuseServiceRequest({ ...external, ...extra }, consumerPods)).toMatchObject({
        reason: "Invalid",
        message: expect.stringContaining(field) as unknown as string,
      });
  });

  test("GIVEN a node port, a bad protocol or port, no tunnel yet WHEN checked THEN each is refused", () => {
    const port = request.ports[0]!;
    expect(refuseServiceRequest({ ...request, ports: [{ ...port, nodePort: 30080 }] }, consumerPods)?.reason).toBe(
      "ServiceType",
    );
    expect(refuseServiceRequest({ ...request, ports: [{ ...port, protocol: "ICMP" }] }, consumerPods)?.message).toBe(
      'ports[0].protocol: "ICMP" is not TCP, UDP or SCTP',
    );
    expect(refuseServiceRequest({ ...request, ports: [{ ...port, port: 70000 }] }, consumerPods)?.message).toBe(
      "ports[0].port: 70000 is not a port",
    );
    expect(refuseServiceRequest(request, undefined)?.reason).toBe("EndpointOutsideConsumer");
    expect(refuseServiceRequest({ ...request, outside: [] }, undefined)).toBeUndefined();
  });
});

describe("the address a provider gives its copy of a consumer's Service (the consumer choosing it)", () => {
  const providerServices = Cidr.parse("10.96.0.0/12");

  test("GIVEN the consumer's ClusterIP free in the provider's dynamic band WHEN kept THEN the copy gets it", () => {
    expect(keptClusterIP("10.96.4.2", providerServices)).toBe("10.96.4.2");
    expect(keptClusterIP("10.111.255.254", providerServices)).toBe("10.111.255.254");
  });

  test.each([
    ["the provider's API server (the range's first host)", "10.96.0.1"],
    ["its cluster DNS (an address admins assign by hand)", "10.96.0.10"],
    ["the last of the band kept for hand-assigned addresses", "10.96.0.255"],
    ["the range's last address", "10.111.255.255"],
    ["an address outside the provider's range", "10.201.4.2"],
    ["not an address", "10.96.4.2; rm -rf /"],
  ])("GIVEN %s WHEN asked for THEN the provider picks its own", (_what, address) => {
    expect(keptClusterIP(address, providerServices)).toBeUndefined();
  });

  test("GIVEN a small range or none recorded WHEN asked for THEN the band is at least 16 addresses, and none is kept without a range", () => {
    expect(keptClusterIP("10.96.0.15", Cidr.parse("10.96.0.0/24"))).toBeUndefined();
    expect(keptClusterIP("10.96.0.16", Cidr.parse("10.96.0.0/24"))).toBe("10.96.0.16");
    expect(keptClusterIP("10.96.4.2", undefined)).toBeUndefined();
  });
});
