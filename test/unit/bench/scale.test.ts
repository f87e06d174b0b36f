/** The scale section's pure parts: the provider's nodes, the consumers' names, the API server's request counts. */
import { COUNTING_FLOW_SCHEMA, dispatchedRequests, forgeCountingFlowSchema } from "../../../bench/api-requests.js";
import { consumerNames, providerNodesFor } from "../../../bench/scale.js";

describe("scale section", () => {
  test("GIVEN the pods asked for THEN the provider gets the plain cluster up to kubelet's 110, else nodes of 250 enough for them", () => {
    expect(providerNodesFor(3)).toEqual({ name: "a" });
    expect(providerNodesFor(100)).toEqual({ name: "a" });
    expect(providerNodesFor(101)).toEqual({ name: "a", nodes: 1, maxPods: 250 });
    expect(providerNodesFor(500)).toEqual({ name: "a", nodes: 3, maxPods: 250 });
    expect(providerNodesFor(1000)).toEqual({ name: "a", nodes: 5, maxPods: 250 });
  });

  test("GIVEN a number of consumers THEN they are named from b on", () => {
    expect(consumerNames(1)).toEqual(["b"]);
    expect(consumerNames(10)).toEqual(["b", "c", "d", "e", "f", "g", "h", "i", "j", "k"]);
  });
});

describe("API requests counted by the API server", () => {
  test("GIVEN the FlowSchema THEN it takes the agent's service account and the consumers' users ahead of the built-in schemas", () => {
    const schema = forgeCountingFlowSchema(["pulumi-liqo:consumer:0123456789abcdef"]);
    expect(schema.spec!.matchingPrecedence).toBeLessThan(200);
    expect(schema.spec!.rules![0]!.subjects).toEqual([
      { kind: "ServiceAccount", serviceAccount: { name: "pulumi-liqo-agent", namespace: "pulumi-liqo-system" } },
      { kind: "User", user: { name: "pulumi-liqo:consumer:0123456789abcdef" } },
    ]);
  });

  test("GIVEN the server's metrics THEN the requests dispatched for the schema are summed over priority levels, others left out", () => {
    const metrics = [
      "# HELP apiserver_flowcontrol_dispatched_requests_total [BETA] Number of requests executed by API Priority and Fairness subsystem",
      `apiserver_flowcontrol_dispatched_requests_total{flow_schema="${COUNTING_FLOW_SCHEMA}",priority_level="workload-low"} 120`,
      `apiserver_flowcontrol_dispatched_requests_total{flow_schema="${COUNTING_FLOW_SCHEMA}",priority_level="exempt"} 3`,
      'apiserver_flowcontrol_dispatched_requests_total{flow_schema="service-accounts",priority_level="workload-low"} 999',
      `apiserver_flowcontrol_current_executing_requests{flow_schema="${COUNTING_FLOW_SCHEMA}",priority_level="workload-low"} 7`,
      "",
    ].join("\n");
    expect(dispatchedRequests(metrics, COUNTING_FLOW_SCHEMA)).toBe(123);
    expect(dispatchedRequests("", COUNTING_FLOW_SCHEMA)).toBe(0);
  });
});
