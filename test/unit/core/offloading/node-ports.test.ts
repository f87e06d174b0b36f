/** The node ports a virtual node answers: which Services' ports, and where each leads. */
import type * as k8s from "@kubernetes/client-node";
import { forwardKey, nodePortForwards } from "../../../../core/offloading/node-ports.js";

const service = (name: string, spec: k8s.V1ServiceSpec, namespace = "shop"): k8s.V1Service => ({
  metadata: { name, namespace },
  spec,
});

describe("nodePortForwards", () => {
  test("GIVEN NodePort and LoadBalancer Services WHEN read THEN each TCP and UDP node port leads to its Service's cluster IP and port", () => {
    const forwards = nodePortForwards([
      service("web", {
        type: "NodePort",
        clusterIP: "10.96.0.10",
        ports: [
          { port: 80, nodePort: 30080 },
          { port: 53, protocol: "UDP", nodePort: 30053 },
        ],
      }),
      service("lb", { type: "LoadBalancer", clusterIP: "10.96.0.11", ports: [{ port: 443, nodePort: 30443 }] }),
    ]);

    expect(forwards).toEqual([
      { nodePort: 30443, protocol: "TCP", target: { host: "10.96.0.11", port: 443 }, service: "shop/lb" },
      { nodePort: 30080, protocol: "TCP", target: { host: "10.96.0.10", port: 80 }, service: "shop/web" },
      { nodePort: 30053, protocol: "UDP", target: { host: "10.96.0.10", port: 53 }, service: "shop/web" },
    ]);
    expect(forwards.map(forwardKey)).toEqual(["TCP/30443", "TCP/30080", "UDP/30053"]);
  });

  test("GIVEN Services with no node port, no cluster IP, SCTP, or a port claimed twice WHEN read THEN those go unanswered; the first by name keeps it", () => {
    const forwards = nodePortForwards([
      service("plain", { type: "ClusterIP", clusterIP: "10.96.0.12", ports: [{ port: 80 }] }),
      service("headless", { type: "NodePort", clusterIP: "None", ports: [{ port: 80, nodePort: 30081 }] }),
      service("sctp", {
        type: "NodePort",
        clusterIP: "10.96.0.13",
        ports: [{ port: 9, protocol: "SCTP", nodePort: 30009 }],
      }),
      service("external", {
        type: "ExternalName",
        externalName: "example.org",
        ports: [{ port: 80, nodePort: 30082 }],
      }),
      service("b-second", { type: "NodePort", clusterIP: "10.96.0.15", ports: [{ port: 81, nodePort: 30090 }] }),
      service("a-first", { type: "NodePort", clusterIP: "10.96.0.14", ports: [{ port: 80, nodePort: 30090 }] }),
    ]);

    expect(forwards).toEqual([
      { nodePort: 30090, protocol: "TCP", target: { host: "10.96.0.14", port: 80 }, service: "shop/a-first" },
    ]);
  });
});
